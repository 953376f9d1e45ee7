// app.js - the console: namespaces and their stats, a search with the scoring knobs and
// the parts of each score, the decay curve of the search, and a paginated segment browser
// whose rows can be edited (metadata, source) or forgotten.
// Every request goes through api.js; server data is only ever put in the page as text.

import { api, ApiError, getKey, setKey } from "./api.js";
import { drawDecay } from "./plot.js";

const $ = (id) => document.getElementById(id);
const DAY = 86400;
const HL_MIN_DAYS = 1 / 24;  // the half-life slider runs from one hour ...
const HL_MAX_DAYS = 3650;    // ... to ten years, on a log scale (position 0: off)

const state = { ns: null, namespaces: [], searchSeq: 0, cursors: [null], page: 0, timer: 0 };

// ------------------------------------------------------------------ small helpers

function td(text, cls) {
  const c = document.createElement("td");
  c.textContent = text === undefined || text === null ? "–" : String(text);
  if (cls) c.className = cls;
  return c;
}

function num(x, digits = 4) {
  return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : undefined;
}

function age(s) {
  if (typeof s !== "number") return undefined;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 2 * DAY) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / DAY).toFixed(1)} d`;
}

function when(ts) {
  return ts ? ts.replace("T", " ").replace(/\.\d{3}Z$/, "Z") : undefined;
}

function showStatus(text, isError = true) {
  const s = $("status");
  s.textContent = text || "";
  s.hidden = !text;
  s.className = isError ? "error" : "";
}

function showError(e) {
  showStatus(e instanceof ApiError ? `${e.status} ${e.code}: ${e.serverMessage}` : String(e));
}

/** A datetime-local value (no zone) read as UTC: RFC 3339 with a Z, or undefined. */
function utc(input) {
  const v = input.value;
  if (!v) return undefined;
  return (v.length === 16 ? `${v}:00` : v) + "Z";
}

// ------------------------------------------------------------------ the key

let keyWaiters = [];

function askKey(message) {
  const dlg = $("key-dialog");
  $("key-error").textContent = message || "";
  $("key-error").hidden = !message;
  $("key-input").value = "";
  if (!dlg.open) dlg.showModal();
  $("key-input").focus();
  return new Promise((resolve) => keyWaiters.push(resolve));
}

$("key-dialog").addEventListener("close", () => {
  const choice = $("key-dialog").returnValue;
  if (choice === "save") setKey($("key-input").value.trim());
  if (choice === "clear") setKey("");
  updateKeyButton();
  const waiters = keyWaiters;
  keyWaiters = [];
  for (const w of waiters) w(choice === "save");
});

function updateKeyButton() {
  $("key-button").textContent = getKey() ? "API key ✓" : "API key";
}

/** Run call(); when the server wants a key (401) ask for one and try again. */
async function withKey(call) {
  for (let tries = 0; ; tries++) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401 || tries >= 3) throw e;
      const ok = await askKey(getKey() ? "That key was refused." : "");
      if (!ok) throw e;
    }
  }
}

// ------------------------------------------------------------------ namespaces

async function loadNamespaces() {
  try {
    state.namespaces = await withKey(() => api.listNamespaces());
    showStatus("");
  } catch (e) {
    showError(e);
    return;
  }
  renderNamespaces();
  const wanted = new URLSearchParams(location.hash.slice(1)).get("ns");
  const pick = [state.ns, wanted].find((x) => x && state.namespaces.some((n) => n.name === x));
  if (pick) await selectNamespace(pick);
  else if (state.namespaces.length === 1) await selectNamespace(state.namespaces[0].name);
}

function renderNamespaces() {
  const list = $("ns-list");
  list.replaceChildren();
  for (const n of state.namespaces) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.ns = n.name;
    const name = document.createElement("span");
    name.textContent = n.name;
    const count = document.createElement("span");
    count.className = "muted";
    count.textContent = `${n.count} · dim ${n.dim}`;
    b.append(name, count);
    b.addEventListener("click", () => selectNamespace(n.name));
    if (n.name === state.ns) b.classList.add("active");
    li.append(b);
    list.append(li);
  }
  if (!state.namespaces.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "no namespaces yet";
    list.append(li);
  }
}

function renderStats(s) {
  const dl = $("ns-stats");
  dl.replaceChildren();
  for (const [k, v] of Object.entries(s)) {
    const dt = document.createElement("dt");
    dt.textContent = k.replace(/_/g, " ");
    const dd = document.createElement("dd");
    dd.textContent = v === null ? "–" : typeof v === "object" ? JSON.stringify(v) : String(v);
    dd.dataset.stat = k;
    dl.append(dt, dd);
  }
}

// After a change to the namespace's segments: its count in the list and its statistics
// again, without leaving the page being browsed. Resolves to false (the error shown) when
// either could not be read; statistics that arrive after another namespace was chosen are
// not drawn.
async function refreshFigures() {
  const ns = state.ns;
  const [list, stats] = await Promise.allSettled([
    withKey(() => api.listNamespaces()), withKey(() => api.getNamespace(ns))]);
  if (list.status === "fulfilled") {
    state.namespaces = list.value;
    renderNamespaces();
  }
  if (stats.status === "fulfilled" && ns === state.ns) renderStats(stats.value);
  const failed = [list, stats].find((r) => r.status === "rejected");
  if (failed) showError(failed.reason);
  return !failed;
}

async function selectNamespace(name) {
  state.ns = name;
  history.replaceState(null, "", `#ns=${encodeURIComponent(name)}`);
  for (const b of document.querySelectorAll("#ns-list button")) {
    b.classList.toggle("active", b.dataset.ns === name);
  }
  $("ns-stats").replaceChildren();
  try {
    renderStats(await withKey(() => api.getNamespace(name)));
  } catch (e) {
    showError(e);
  }
  state.cursors = [null];
  state.page = 0;
  if (!$("panel-browse").hidden) loadPage();
  if ($("q").value.trim()) search();
}

