// api.js - every request the console makes goes through here, to the public REST API of
// the server that served the page (same origin: no CORS, and the server's Origin and Host
// checks pass). The key, when the server needs one, lives in sessionStorage only: it is
// gone when the tab closes and is never sent anywhere but this origin.

const KEY_STORE = "mnemod.apiKey";

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.serverMessage = message;
    this.field = details && typeof details.field === "string" ? details.field : undefined;
    this.details = details || {};
  }
}

export function getKey() {
  try { return sessionStorage.getItem(KEY_STORE) || ""; } catch { return ""; }
}

export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORE, key);
    else sessionStorage.removeItem(KEY_STORE);
  } catch { /* storage disabled: the key lasts until the page is left */ }
}

const ns = (name) => `/v1/namespaces/${encodeURIComponent(name)}`;

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "" || v === false) continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  const key = getKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "unreachable", `the server did not answer (${e.message})`, {});
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!resp.ok) {
    const err = data && typeof data === "object" && data.error ? data.error : null;
    throw new ApiError(resp.status, err ? err.code : `http_${resp.status}`,
      err ? err.message : String(text).slice(0, 200), err || {});
  }
  return data;
}

export const api = {
  health: () => request("GET", "/healthz"),
  listNamespaces: async () => (await request("GET", "/v1/namespaces")).namespaces,
  getNamespace: (name) => request("GET", ns(name)),
  listSegments: (name, params) => request("GET", `${ns(name)}/segments${query(params)}`),
  getSegment: (name, id) => request("GET", `${ns(name)}/segments/${encodeURIComponent(id)}`),
  retrieve: (name, req) => request("POST", `${ns(name)}/retrieve`, req),
  patchSegment: (name, id, fields) =>
    request("PATCH", `${ns(name)}/segments/${encodeURIComponent(id)}`, fields),
  deleteSegment: (name, id) => request("DELETE", `${ns(name)}/segments/${encodeURIComponent(id)}`),
};
