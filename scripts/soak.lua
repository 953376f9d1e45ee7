-- soak.lua - wrk script for scripts/soak.sh: a bounded, mixed load on one namespace.
-- Per 200 requests of a connection-thread: 1 compaction with purge down to SOAK_KEEP
-- segments, ~70 inserts of new segments (unique ids, 64-dim vectors, some text), the
-- rest retrieves with decay and coherence. The purge keeps the data bounded, so resident
-- memory must level off after warm-up. done() prints one SOAKJSON line.
local ns = os.getenv("SOAK_NS") or "soak"
local keep = tonumber(os.getenv("SOAK_KEEP") or "3000")
local dim = 64
-- SOAK_MIX=read: retrieves and dry-run compactions only (no data growth at all)
local readonly = os.getenv("SOAK_MIX") == "read"
local threads = {}
local counter, tid = 0, 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(1000 + (tid or 0))
end

local function vec()
  local t = {}
  for i = 1, dim do t[i] = string.format("%.4f", math.random() * 2 - 1) end
  return "[" .. table.concat(t, ",") .. "]"
end

request = function()
  counter = counter + 1
  local m = counter % 200
  if m == 0 then
    return wrk.format("POST", "/v1/namespaces/" .. ns .. "/compact",
      {["Content-Type"] = "application/json"},
      string.format('{"target":%d,"purge":%s,"dry_run":%s}', keep, readonly and "false" or "true",
        readonly and "true" or "false"))
  elseif m % 3 == 0 and not readonly then
    local body = string.format('{"id":"t%d-%d","embedding":%s,"source":"soak"%s}', tid, counter, vec(),
      (counter % 2 == 0) and ',"text":"soak memory number ' .. counter .. '"' or "")
    return wrk.format("POST", "/v1/namespaces/" .. ns .. "/segments",
      {["Content-Type"] = "application/json"}, body)
  else
    local body = string.format('{"embedding":%s,"k":10,"half_life":"1h","coherence_weight":0.2%s}', vec(),
      (counter % 5 == 0) and ',"explain":true' or "")
    return wrk.format("POST", "/v1/namespaces/" .. ns .. "/retrieve",
      {["Content-Type"] = "application/json"}, body)
  end
end

local bad = 0
response = function(status, headers, body)
  if status >= 300 then
    bad = bad + 1
    if bad <= 3 then io.stderr:write("soak: status " .. status .. ": " .. body:sub(1, 200) .. "\n") end
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'SOAKJSON {"requests":%d,"seconds":%.1f,"rps":%.1f,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))
end