// ------------------------------------------------------------------ search

function halfLifeDays() {
  const p = Number($("half-life").value);
  if (p <= 0) return 0;
  const lo = Math.log10(HL_MIN_DAYS), hi = Math.log10(HL_MAX_DAYS);
  return 10 ** (lo + ((p - 1) / 99) * (hi - lo));
}

function fmtHalfLife(d) {
  if (!d) return "off";
  return d < 2 ? `${(d * 24).toFixed(1)} h` : `${d.toFixed(d < 20 ? 1 : 0)} d`;
}

function updateOutputs() {
  $("half-life-out").textContent = fmtHalfLife(halfLifeDays());
  $("recency-bias-out").textContent = Number($("recency-bias").value).toFixed(2);
  $("coherence-weight-out").textContent = Number($("coherence-weight").value).toFixed(2);
  $("shape-label").hidden = $("decay").value !== "weibull";
}

/** The retrieve request the controls describe (the UI is the source of every value). */
function searchRequest() {
  const hlDays = halfLifeDays();
  const kind = $("decay").value;
  const req = {
    query: $("q").value.trim(),
    k: Number($("k").value) || 10,
    half_life: Math.round(hlDays * DAY),
    recency_bias: Number($("recency-bias").value),
    coherence_weight: Number($("coherence-weight").value),
    decay: kind === "weibull" ? { weibull: { shape: Number($("shape").value) } } : kind,
    explain: true,
  };
  if ($("match").value) req.match = $("match").value;
  const asOf = utc($("as-of"));
  if (asOf) req.as_of = asOf;
  if ($("source").value.trim()) req.source = $("source").value.trim();
  if ($("include-superseded").checked) req.include_superseded = true;
  if ($("include-archived").checked) req.include_archived = true;
  const f = $("filter").value.trim();
  if (f) {
    try {
      req.filter = JSON.parse(f);
    } catch {
      throw new Error("metadata filter: not valid JSON");
    }
  }
  return req;
}

