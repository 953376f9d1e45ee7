// openapi.test.mjs - the client's request and response types are the server's: each
// interface of src/types.ts (read with the pinned TypeScript compiler) has exactly the
// properties of its schema in the /openapi.json the real server serves, and every REST
// operation there has a client method.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import ts from "typescript";

import { MnemodClient } from "../dist/index.js";
import { startServer } from "./server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
let srv, doc;

before(async () => {
  srv = await startServer();
  doc = await new MnemodClient({ url: srv.url, apiKey: "" }).openapi();
});
after(async () => assert.equal(await srv.stop(), 0));

/** {interface name: [property names]} of src/types.ts (index signatures left out). */
function interfaces() {
  const file = join(here, "..", "src", "types.ts");
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out = {};
  ts.forEachChild(src, (node) => {
    if (ts.isInterfaceDeclaration(node)) {
      out[node.name.text] = node.members.filter((m) => m.name).map((m) => m.name.getText());
    }
  });
  return out;
}

test("interfaces have the properties of their schemas", () => {
  assert.ok(doc.openapi.startsWith("3.1"));
  const schemas = doc.components.schemas;
  const mine = interfaces();
  const pairs = {
    NamespaceStats: "NamespaceStats", Segment: "Segment", NamespaceCreated: "NamespaceCreated",
    InsertResult: "Inserted", ScoredSegment: "Result", RetrieveResult: "RetrieveResponse",
    CompactResult: "CompactResponse", SegmentPage: "SegmentList", SegmentInput: "SegmentIn",
    RetrieveRequest: "RetrieveRequest", CompactRequest: "CompactRequest",
    CreateNamespaceRequest: "NamespaceCreate", SnapshotRequest: "SnapshotRequest",
    SegmentPatch: "SegmentPatch", ImportResult: "ImportResult", ExportedSegment: "ExportLine",
    Inserted: "Inserted.inserted[]",
  };
  const local = new Set(["created"]); // from the HTTP status, not the JSON
  for (const [iface, schema] of Object.entries(pairs)) {
    assert.ok(mine[iface], `interface ${iface}`);
    const [name, prop] = schema.split(".");
    // "Schema.prop[]": the items of an array property
    const s = prop ? schemas[name].properties[prop.slice(0, -2)].items : schemas[name];
    assert.deepEqual(mine[iface].filter((p) => !local.has(p)).sort(),
      Object.keys(s.properties).sort(), `${iface} vs schemas.${schema}`);
  }
  const params = doc.components.parameters;
  const names = (op) => (op.parameters ?? []).map((p) => params[p.$ref.split("/").pop()].name)
    .filter((n) => n !== "ns" && n !== "id");
  assert.deepEqual(mine.ListSegmentsRequest.sort(),
    names(doc.paths["/v1/namespaces/{ns}/segments"].get).sort());
});

test("an ApiError carries every field of the error object", async () => {
  const { errorFromResponse } = await import("../dist/index.js");
  const err = doc.components.schemas.Error.properties.error;
  assert.deepEqual([...err.required].sort(), ["code", "message"]);
  const e = errorFromResponse(400, { error: Object.fromEntries(
    Object.keys(err.properties).map((p) => [p, "x"])) });
  assert.deepEqual(Object.keys(e.details).sort(), Object.keys(err.properties).sort());
  assert.deepEqual([e.code, e.serverMessage, e.field], ["x", "x", "x"]);
});

test("every REST operation has a client method", () => {
  const methods = {
    health: "health", metrics: "metrics", openapi: "openapi", listNamespaces: "listNamespaces",
    createNamespace: "createNamespace", getNamespace: "getNamespace",
    deleteNamespace: "deleteNamespace", insertSegments: "insert", listSegments: "listSegments",
    getSegment: "getSegment", deleteSegment: "deleteSegment", patchSegment: "updateSegment",
    retrieve: "retrieve", compact: "compact", exportNamespace: "export",
    importNamespace: "import", clusterStatus: "clusterStatus", clusterSnapshot: "clusterSnapshot",
  };
  for (const path of Object.values(doc.paths)) {
    for (const op of Object.values(path)) {
      // MCP is JSON-RPC for agents, not a REST route; moving namespaces and draining or
      // forgetting nodes are an operator's (curl), not an application's
      if (!op || !op.operationId || op.operationId === "mcp") continue;
      if (["clusterMove", "clusterDrainNode", "clusterForgetNode"].includes(op.operationId))
        continue;
      const m = methods[op.operationId];
      assert.ok(m, `operation ${op.operationId} has no client method`);
      assert.equal(typeof MnemodClient.prototype[m], "function", op.operationId);
    }
  }
});
