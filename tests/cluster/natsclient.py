"""natsclient.py - the few NATS client operations a test needs to play another node: publish
with a reply (a JetStream publish answers its acknowledgement there) and request/reply on the
JetStream API. The core protocol over one socket (CONNECT, SUB, PUB, MSG, PING/PONG);
Python stdlib only."""
import base64
import json
import socket
import time


class Nats:
    def __init__(self, url, timeout=10.0):
        host, port = url.split(",")[0].replace("nats://", "").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        self._line()  # INFO {...}
        self._send(b'CONNECT {"verbose":false,"pedantic":false,"headers":false,'
                   b'"no_responders":false,"name":"test"}\r\nPING\r\n')
        self._until_pong()
        self.inbox = "_INBOX.test%d" % int(time.monotonic() * 1e6)
        self.ctr = 0
        self._send(("SUB %s.* 1\r\n" % self.inbox).encode())

    def close(self):
        self.sock.close()

    def _send(self, data):
        self.sock.sendall(data)

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("nats: connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("nats: connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _until_pong(self):
        while True:
            line = self._line()
            if line == b"PONG":
                return
            if line.startswith(b"-ERR"):
                raise OSError("nats: %r" % line)

    def request(self, subject, payload):
        """Publish payload (bytes) on subject; the first reply's payload (bytes)."""
        self.ctr += 1
        reply = "%s.%d" % (self.inbox, self.ctr)
        self._send(("PUB %s %s %d\r\n" % (subject, reply, len(payload))).encode() + payload
                   + b"\r\n")
        while True:
            line = self._line()
            if line.startswith(b"MSG "):
                parts = line.split()
                data = self._bytes(int(parts[-1]))
                if parts[1].decode() == reply:
                    return data
            elif line == b"PING":
                self._send(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                raise OSError("nats: %r" % line)

    def js_api(self, what, body):
        """A JetStream API call ($JS.API.<what>) with a JSON body: the JSON answer."""
        return json.loads(self.request("$JS.API." + what, json.dumps(body).encode()))

    def publish(self, subject, payload):
        """A JetStream publish: its acknowledgement (raises on an error answer)."""
        ack = json.loads(self.request(subject, payload))
        if "error" in ack:
            raise OSError("publish %s: %r" % (subject, ack["error"]))
        return ack

    def last(self, stream, subject):
        """The data (bytes) of the last message of subject in stream, or None."""
        ans = self.js_api("STREAM.MSG.GET." + stream, {"last_by_subj": subject})
        if "message" not in ans:
            return None
        return base64.b64decode(ans["message"].get("data", ""))