async function search() {
  if (!state.ns) {
    showStatus("pick a namespace first");
    return;
  }
  let req;
  try {
    req = searchRequest();
  } catch (e) {
    showError(e.message);
    return;
  }
  if (!req.query) return;
  const seq = ++state.searchSeq;
  let res;
  try {
    res = await withKey(() => api.retrieve(state.ns, req));
  } catch (e) {
    if (seq === state.searchSeq) showError(e);
    return;
  }
  if (seq !== state.searchSeq) return; // a newer search has been sent meanwhile
  showStatus("");
  renderResults(req, res);
}

function renderResults(req, res) {
  const body = $("results").tBodies[0];
  body.replaceChildren();
  const hasParts = res.results.some((r) => r.text_score !== undefined || r.vector_score !== undefined);
  $("results").classList.toggle("with-parts", hasParts);
  res.results.forEach((r, i) => {
    const tr = document.createElement("tr");
    tr.dataset.id = r.id;
    const score = td(num(r.score), "num score");
    const bar = document.createElement("span");
    bar.className = "bar";
    bar.style.width = `${Math.max(0, Math.min(1, r.score)) * 100}%`;
    score.prepend(bar);
    tr.append(td(i + 1, "num"), score, td(num(r.similarity), "num"), td(num(r.decay), "num"),
      td(num(r.gate), "num"), td(age(r.age_seconds), "num"), td(num(r.text_score), "num opt"),
      td(num(r.vector_score), "num opt"), td(r.id, "id"), td(r.text, "text"));
    tr.title = [when(r.timestamp), r.source && `source ${r.source}`,
      r.metadata && JSON.stringify(r.metadata)].filter(Boolean).join(" · ");
    body.append(tr);
  });
  $("search-summary").textContent =
    `${res.results.length} results · ${res.scanned} scanned · ${res.took_ms} ms · ${res.kernel}`;
  const kind = typeof req.decay === "object" ? "weibull" : req.decay;
  const params = { kind, halfLifeS: req.half_life, recencyBias: req.recency_bias,
    shape: typeof req.decay === "object" ? req.decay.weibull.shape : 1.5 };
  drawDecay($("decay-plot"), params, res.results);
  $("plot-caption").textContent = req.half_life > 0
    ? `${kind} decay, half-life ${fmtHalfLife(req.half_life / DAY)}, recency bias ` +
      `${req.recency_bias.toFixed(2)}${req.as_of ? `, as of ${req.as_of}` : ", from now"}`
    : "no decay (half-life off): plain similarity";
}

function searchSoon() {
  updateOutputs();
  clearTimeout(state.timer);
  if ($("q").value.trim()) state.timer = setTimeout(search, 150);
}

// ------------------------------------------------------------------ browse

// Resolves to false when the page could not be read (the error shown).
async function loadPage() {
  if (!state.ns) return false;
  const params = {
    limit: $("b-limit").value,
    after: state.cursors[state.page] || undefined,
    since: utc($("b-since")),
    until: utc($("b-until")),
    source: $("b-source").value.trim() || undefined,
    include_superseded: $("b-superseded").checked,
    include_archived: $("b-archived").checked,
  };
  let page;
  try {
    page = await withKey(() => api.listSegments(state.ns, params));
  } catch (e) {
    showError(e);
    return false;
  }
  showStatus("");
  const body = $("segments").tBodies[0];
  body.replaceChildren();
  for (const s of page.segments) {
    const tr = document.createElement("tr");
    tr.dataset.id = s.id;
    const flags = [s.superseded_by && "superseded", s.archived && "archived"].filter(Boolean);
    tr.append(td(s.seq, "num"), td(s.id, "id"), td(when(s.timestamp)), td(s.source),
      td(flags.join(", ") || undefined), td(s.metadata && JSON.stringify(s.metadata), "meta"),
      td(s.text, "text"));
    const act = document.createElement("td");
    const eb = document.createElement("button");
    eb.type = "button";
    eb.className = "row-edit";
    eb.textContent = "edit";
    eb.addEventListener("click", () => openEdit(s));
    act.append(eb);
    tr.append(act);
    if (s.superseded_by) tr.title = `superseded by ${s.superseded_by}`;
    body.append(tr);
  }
  state.cursors[state.page + 1] = page.next;
  $("b-prev").disabled = state.page === 0;
  $("b-next").disabled = !page.next;
  $("b-page").textContent = `page ${state.page + 1} · ${page.segments.length} segments`;
  return true;
}

