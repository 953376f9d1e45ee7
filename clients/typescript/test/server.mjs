// server.mjs - start the real mnemod binary for the client tests.
// The binary is $MNEMOD_BINARY (default: build/release/mnemod at the repository root). Each
// server runs on a free loopback port with its own temporary data directory; stop() sends
// SIGTERM and resolves with the exit status (0 expected: a crash fails the test).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
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

/** A one-server NATS JetStream (Debian's nats-server) for a node in cluster mode:
 * {url, stop()}. */
export async function startNats() {
  const dir = mkdtempSync(join(tmpdir(), "mnemod-nats-"));
  const port = await freePort();
  const log = openSync(join(dir, "nats.log"), "a");
  const bin = existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
  const proc = spawn(bin, ["-js", "-sd", join(dir, "js"), "-a", "127.0.0.1", "-p", String(port)],
    { stdio: ["ignore", log, log] });
  const exited = new Promise((ok) => proc.once("exit", (code, sig) => ok(code ?? sig)));
  const stop = async () => {
    if (proc.exitCode === null) proc.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise((ok) => {
      const s = connect(port, "127.0.0.1", () => { s.end(); ok(true); });
      s.once("error", () => ok(false));
    });
    if (up) return { url: `nats://127.0.0.1:${port}`, stop };
    if (Date.now() > deadline || proc.exitCode !== null) {
      const text = readFileSync(join(dir, "nats.log"), "utf8");
      await stop();
      throw new Error(`nats-server did not start:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
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
