// cluster.test.mjs - the cluster routes and read-your-writes (logSeq -> min_seq), against a
// node in cluster mode on a one-server NATS JetStream.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ApiError, MnemodClient } from "../dist/index.js";
import { startNats, startServer } from "./server.mjs";

let nats, srv, c;
before(async () => {
  nats = await startNats();
  srv = await startServer({ env: { MNEMOD_NATS_URL: nats.url, MNEMOD_NODE_ID: "ts",
    MNEMOD_REPLICAS: "1", MNEMOD_STREAMS: "1" } });
  c = new MnemodClient({ url: srv.url, apiKey: "" });
});
after(async () => {
  const rc = srv ? await srv.stop() : 0;
  await nats?.stop();
  assert.equal(rc, 0, "mnemod exits 0 on SIGTERM");
});

test("status, a write through the log read back with min_seq, a snapshot", async () => {
  let st = await c.clusterStatus();
  assert.equal(st.node, "ts");
  assert.deepEqual(st.nodes.map((n) => [n.id, n.alive, n.self]), [["ts", true, true]]);
  assert.deepEqual(st.streams.map((s) => s.name), ["MNEMOD_0"]);
  const ins = await c.insert("ts_cluster", { id: "w1", text: "written through the log" });
  assert.ok(Number.isInteger(ins.log_seq) && ins.log_seq >= 1, String(ins.log_seq));
  const hits = await c.retrieve("ts_cluster", { query: "written through the log",
    min_seq: ins.log_seq });
  assert.deepEqual(hits.results.map((r) => r.id), ["w1"]);
  st = await c.clusterStatus();
  assert.ok(st.streams[0].applied_seq >= ins.log_seq);
  const snap = await c.clusterSnapshot({ trim: true });
  assert.equal(snap.node, "ts");
  assert.ok(snap.positions.MNEMOD_0 >= ins.log_seq);
  await assert.rejects(c.request("POST", "/v1/cluster/snapshot", { trim: "yes" }),
    (e) => e instanceof ApiError && e.status === 400);
});
