// test_console.mjs - the web console in a real headless Chromium against the real server.
//   sh tests/console/run.sh build/release/mnemod
// The server needs a key, so the page must ask for it; then: the namespaces and their
// stats, a search whose rows equal the REST answer, a slider that changes the order, the
// decay plot, as_of, the segment browser and its edits, the key kept for the session.
// Screenshots go to build/test-artifacts/. Any page error or CSP violation fails the test.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";

import { chromium } from "playwright-core";

import { ROOT, startServer } from "../../clients/typescript/test/server.mjs";

const KEY = "console-s3cret";
const READ_KEY = "console-reader"; // a scoped key: read, namespaces agent*
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARTIFACTS = resolve(process.env.MNEMOD_TEST_ARTIFACTS || join(ROOT, "build", "test-artifacts"));
const NS = "agent";

let srv, browser, page, profile, keys; // browser: the persistent context
const problems = [];

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${KEY}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(srv.url + path, { method, headers,
    body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json();
  assert.ok(r.ok, `${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

/** The rows of the results table: [{id, score, similarity, decay, text}]. */
async function rows() {
  return page.$$eval("#results tbody tr", (trs) => trs.map((tr) => {
    const c = [...tr.children].map((td) => td.textContent);
    return { id: tr.dataset.id, score: c[1], similarity: c[2], decay: c[3], text: c[9] };
  }));
}

/** Wait until the results show exactly these ids, in this order. */
async function waitOrder(ids) {
  await page.waitForFunction((want) => {
    const got = [...document.querySelectorAll("#results tbody tr")].map((tr) => tr.dataset.id);
    return JSON.stringify(got) === JSON.stringify(want);
  }, ids, { timeout: 10_000 }).catch(async () => {
    assert.fail(`results ${JSON.stringify((await rows()).map((r) => r.id))}, want ` +
      JSON.stringify(ids) + `; status: ${await page.textContent("#status")}`);
  });
}

before(async () => {
  keys = mkdtempSync(join(tmpdir(), "mnemod-keys-"));
  writeFileSync(join(keys, "keys"), `${READ_KEY} read agent*\n`);
  srv = await startServer({ env: { MNEMOD_API_KEY: KEY, MNEMOD_KEYS_FILE: join(keys, "keys") } });
  for (const s of [
    { id: "pw-old", text: "the staging database password is hunter2", source: "ops",
      timestamp: "2026-11-02T09:00:00Z", metadata: { kind: "secret" } },
    { id: "lunch", text: "team lunch moved to thursday", timestamp: "2026-11-20T12:00:00Z" },
    { id: "pw-new", text: "rotated: staging database password is now swordfish", source: "ops",
      timestamp: "2026-11-28T09:00:00Z" },
  ]) await call("POST", `/v1/namespaces/${NS}/segments`, s);
  mkdirSync(ARTIFACTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), "mnemod-chromium-"));
  // a fresh profile directory per run (playwright passes it as --user-data-dir)
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = browser.pages()[0] ?? await browser.newPage();
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // the refused key (401) and the bad filter (400) the test sends are logged by the
    // browser as failed resources; anything else logged as an error (a CSP violation, an
    // exception) is a defect
    if (m.type() === "error" && !/Failed to load resource: .*status of 40[01]\b/.test(m.text())) {
      problems.push(m.text());
    }
  });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  if (keys) rmSync(keys, { recursive: true, force: true });
  if (srv) assert.equal(await srv.stop(), 0, "mnemod exits 0 on SIGTERM");
});

test("the console asks for the key, then searches; a slider changes the order", async () => {
  const resp = await page.goto(`${srv.url}/console`);
  assert.equal(resp.status(), 200);
  assert.match(resp.headers()["content-security-policy"], /script-src 'self'/);
  // no key yet: the server answers 401, the page asks
  await page.waitForSelector("#key-dialog[open]", { timeout: 10_000 });
  await page.fill("#key-input", "wrong-key");
  await page.click("#key-save");
  await page.waitForSelector("#key-dialog[open] #key-error:not([hidden])");
  assert.match(await page.textContent("#key-error"), /refused/);
  await page.fill("#key-input", KEY);
  await page.click("#key-save");
  await page.waitForSelector(`#ns-list button[data-ns="${NS}"].active`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("mnemod.apiKey")), KEY);
  assert.equal(await page.textContent('#ns-stats dd[data-stat="count"]'), "3");
  assert.equal(await page.textContent('#ns-stats dd[data-stat="newest"]'),
    "2026-11-28T09:00:00.000Z");

  // plain similarity (half-life off): the old password's wording is closer
  await page.fill("#q", "staging database password");
  await page.press("#q", "Enter");
  await waitOrder(["pw-old", "pw-new", "lunch"]);
  const api = await call("POST", `/v1/namespaces/${NS}/retrieve`, { query:
    "staging database password", k: 10, half_life: 0, recency_bias: 1, coherence_weight: 0,
    decay: "exponential", explain: true });
  const shown = await rows();
  assert.deepEqual(shown.map((r) => r.id), api.results.map((r) => r.id));
  shown.forEach((r, i) => {
    assert.equal(r.score, api.results[i].score.toFixed(4));
    assert.equal(r.similarity, api.results[i].similarity.toFixed(4));
    assert.equal(r.text, api.results[i].text);
  });
  assert.equal(await page.textContent("#half-life-out"), "off");
  await page.screenshot({ path: join(ARTIFACTS, "console-cosine.png") });

  // the half-life slider to about a week: decay now decides, the rotated password wins
  await page.fill("#half-life", "46");
  assert.equal(await page.textContent("#half-life-out"), "7.4 d");
  await waitOrder(["pw-new", "pw-old", "lunch"]);
  const decays = await page.$$eval("#results tbody tr td:nth-child(4)", (t) =>
    t.map((x) => Number(x.textContent)));
  assert.ok(decays.every((d) => d > 0 && d < 1), `decays ${decays}`);
  assert.ok(decays[0] > decays[1], "the newer memory decayed less");
  // the plot: the curve and one dot per result
  assert.equal(await page.locator("#decay-plot polyline.curve").count(), 1);
  assert.equal(await page.locator("#decay-plot circle.dot").count(), 3);
  assert.match(await page.textContent("#plot-caption"), /exponential decay, half-life 7.4 d/);
  await page.screenshot({ path: join(ARTIFACTS, "console.png") });

  // recency bias 0: decay no longer counts, the order is plain similarity again
  await page.fill("#recency-bias", "0");
  await waitOrder(["pw-old", "pw-new", "lunch"]);
  await page.fill("#recency-bias", "1");
  await waitOrder(["pw-new", "pw-old", "lunch"]);

  // coherence weight 1: the graph's gate replaces decay; the rows are the API's answer to
  // the same request, gates included (the lunch note has no neighbour: gate 0)
  const halfLife = Math.round(await page.evaluate(() =>
    10 ** (Math.log10(1 / 24) + (45 / 99) * (Math.log10(3650) - Math.log10(1 / 24))) * 86400));
  await page.fill("#coherence-weight", "1");
  assert.equal(await page.textContent("#coherence-weight-out"), "1.00");
  const coh = await call("POST", `/v1/namespaces/${NS}/retrieve`, { query:
    "staging database password", k: 10, half_life: halfLife, recency_bias: 1,
    coherence_weight: 1, decay: "exponential", explain: true });
  await waitOrder(coh.results.map((r) => r.id));
  assert.notDeepEqual(coh.results.map((r) => r.id), ["pw-new", "pw-old", "lunch"],
    "the gate changes the order");
  const gates = await page.$$eval("#results tbody tr td:nth-child(5)", (t) =>
    t.map((x) => x.textContent));
  assert.deepEqual(gates, coh.results.map((r) => r.gate.toFixed(4)));
  assert.ok(coh.results.some((r) => r.gate === 0) && coh.results.some((r) => r.gate === 1),
    `gates ${gates}`);
  await page.fill("#coherence-weight", "0");
  await waitOrder(["pw-new", "pw-old", "lunch"]);

  // every decay kind: the rows are the API's, and each result's dot (the decay the server
  // computed) lies on the curve the page draws from its own formula
  for (const kind of ["linear", "gaussian", "weibull", "none", "exponential"]) {
    await page.selectOption("#decay", kind);
    if (kind === "weibull") {
      assert.equal(await page.isVisible("#shape"), true);
      await page.fill("#shape", "2.5");
    }
    const want = await call("POST", `/v1/namespaces/${NS}/retrieve`, { query:
      "staging database password", k: 10, half_life: halfLife, recency_bias: 1,
      coherence_weight: 0, explain: true,
      decay: kind === "weibull" ? { weibull: { shape: 2.5 } } : kind });
    await page.waitForFunction((k) => document.querySelector("#plot-caption").textContent
      .startsWith(`${k} decay`), kind, { timeout: 10_000 });
    await waitOrder(want.results.map((r) => r.id));
    const off = await page.$$eval("#decay-plot", ([svg]) => {
      const pts = svg.querySelector("polyline.curve").getAttribute("points").split(" ")
        .map((p) => p.split(",").map(Number));
      return [...svg.querySelectorAll("circle.dot")].map((c) => {
        const cx = Number(c.getAttribute("cx")), cy = Number(c.getAttribute("cy"));
        const i = pts.findIndex(([x]) => x >= cx);
        const [x0, y0] = pts[Math.max(0, i - 1)], [x1, y1] = pts[i];
        const yc = x1 === x0 ? y1 : y0 + ((cx - x0) / (x1 - x0)) * (y1 - y0);
        return Math.abs(cy - yc);
      });
    });
    assert.equal(off.length, 3, kind);
    assert.ok(off.every((d) => d < 1.5), `${kind}: dots off the curve by ${off} px`);
  }

  // as of 10 November: later memories are excluded
  await page.fill("#as-of", "2026-11-10T00:00:00");
  await waitOrder(["pw-old"]);
  assert.match(await page.textContent("#plot-caption"), /as of 2026-11-10T00:00:00Z/);
  await page.fill("#as-of", "");
  await waitOrder(["pw-new", "pw-old", "lunch"]);

  // a hybrid match shows the text and vector parts of each similarity
  await page.selectOption("#match", "hybrid");
  await page.waitForSelector("#results.with-parts");
  const hyb = await call("POST", `/v1/namespaces/${NS}/retrieve`, { query:
    "staging database password", k: 10, half_life: halfLife, recency_bias: 1, coherence_weight: 0, decay: "exponential", match: "hybrid", explain: true });
  await waitOrder(hyb.results.map((r) => r.id));
  const parts = await page.$$eval("#results tbody tr", (trs) => trs.map((tr) =>
    [tr.children[6].textContent, tr.children[7].textContent]));
  assert.deepEqual(parts, hyb.results.map((r) => [r.text_score.toFixed(4),
    r.vector_score.toFixed(4)]));
  assert.equal(await page.isVisible("#results th.opt"), true);
  await page.selectOption("#match", "");
  await waitOrder(["pw-new", "pw-old", "lunch"]);

  // a metadata filter: only the matching memories, exact
  await page.fill("#filter", '{"kind": "secret"}');
  await page.dispatchEvent("#filter", "change");
  await waitOrder(["pw-old"]);
  await page.fill("#filter", '{"kind": {"$bogus": 1}}');
  await page.dispatchEvent("#filter", "change");
  await page.waitForSelector("#status.error:not([hidden])");
  assert.match(await page.textContent("#status"), /^400 invalid_field: filter/);
  await page.fill("#filter", "");
  await page.dispatchEvent("#filter", "change");
  await waitOrder(["pw-new", "pw-old", "lunch"]);
  assert.equal(await page.isHidden("#status"), true, "the error clears");
});

test("the key lasts for the session: a reload does not ask again", async () => {
  await page.reload();
  await page.waitForSelector(`#ns-list button[data-ns="${NS}"].active`);
  assert.equal(await page.locator("#key-dialog[open]").count(), 0);
});

test("the segment browser pages through the listing with its filters", async () => {
  await call("POST", "/v1/namespaces/browse/segments", { segments: Array.from({ length: 30 },
    (_, i) => ({ id: `m${String(i).padStart(2, "0")}`, text: `memory ${i}`,
      source: i % 3 ? "chat" : "ops", timestamp: 1_760_000_000 + i * 60,
      metadata: { n: i } })) });
  await page.click("#ns-refresh");
  await page.click('#ns-list button[data-ns="browse"]');
  await page.click("#tab-browse");
  await page.selectOption("#b-limit", "25");
  await page.click('#browse-form button[type="submit"]');
  const ids = () => page.$$eval("#segments tbody tr", (t) => t.map((r) => r.dataset.id));
  await page.waitForFunction(() => document.querySelectorAll("#segments tbody tr").length === 25);
  const api = await call("GET", "/v1/namespaces/browse/segments?limit=25");
  assert.deepEqual(await ids(), api.segments.map((x) => x.id));
  assert.equal(await page.isDisabled("#b-prev"), true);
  await page.click("#b-next");
  await page.waitForFunction(() => document.querySelectorAll("#segments tbody tr").length === 5);
  assert.deepEqual(await ids(), ["m25", "m26", "m27", "m28", "m29"]);
  assert.equal(await page.isDisabled("#b-next"), true);
  assert.match(await page.textContent("#b-page"), /page 2/);
  await page.click("#b-prev");
  await page.waitForFunction(() => document.querySelectorAll("#segments tbody tr").length === 25);
  assert.equal((await ids())[0], "m00");
  await page.fill("#b-source", "ops");
  await page.click('#browse-form button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll("#segments tbody tr").length === 10);
  assert.deepEqual(await ids(), Array.from({ length: 10 }, (_, i) =>
    `m${String(i * 3).padStart(2, "0")}`));
  assert.equal(await page.textContent('#segments tbody tr[data-id="m03"] td.meta'), '{"n":3}');
  await page.screenshot({ path: join(ARTIFACTS, "console-browse.png") });
});

test("a browsed segment can be edited (metadata, source) and forgotten", async () => {
  // the browser from the test before: namespace "browse", source "ops", page 1
  await page.click('#segments tbody tr[data-id="m03"] button.row-edit');
  await page.waitForSelector("#edit-dialog[open]");
  assert.equal(await page.inputValue("#edit-source"), "ops");
  assert.deepEqual(JSON.parse(await page.inputValue("#edit-metadata")), { n: 3 });
  await page.fill("#edit-metadata", "[1, 2]");
  await page.click("#edit-save");
  await page.waitForSelector("#edit-error:not([hidden])");
  assert.match(await page.textContent("#edit-error"), /expected a JSON object/);
  await page.fill("#edit-metadata", "{not json");
  await page.click("#edit-save");
  assert.match(await page.textContent("#edit-error"), /not JSON/);
  await page.fill("#edit-metadata", '{"n": 3, "tag": "fixed"}');
  await page.fill("#edit-source", "wiki");
  await page.click("#edit-save");
  await page.waitForFunction(() => !document.getElementById("edit-dialog").open);
  const seg = await call("GET", "/v1/namespaces/browse/segments/m03");
  assert.deepEqual(seg.metadata, { n: 3, tag: "fixed" });
  assert.equal(seg.source, "wiki");
  assert.equal(seg.text, "memory 3", "the text never changes");
  // the page shows the listing again: m03 is no longer "ops"
  await page.waitForFunction(() => !document.querySelector('#segments tbody tr[data-id="m03"]'));
  // clearing both
  await page.click('#segments tbody tr[data-id="m06"] button.row-edit');
  await page.fill("#edit-metadata", "");
  await page.fill("#edit-source", "");
  await page.click("#edit-save");
  await page.waitForFunction(() => !document.getElementById("edit-dialog").open);
  const cleared = await call("GET", "/v1/namespaces/browse/segments/m06");
  assert.equal(cleared.metadata, undefined);
  assert.equal(cleared.source, undefined);
  // forget asks first; dismissed, nothing happens
  const countBefore = Number(await page.textContent('#ns-stats dd[data-stat="count"]'));
  assert.match(await page.textContent('#ns-list button[data-ns="browse"] .muted'),
    new RegExp(`^${countBefore} · `));
  page.once("dialog", (d) => d.dismiss());
  await page.click('#segments tbody tr[data-id="m09"] button.row-edit');
  await page.click("#edit-forget");
  await call("GET", "/v1/namespaces/browse/segments/m09");
  page.once("dialog", (d) => d.accept());
  await page.click("#edit-forget");
  await page.waitForFunction(() => !document.getElementById("edit-dialog").open);
  await page.waitForFunction(() => !document.querySelector('#segments tbody tr[data-id="m09"]'));
  const r = await fetch(`${srv.url}/v1/namespaces/browse/segments/m09`,
    { headers: { Authorization: `Bearer ${KEY}` } });
  assert.equal(r.status, 404);
  assert.match(await page.textContent("#status"), /forgot m09/);
  // the namespace's figures follow: its count in the list and in the statistics
  await page.waitForFunction((n) => document.querySelector(
    '#ns-stats dd[data-stat="count"]')?.textContent === String(n), countBefore - 1);
  assert.match(await page.textContent('#ns-list button[data-ns="browse"] .muted'),
    new RegExp(`^${countBefore - 1} · `));
  assert.equal(await page.locator('#ns-list button[data-ns="browse"].active').count(), 1);
  await page.screenshot({ path: join(ARTIFACTS, "console-edit.png") });
});

test("another of the server's own origins, with a scoped read key", async () => {
  // http://localhost:PORT is the server's own origin too; its sessionStorage is its own,
  // so the page asks again. The read key covers agent* only: the list shows what it covers.
  await page.goto(`http://localhost:${srv.port}/console`);
  await page.waitForSelector("#key-dialog[open]", { timeout: 10_000 });
  await page.fill("#key-input", READ_KEY);
  await page.click("#key-save");
  await page.waitForSelector(`#ns-list button[data-ns="${NS}"]`);
  assert.deepEqual(await page.$$eval("#ns-list button", (b) => b.map((x) => x.dataset.ns)), [NS]);
  await page.click(`#ns-list button[data-ns="${NS}"]`);
  await page.fill("#q", "staging database password");
  await page.press("#q", "Enter");
  await waitOrder(["pw-old", "pw-new", "lunch"]);
  await page.goto(`http://localhost:${srv.port}/console#ns=browse`);
  await page.waitForSelector(`#ns-list button[data-ns="${NS}"]`);
  assert.equal(await page.locator('#ns-list button[data-ns="browse"]').count(), 0);
});

test("no page errors and no policy violations", () => {
  assert.deepEqual(problems, []);
});
