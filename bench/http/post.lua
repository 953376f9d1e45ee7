-- post.lua - wrk script: POST bodies read from files, round-robin, optional mix.
-- Env: MNEMOD_BODIES=file1,file2  MNEMOD_PATHS=/p1,/p2  MNEMOD_WEIGHTS=90,10
-- A body file named "random:DIM" is replaced by a fresh random embedding of DIM floats at
-- every request, so inserted segments are distinct (identical vectors would make every new
-- segment a graph neighbour of every stored one, which is no real workload). "parts:DIM" does
-- the same without formatting DIM numbers per request (which costs the client more CPU than
-- the server spends on an insert): each body joins three thirds drawn from three tables of
-- 64 random thirds made once, so 262144 distinct vectors come from a few string joins.
-- MNEMOD_TOOK_FILE=PATH: every response's "took_ms" (the server's own time for the request)
-- is written, one per line, to PATH.N for wrk thread N, so the server's time and the round
-- trip come from the same requests of the same C client. Unset, wrk never reads the bodies.
local bodies, paths, weights, total = {}, {}, {}, 0
local function split(s)
  local t = {}
  for x in string.gmatch(s or "", "[^,]+") do t[#t + 1] = x end
  return t
end
local files = split(os.getenv("MNEMOD_BODIES"))
local ps = split(os.getenv("MNEMOD_PATHS"))
local ws = split(os.getenv("MNEMOD_WEIGHTS"))
local function random_body(dim)
  local t = {}
  for d = 1, dim do t[d] = string.format("%.4f", math.random() * 2 - 1) end
  return '{"embedding":[' .. table.concat(t, ",") .. '],"text":"bench memory"}'
end
local function parts_table(dim)
  local thirds = {}
  for t = 1, 3 do
    local n = math.floor(dim / 3) + ((t <= dim % 3) and 1 or 0)
    thirds[t] = {}
    for k = 1, 64 do
      local v = {}
      for d = 1, n do v[d] = string.format("%.4f", math.random() * 2 - 1) end
      thirds[t][k] = table.concat(v, ",")
    end
  end
  return thirds
end
local function parts_body(thirds)
  return '{"embedding":[' .. thirds[1][math.random(64)] .. "," .. thirds[2][math.random(64)] ..
         "," .. thirds[3][math.random(64)] .. '],"text":"bench memory"}'
end
for i, f in ipairs(files) do
  local dim = string.match(f, "^random:(%d+)$")
  local pdim = string.match(f, "^parts:(%d+)$")
  if dim then
    bodies[i] = tonumber(dim)
  elseif pdim then
    bodies[i] = {parts = tonumber(pdim)}
  else
    local h = assert(io.open(f, "rb"))
    bodies[i] = h:read("*a")
    h:close()
  end
  paths[i] = ps[i] or ps[1]
  weights[i] = tonumber(ws[i] or "1")
  total = total + weights[i]
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local counter = 0
local n_threads = 0
setup = function(thread) -- runs in the main state: each thread its own seed
  n_threads = n_threads + 1
  thread:set("tid", n_threads)
end
local formatted = {} -- a file's request, formatted once: wrk sends these bytes as they are
init = function(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + 7919 * (tid or 0))
  for i = 1, #bodies do
    if type(bodies[i]) == "table" then bodies[i].thirds = parts_table(bodies[i].parts) end
    if type(bodies[i]) == "string" then formatted[i] = wrk.format("POST", paths[i], nil, bodies[i]) end
  end
end
request = function()
  counter = counter + 1
  local pick = counter % total
  local acc = 0
  for i = 1, #bodies do
    acc = acc + weights[i]
    if pick < acc then
      if formatted[i] then return formatted[i] end
      local b = bodies[i]
      if type(b) == "number" then b = random_body(b) end
      if type(b) == "table" then b = parts_body(b.thirds) end
      return wrk.format("POST", paths[i], nil, b)
    end
  end
  return wrk.format("POST", paths[1], nil, bodies[1])
end
local took_path = os.getenv("MNEMOD_TOOK_FILE")
if took_path then
  local took_out
  response = function(status, headers, body)
    if not took_out then took_out = assert(io.open(took_path .. "." .. (tid or 0), "w")) end
    local t = string.match(body or "", '"took_ms":([-+%d.eE]+)')
    if t then took_out:write(t, "\n") end
  end
end
done = function(summary, latency, requests)
  local errs = summary.errors.connect + summary.errors.read + summary.errors.write +
               summary.errors.status + summary.errors.timeout
  io.write(string.format(
    "WRKJSON {\"requests\":%d,\"seconds\":%.3f,\"rps\":%.1f,\"p50_us\":%d,\"p99_us\":%d,\"mean_us\":%.1f,\"errors\":%d,\"status_errors\":%d}\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency.mean, errs, summary.errors.status))
end
