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
    CreateNamespaceRequest: "NamespaceCreate",
  };
  const local = new Set(["created"]); // from the HTTP status, not the JSON
  for (const [iface, schema] of Object.entries(pairs)) {
    assert.ok(mine[iface], `interface ${iface}`);
    assert.deepEqual(mine[iface].filter((p) => !local.has(p)).sort(),
      Object.keys(schemas[schema].properties).sort(), `${iface} vs schemas.${schema}`);
  }
  const params = doc.components.parameters;
  const names = (op) => (op.parameters ?? []).map((p) => params[p.$ref.split("/").pop()].name)
    .filter((n) => n !== "ns" && n !== "id");
  assert.deepEqual(mine.ListSegmentsRequest.sort(),
    names(doc.paths["/v1/namespaces/{ns}/segments"].get).sort());
});

test("every REST operation has a client method", () => {
  const methods = {
    health: "health", metrics: "metrics", openapi: "openapi", listNamespaces: "listNamespaces",
    createNamespace: "createNamespace", getNamespace: "getNamespace",
    deleteNamespace: "deleteNamespace", insertSegments: "insert", listSegments: "listSegments",
    getSegment: "getSegment", deleteSegment: "deleteSegment", patchSegment: "updateSegment",
    retrieve: "retrieve", compact: "compact", exportNamespace: "export",
    importNamespace: "import",
  };
  for (const path of Object.values(doc.paths)) {
    for (const op of Object.values(path)) {
      // MCP and the cluster administration routes have no client methods
      if (!op || !op.operationId || op.operationId === "mcp" || op["x-mnemod-cluster-only"])
        continue;
      const m = methods[op.operationId];
      assert.ok(m, `operation ${op.operationId} has no client method`);
      assert.equal(typeof MnemodClient.prototype[m], "function", op.operationId);
    }
  }
});
