"""server.py - start the real mnemod binary for the client tests.

The binary is $MNEMOD_BINARY (default: build/release/mnemod at the repository root). Each
Server runs on a free loopback port with its own temporary data directory; stop() sends
SIGTERM and asserts a clean exit, so a crash the client provoked fails the test.
"""

import http.client
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BINARY = os.environ.get("MNEMOD_BINARY") or os.path.join(ROOT, "build", "release", "mnemod")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, *args, env=None):
        self.args = list(args)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOD_", "MEMU_"))}
        self.env.update(env or {})
        self.dir = tempfile.mkdtemp(prefix="mnemod-client-")
        self.proc = None
        self.port = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self, timeout=20.0):
        for _ in range(3):  # a port taken between probe and bind: try another
            self.port = free_port()
            log = open(os.path.join(self.dir, "stderr.log"), "ab")
            self.proc = subprocess.Popen(
                [BINARY, "--listen", "127.0.0.1:%d" % self.port,
                 "--data", os.path.join(self.dir, "mnemod.db")] + self.args,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env)
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                    try:
                        c.request("GET", "/healthz")
                        if c.getresponse().status == 200:
                            return self
                    finally:
                        c.close()
                except OSError:
                    pass
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("mnemod did not become healthy; log:\n" + self.log())
        raise RuntimeError("mnemod did not start; log:\n" + self.log())

    def log(self):
        try:
            with open(os.path.join(self.dir, "stderr.log"), "rb") as f:
                return f.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""

    def stop(self):
        """SIGTERM; returns the exit status (0 expected), cleans the data directory."""
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc
