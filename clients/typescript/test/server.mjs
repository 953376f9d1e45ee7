// server.mjs - start the real mnemod binary for the client tests.
// The binary is $MNEMOD_BINARY (default: build/release/mnemod at the repository root). Each
// server runs on a free loopback port with its own temporary data directory; stop() sends
// SIGTERM and resolves with the exit status (0 expected: a crash fails the test).
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(here, "..", "..", "..");
export const BINARY = process.env.MNEMOD_BINARY
  ? resolve(process.env.MNEMOD_BINARY) : join(ROOT, "build", "release", "mnemod");

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

export async function startServer({ args = [], env = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mnemod-ts-"));
  const clean = Object.fromEntries(Object.entries(process.env)
    .filter(([k]) => !k.startsWith("MNEMOD_") && !k.startsWith("MEMU_")));
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const log = openSync(join(dir, "stderr.log"), "a");
    const proc = spawn(BINARY, ["--listen", `127.0.0.1:${port}`, "--data", join(dir, "mnemod.db"),
      ...args], { env: { ...clean, ...env }, stdio: ["ignore", log, log] });
    const exited = new Promise((ok) => proc.once("exit", (code, sig) => ok(code ?? sig)));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    let up = false;
    while (Date.now() < deadline && proc.exitCode === null) {
      try {
        if ((await fetch(url + "/healthz")).status === 200) { up = true; break; }
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (up) {
      return {
        url, port, dir,
        log: () => readFileSync(join(dir, "stderr.log"), "utf8"),
        async stop() {
          if (proc.exitCode === null) proc.kill("SIGTERM");
          const rc = await exited;
          rmSync(dir, { recursive: true, force: true });
          return rc;
        },
      };
    }
    if (proc.exitCode === null) { proc.kill("SIGKILL"); await exited; }
  }
  throw new Error("mnemod did not start; log:\n" + readFileSync(join(dir, "stderr.log"), "utf8"));
}
