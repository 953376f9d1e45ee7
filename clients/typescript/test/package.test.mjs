// package.test.mjs - the npm package as a user gets it, by the README's steps: `npm pack`,
// then `npm install` of that tarball into an empty project (offline: it has no run-time
// dependencies), then the installed copy is imported by name as an ES module, type-checked
// by the pinned TypeScript compiler from its own .d.ts files, and used against the server.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { startServer } from "./server.mjs";

const run = promisify(execFile);
const PKG = join(dirname(fileURLToPath(import.meta.url)), "..");
const NPM = { env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false",
  npm_config_update_notifier: "false", npm_config_loglevel: "error" } };

test("npm pack, install offline, import by name, type-check, use", async () => {
  const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  assert.equal(manifest.dependencies, undefined, "no run-time dependencies");
  assert.equal(manifest.type, "module");
  const dir = mkdtempSync(join(tmpdir(), "mnemod-npm-"));
  const srv = await startServer();
  try {
    // dist/ is fresh (run.sh compiles first), so the prepare script is not needed here
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { ...NPM, cwd: PKG });
    const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    assert.equal(tgz, `mnemod-${manifest.version}.tgz`);
    const app = join(dir, "app");
    await run("mkdir", [app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true,
      type: "module" }));
    await run("npm", ["install", "--offline", "--no-package-lock", join(dir, tgz)],
      { ...NPM, cwd: app });
    const installed = readdirSync(join(app, "node_modules"));
    assert.deepEqual(installed.filter((n) => !n.startsWith(".")), ["mnemod"],
      "nothing but the package itself is installed");

    writeFileSync(join(app, "main.ts"), `
import { ApiError, MnemodClient, type RetrieveResult } from "mnemod";
const c = new MnemodClient({ url: process.argv[2] });
await c.insert("pkg", { id: "a", text: "the package works", timestamp: "2026-11-02T09:00:00Z" });
const r: RetrieveResult = await c.retrieve("pkg", { query: "package", k: 1 });
let code = "";
try { await c.getSegment("pkg", "missing"); } catch (e) { if (e instanceof ApiError) code = e.code; }
console.log(JSON.stringify([r.results.map((x) => x.id), code]));
`);
    // wrong uses, one a line: the types must name each of them (and nothing in main.ts)
    const wrong = [
      'await c.retrieve("pkg", { query: "q", k: "ten" });',
      'const n: string = (await c.getNamespace("pkg")).count;',
      'const s: number = (await c.retrieve("pkg", { query: "q" })).results[0].scor;',
      'await c.insert("pkg", { txt: "typo" });',
      'await c.listSegments("pkg", { limit: 10, after: 5 });',
    ];
    writeFileSync(join(app, "wrong.ts"), 'import { MnemodClient } from "mnemod";\n' +
      "const c = new MnemodClient();\n" + wrong.join("\n") + "\nexport {};\n");
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: {
      target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true,
      lib: ["ES2022"], types: [], skipLibCheck: false, outDir: "out" },
    files: ["main.ts", "wrong.ts", "shim.d.ts"] }));
    // skipLibCheck false: the package's own .d.ts files must compile too. The environment
    // (the DOM lib or @types/node, slow to load) is reduced to the globals used here.
    writeFileSync(join(app, "shim.d.ts"), "declare const process: { argv: string[] };\n" +
      "declare function fetch(input: string, init?: object): Promise<unknown>;\n" +
      "declare const console: { log(...a: unknown[]): void };\n");
    const tsc = join(PKG, "node_modules", ".bin", "tsc");
    // the errors stop nothing from being emitted; main.js runs below
    const out = await run(tsc, ["-p", "tsconfig.json"], { cwd: app }).then(() => "",
      (e) => `${e.stdout}${e.stderr}`);
    const flagged = [...out.matchAll(/^(\S+)\((\d+),\d+\): error/gm)].map((m) => `${m[1]}:${m[2]}`);
    assert.deepEqual([...new Set(flagged)], wrong.map((_, i) => `wrong.ts:${i + 3}`), out);
    const { stdout } = await run(process.execPath, [join(app, "out", "main.js"), srv.url]);
    assert.deepEqual(JSON.parse(stdout), [["a"], "not_found"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    assert.equal(await srv.stop(), 0);
  }
});