// ------------------------------------------------------------------ edit and forget

let editing = null; // the segment the edit dialog shows

function openEdit(s) {
  editing = s;
  $("edit-id").textContent = s.id;
  $("edit-source").value = s.source || "";
  $("edit-metadata").value = s.metadata ? JSON.stringify(s.metadata, null, 2) : "";
  $("edit-error").hidden = true;
  $("edit-dialog").showModal();
}

function editError(text) {
  $("edit-error").textContent = text;
  $("edit-error").hidden = false;
}

$("edit-save").addEventListener("click", async () => {
  const text = $("edit-metadata").value.trim();
  let metadata = null;
  if (text) {
    try {
      metadata = JSON.parse(text);
    } catch (e) {
      editError(`metadata: not JSON (${e.message})`);
      return;
    }
    if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) {
      editError("metadata: expected a JSON object");
      return;
    }
  }
  const source = $("edit-source").value.trim() || null;
  try {
    await withKey(() => api.patchSegment(state.ns, editing.id, { metadata, source }));
  } catch (e) {
    editError(e instanceof ApiError ? `${e.status} ${e.code}: ${e.serverMessage}` : String(e));
    return;
  }
  $("edit-dialog").close();
  await loadPage();
  showStatus(`saved ${editing.id}`, false);
});

$("edit-forget").addEventListener("click", async () => {
  if (!confirm(`Forget ${editing.id}? It is deleted for good.`)) return;
  try {
    await withKey(() => api.deleteSegment(state.ns, editing.id));
  } catch (e) {
    editError(e instanceof ApiError ? `${e.status} ${e.code}: ${e.serverMessage}` : String(e));
    return;
  }
  $("edit-dialog").close();
  // one after the other: the page's read clears the status line, the figures' may set it
  if ((await loadPage()) && (await refreshFigures())) showStatus(`forgot ${editing.id}`, false);
});

// ------------------------------------------------------------------ wiring

for (const b of document.querySelectorAll(".tabs button")) {
  b.addEventListener("click", () => {
    for (const o of document.querySelectorAll(".tabs button")) o.classList.toggle("active", o === b);
    $("panel-search").hidden = b.dataset.tab !== "search";
    $("panel-browse").hidden = b.dataset.tab !== "browse";
    if (b.dataset.tab === "browse") loadPage();
  });
}
$("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); search(); });
for (const id of ["half-life", "recency-bias", "coherence-weight", "decay", "shape", "match",
  "as-of", "k", "source", "filter", "include-superseded", "include-archived"]) {
  $(id).addEventListener(id === "source" || id === "filter" ? "change" : "input", searchSoon);
  $(id).addEventListener("change", searchSoon);
}
$("browse-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  state.cursors = [null];
  state.page = 0;
  loadPage();
});
$("b-next").addEventListener("click", () => { state.page++; loadPage(); });
$("b-prev").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); loadPage(); });
$("ns-refresh").addEventListener("click", loadNamespaces);
$("key-button").addEventListener("click", async () => {
  if (await askKey("")) loadNamespaces();
});

async function start() {
  updateOutputs();
  updateKeyButton();
  try {
    const h = await api.health();
    $("server-status").textContent = `server ${h.status} · ${location.host}`;
  } catch (e) {
    $("server-status").textContent = `server: ${e instanceof ApiError ? e.code : e}`;
  }
  await loadNamespaces();
}

start();
