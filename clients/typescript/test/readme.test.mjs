// readme.test.mjs - the TypeScript examples of README.md and of this client's README run as
// printed (as ES modules, the package import pointed at this build) against a fresh server
// each, and print the lines their closing comments promise.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { ROOT, startServer } from "./server.mjs";

// [file, the section holding the example, the address the example uses]
const EXAMPLES = [
  ["README.md", "## Five minutes with Python or TypeScript", "http://localhost:6636"],
  ["clients/typescript/README.md", "# mnemod for TypeScript and JavaScript",
    "http://127.0.0.1:6636"],
];

/** {code, promised} of the first ```ts block after `heading`: the promise is the run of
 * `// ` lines closing the block. */
function example(path, heading) {
  const text = readFileSync(join(ROOT, path), "utf8");
  const from = text.indexOf(`${heading}\n`);
  assert.ok(from >= 0, `${path}: ${heading}`);
  const code = /```ts\n([\s\S]*?)```/.exec(text.slice(from))[1];
  const lines = code.trimEnd().split("\n");
  const promised = [];
  while (lines.length && lines[lines.length - 1].startsWith("// ")) {
    promised.unshift(lines.pop().slice(3).trim());
  }
  assert.ok(promised.length, `${path}: the example promises no output`);
  return { code, promised };
}

for (const [path, heading, address] of EXAMPLES) {
  test(`the example of ${path} prints what it says`, async () => {
    let { code, promised } = example(path, heading);
    assert.match(code, /from "mnemod"/);
    assert.ok(code.includes(`"${address}"`), address);
    const srv = await startServer();
    const dir = mkdtempSync(join(tmpdir(), "mnemod-readme-"));
    try {
      const dist = pathToFileURL(join(ROOT, "clients", "typescript", "dist", "index.js")).href;
      code = code.replace('from "mnemod"', `from ${JSON.stringify(dist)}`)
        .replace(`"${address}"`, JSON.stringify(srv.url));
      const file = join(dir, "example.mjs");
      writeFileSync(file, code);
      const env = { ...process.env };
      delete env.MNEMOD_API_KEY;
      const { stdout } = await promisify(execFile)(process.execPath, [file], { env });
      // console.log may wrap a long array: compare with the whitespace evened out
      const flat = (s) => s.replace(/\s+/g, " ").trim();
      assert.equal(flat(stdout), flat(promised.join("\n")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      assert.equal(await srv.stop(), 0);
    }
  });
}
