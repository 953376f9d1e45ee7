// readme.test.mjs - the README's TypeScript example runs as printed (as an ES module, the
// package import pointed at this build) against a fresh server and prints what its last
// comment promises.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { ROOT, startServer } from "./server.mjs";

test("the README's TypeScript example prints what it says", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const from = readme.indexOf("\n## Five minutes with Python or TypeScript\n");
  assert.ok(from > 0, "the section is there");
  let code = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))[1];
  const last = code.trimEnd().split("\n").pop();
  assert.match(last, /^\/\/ /);
  const promised = last.slice(3).trim();
  assert.match(code, /from "mnemod"/);
  assert.match(code, /"http:\/\/localhost:6636"/);

  const srv = await startServer();
  const dir = mkdtempSync(join(tmpdir(), "mnemod-readme-"));
  try {
    const dist = pathToFileURL(join(ROOT, "clients", "typescript", "dist", "index.js")).href;
    code = code.replace('from "mnemod"', `from ${JSON.stringify(dist)}`)
      .replace('"http://localhost:6636"', JSON.stringify(srv.url));
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    const env = { ...process.env };
    delete env.MNEMOD_API_KEY;
    const { stdout } = await promisify(execFile)(process.execPath, [file], { env });
    const flat = (s) => s.replace(/\s+/g, " ").trim();
    assert.equal(flat(stdout), flat(promised));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    assert.equal(await srv.stop(), 0);
  }
});
