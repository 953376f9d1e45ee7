"""natscluster.py - a throw-away three-server NATS JetStream cluster on loopback.

Each server gets distinct client/cluster ports and its own store directory under a
temporary directory; processes are started and stopped by PID. Python stdlib only."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def _free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class NatsCluster:
    def __init__(self, n=3, binary="nats-server", max_payload="8MB"):
        self.binary = shutil.which(binary) or "/usr/sbin/nats-server"
        self.dir = tempfile.mkdtemp(prefix="mnemod-nats-")
        self.n = n
        self.client_ports = [_free_port() for _ in range(n)]
        self.route_ports = [_free_port() for _ in range(n)]
        self.procs = [None] * n
        self.names = ["n%d" % (i + 1) for i in range(n)]
        self.max_payload = max_payload  # None: the server's default (1 MB)

    def _conf(self, i):
        routes = ",".join("nats://127.0.0.1:%d" % p for j, p in enumerate(self.route_ports) if j != i)
        path = os.path.join(self.dir, "%s.conf" % self.names[i])
        with open(path, "w") as f:
            f.write("server_name: %s\nlisten: 127.0.0.1:%d\n%s"
                    "jetstream { store_dir: \"%s\" }\n"
                    % (self.names[i], self.client_ports[i],
                       "max_payload: %s\n" % self.max_payload if self.max_payload else "",
                       os.path.join(self.dir, "store-" + self.names[i])))
            if self.n > 1:
                f.write("cluster { name: mnemodtest, listen: 127.0.0.1:%d, routes: [%s] }\n"
                        % (self.route_ports[i], routes))
        return path

    def start(self, i):
        log = open(os.path.join(self.dir, "%s.log" % self.names[i]), "ab")
        self.procs[i] = subprocess.Popen([self.binary, "-c", self._conf(i)], stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log)
        log.close()

    def start_all(self):
        for attempt in range(3):  # a port taken between probe and bind: new ports, again
            for i in range(self.n):
                self.start(i)
            try:
                for i in range(self.n):
                    self.wait_port(i)
                return
            except RuntimeError:
                if attempt == 2:
                    raise
                self.stop_all()
                self.client_ports = [_free_port() for _ in range(self.n)]
                self.route_ports = [_free_port() for _ in range(self.n)]

    def wait_port(self, i, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[i] is not None and self.procs[i].poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.client_ports[i]), 0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nats-server %s did not listen" % self.names[i])

    def kill(self, i):
        p = self.procs[i]
        if p is not None and p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
        self.procs[i] = None

    def url(self, first=0):
        order = list(range(first, self.n)) + list(range(0, first))
        return ",".join("nats://127.0.0.1:%d" % self.client_ports[i] for i in order)

    def index_of(self, name):
        return self.names.index(name)

    def stop_all(self):
        for i in range(self.n):
            p = self.procs[i]
            if p is not None and p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
        for i in range(self.n):
            p = self.procs[i]
            if p is not None:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait(5)
            self.procs[i] = None

    def cleanup(self):
        self.stop_all()
        shutil.rmtree(self.dir, ignore_errors=True)
