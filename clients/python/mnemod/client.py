"""The synchronous mnemod client: one object, one method per REST operation.

    from mnemod import Client
    c = Client("http://127.0.0.1:6636")            # or MNEMOD_URL / MNEMOD_API_KEY
    c.insert("agent", "the staging password is hunter2", timestamp="2026-11-02T09:00:00Z")
    hits = c.retrieve("agent", "staging password", half_life="7d", explain=True)
    for r in hits.results:
        print(r.id, r.score, r.decay)

Standard library only. Connections are kept alive, one per thread. A ``503`` answer is
retried after its ``Retry-After`` (up to ``retries`` times, each wait at most
``max_retry_wait`` seconds); every other error status raises an :class:`ApiError`.
"""

from __future__ import annotations

import email.utils
import http.client
import io
import json
import os
import socket
import threading
import time
import urllib.parse
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union, cast)

from .errors import TransportError, error_from_response
from .types import (CompactResult, Duration, Embedding, ImportProgress, ImportResult,
                    InsertResult, NamespaceCreated, NamespaceStats, RetrieveResult, Segment,
                    SegmentInput, SegmentPage, Timestamp, format_duration, format_timestamp)

DEFAULT_URL = "http://127.0.0.1:6636"
_UNSET: Any = object()
_TIMESTAMP_FIELDS = ("timestamp", "origin", "since", "until", "as_of")
_DURATION_FIELDS = ("half_life", "offset")
ProgressCallback = Callable[[ImportProgress], None]


def _quote(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _wire(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """Request fields in wire form: None dropped, datetimes and timedeltas converted."""
    out: Dict[str, Any] = {}
    for k, v in fields.items():
        if v is None or v is _UNSET:
            continue
        if k in _TIMESTAMP_FIELDS:
            v = format_timestamp(v)
        elif k in _DURATION_FIELDS:
            v = format_duration(v)
        elif k == "embedding" and not isinstance(v, (str, list)):
            v = [float(x) for x in v]
        out[k] = v
    return out


def _segment_wire(seg: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(seg, Mapping):
        raise TypeError("a segment must be a mapping (SegmentInput), got %r" % type(seg))
    return _wire(seg)


def _query_string(params: Mapping[str, Any]) -> str:
    items = []
    for k, v in params.items():
        if v is None or v is False and k == "embedding":
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif k in _TIMESTAMP_FIELDS:
            v = format_timestamp(v)
        items.append((k, str(v)))
    return ("?" + urllib.parse.urlencode(items)) if items else ""


def _retry_after_seconds(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP-date
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def _decode(data: bytes, ctype: str) -> Any:
    if not data:
        return None
    if "json" in (ctype or "").lower():
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError:
            pass
    return data.decode("utf-8", "replace")


class Response:
    """A decoded answer: status, headers (lower-case names) and the JSON (or text) body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Dict[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Client:
    """A client of one mnemod server.

    ``url`` defaults to ``MNEMOD_URL`` (else ``http://127.0.0.1:6636``) and ``api_key`` to
    ``MNEMOD_API_KEY``; pass ``api_key=""`` to send none. ``timeout`` is seconds per
    request (``None``: wait forever). Thread-safe: each thread keeps its own connection.
    """

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None, *,
                 timeout: Optional[float] = 30.0, retries: int = 3,
                 max_retry_wait: float = 30.0,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        url = url or os.environ.get("MNEMOD_URL") or DEFAULT_URL
        if "://" not in url:
            url = "http://" + url
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("url: expected http://HOST:PORT or https://HOST:PORT, got %r" % url)
        self.url = url.rstrip("/")
        self._scheme = u.scheme
        self._host = u.hostname
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._prefix = u.path.rstrip("/")
        self.api_key = os.environ.get("MNEMOD_API_KEY") if api_key is None else api_key
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._headers = dict(headers or {})
        self._local = threading.local()
        self._conns: "set[http.client.HTTPConnection]" = set()
        self._conns_lock = threading.Lock()

    # ------------------------------------------------------------------ transport

    def close(self) -> None:
        """Close every kept-alive connection (the client stays usable: calls reconnect)."""
        with self._conns_lock:
            conns, self._conns = self._conns, set()
        for conn in conns:
            conn.close()
        self._local.conn = None

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._conns_lock:
            self._conns.discard(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _new_conn(self) -> http.client.HTTPConnection:
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _headers_for(self, content_type: Optional[str]) -> Dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": "mnemod-python"}
        h.update(self._headers)
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        if content_type:
            h["Content-Type"] = content_type
        return h

    def _send(self, conn: http.client.HTTPConnection, method: str, path: str,
              body: Any, headers: Dict[str, str]) -> http.client.HTTPResponse:
        try:
            conn.request(method, self._prefix + path, body=body, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            # The server may answer before it has read the whole body (an import refused
            # at line 3, a body over the limit) and close; its answer is still readable.
            try:
                return conn.getresponse()
            except (OSError, http.client.HTTPException):
                pass
            raise
        return conn.getresponse()

    def request(self, method: str, path: str, body: Any = None, *,
                content_type: Optional[str] = None, retry: bool = True) -> Response:
        """Send one request and return the decoded answer, raising :class:`ApiError` for an
        error status. ``body``: a JSON-able object (sent as JSON) or bytes (sent with
        ``content_type``). This is the escape hatch for routes this version does not wrap."""
        data: Optional[bytes] = None
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        elif body is not None:
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
            content_type = content_type or "application/json"
        headers = self._headers_for(content_type if data is not None else None)
        attempt = 0
        while True:
            status, hdrs, raw = self._roundtrip(method, path, data, headers)
            parsed = _decode(raw, hdrs.get("content-type", ""))
            if status < 400:
                return Response(status, hdrs, parsed)
            wait = _retry_after_seconds(hdrs.get("retry-after"))
            if status == 503 and retry and attempt < self.retries:
                attempt += 1
                time.sleep(min(self.max_retry_wait, wait if wait is not None else 0.5 * attempt))
                continue
            raise error_from_response(status, parsed, wait)

    def _roundtrip(self, method: str, path: str, data: Optional[bytes],
                   headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        """One exchange on this thread's connection. A kept-alive connection the server has
        closed meanwhile fails before any answer; that one is retried once on a new
        connection (the server never saw the request)."""
        for fresh in (False, True):
            conn = getattr(self._local, "conn", None)
            reused = conn is not None and not fresh
            if conn is None or fresh or conn not in self._conns:
                if conn is not None:
                    self._forget(conn)
                conn = self._local.conn = self._new_conn()
                with self._conns_lock:
                    self._conns.add(conn)
            try:
                resp = self._send(conn, method, path, data, headers)
                raw = resp.read()
                hdrs = {k.lower(): v for k, v in resp.getheaders()}
                if resp.will_close:
                    self._forget(conn)
                return resp.status, hdrs, raw
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._forget(conn)
                if reused:
                    continue
                raise TransportError("%s %s: %s" % (method, path, e)) from e
            except (OSError, http.client.HTTPException) as e:
                self._forget(conn)
                raise TransportError("%s %s: %s" % (method, path, e)) from e
        raise AssertionError("unreachable")

    def _stream(self, method: str, path: str, body: Any = None,
                headers: Optional[Dict[str, str]] = None
                ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """A request on its own connection whose answer is read by the caller (streams),
        who closes both. 503 is retried as in request() when the body can be sent again."""
        attempt = 0
        while True:
            conn = self._new_conn()
            try:
                resp = self._send(conn, method, path, body, headers or self._headers_for(None))
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise TransportError("%s %s: %s" % (method, path, e)) from e
            if resp.status < 400:
                return conn, resp
            raw = resp.read()
            conn.close()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            parsed = _decode(raw, hdrs.get("content-type", ""))
            wait = _retry_after_seconds(hdrs.get("retry-after"))
            replayable = body is None or isinstance(body, (bytes, bytearray))
            if resp.status == 503 and replayable and attempt < self.retries:
                attempt += 1
                time.sleep(min(self.max_retry_wait, wait if wait is not None else 0.5 * attempt))
                continue
            raise error_from_response(resp.status, parsed, wait)

    @staticmethod
    def _ns_path(ns: str, *rest: str) -> str:
        return "/v1/namespaces/" + _quote(ns) + "".join("/" + r for r in rest)

    # ------------------------------------------------------------------ service

    def health(self) -> Dict[str, Any]:
        """GET /healthz: ``{"status": "ok"}``, or ``loading`` / ``draining`` (no retry)."""
        status, hdrs, raw = self._roundtrip("GET", "/healthz", None, self._headers_for(None))
        body = _decode(raw, hdrs.get("content-type", ""))
        if status not in (200, 503) or not isinstance(body, dict):
            raise error_from_response(status, body)
        return body

    def metrics(self) -> str:
        """GET /metrics: the Prometheus text."""
        return str(self.request("GET", "/metrics").body or "")

    def openapi(self) -> Dict[str, Any]:
        """GET /openapi.json: the OpenAPI description the server answers with."""
        return cast(Dict[str, Any], self.request("GET", "/openapi.json").body)

    # ------------------------------------------------------------------ namespaces

    def list_namespaces(self) -> List[NamespaceStats]:
        """GET /v1/namespaces: every namespace (that the key covers) with its stats."""
        body = self.request("GET", "/v1/namespaces").body
        return [NamespaceStats.from_dict(x) for x in body["namespaces"]]

    def create_namespace(self, ns: str, dim: int, *,
                         coherence: Optional[bool] = None) -> NamespaceCreated:
        """PUT /v1/namespaces/{ns}. ``coherence=False`` keeps no coherence graph."""
        r = self.request("PUT", self._ns_path(ns), _wire({"dim": dim, "coherence": coherence}))
        out = NamespaceCreated.from_dict(r.body)
        out.created = r.status == 201
        return out

    def get_namespace(self, ns: str) -> NamespaceStats:
        """GET /v1/namespaces/{ns}: its stats."""
        return NamespaceStats.from_dict(self.request("GET", self._ns_path(ns)).body)

    def delete_namespace(self, ns: str) -> None:
        """DELETE /v1/namespaces/{ns}: drop it and everything in it."""
        self.request("DELETE", self._ns_path(ns))

    # ------------------------------------------------------------------ segments

    def insert(self, ns: str, text: Optional[str] = None, *,
               embedding: Optional[Embedding] = None, id: Optional[str] = None,
               timestamp: Optional[Timestamp] = None, source: Optional[str] = None,
               metadata: Optional[Dict[str, Any]] = None,
               supersedes: Optional[Sequence[str]] = None) -> InsertResult:
        """POST /v1/namespaces/{ns}/segments with one segment (text and/or embedding)."""
        body = _wire({"id": id, "text": text, "embedding": embedding, "timestamp": timestamp,
                      "source": source, "metadata": metadata,
                      "supersedes": list(supersedes) if supersedes is not None else None})
        r = self.request("POST", self._ns_path(ns, "segments"), body)
        out = InsertResult.from_dict(r.body)
        out.created = r.status == 201
        return out

    def insert_batch(self, ns: str, segments: Iterable[SegmentInput]) -> InsertResult:
        """POST /v1/namespaces/{ns}/segments with ``{"segments": [...]}``: atomic, up to the
        server's batch limit (1000 by default)."""
        body = {"segments": [_segment_wire(s) for s in segments]}
        r = self.request("POST", self._ns_path(ns, "segments"), body)
        out = InsertResult.from_dict(r.body)
        out.created = r.status == 201
        return out

    def get_segment(self, ns: str, id: str, *,
                    embedding: Union[bool, str] = False) -> Segment:
        """GET /v1/namespaces/{ns}/segments/{id}. ``embedding=True`` adds the stored unit
        vector, ``embedding="base64"`` the same as base64 little-endian float32."""
        q = _query_string({"embedding": embedding})
        return Segment.from_dict(self.request("GET", self._ns_path(ns, "segments", _quote(id))
                                              + q).body)

    def delete_segment(self, ns: str, id: str) -> None:
        """DELETE /v1/namespaces/{ns}/segments/{id}: forget it (hard delete)."""
        self.request("DELETE", self._ns_path(ns, "segments", _quote(id)))

    def update_segment(self, ns: str, id: str, *, metadata: Any = _UNSET,
                       source: Any = _UNSET) -> Segment:
        """PATCH /v1/namespaces/{ns}/segments/{id}: replace ``metadata`` (``None`` clears
        it) and/or ``source``. Text, embedding and timestamp are immutable."""
        body: Dict[str, Any] = {}
        if metadata is not _UNSET:
            body["metadata"] = metadata
        if source is not _UNSET:
            body["source"] = source
        return Segment.from_dict(self.request("PATCH", self._ns_path(ns, "segments", _quote(id)),
                                              body).body)

    def list_segments(self, ns: str, *, limit: Optional[int] = None, after: Optional[str] = None,
                      since: Optional[Timestamp] = None, until: Optional[Timestamp] = None,
                      source: Optional[str] = None, include_superseded: Optional[bool] = None,
                      include_archived: Optional[bool] = None,
                      embedding: Union[bool, str] = False) -> SegmentPage:
        """GET /v1/namespaces/{ns}/segments: one page in seq order; pass ``page.next`` as
        ``after`` for the next one (``None`` on the last page)."""
        q = _query_string({"limit": limit, "after": after, "since": since, "until": until,
                           "source": source, "include_superseded": include_superseded,
                           "include_archived": include_archived, "embedding": embedding})
        return SegmentPage.from_dict(self.request("GET", self._ns_path(ns, "segments") + q).body)

    def iter_segments(self, ns: str, *, page_size: int = 500, **filters: Any) -> Iterator[Segment]:
        """Every segment of the listing, page after page (filters as in list_segments)."""
        after = filters.pop("after", None)
        while True:
            page = self.list_segments(ns, limit=page_size, after=after, **filters)
            yield from page.segments
            if not page.next:
                return
            after = page.next

    # ------------------------------------------------------------------ retrieval

    def retrieve(self, ns: str, query: Optional[str] = None, *,
                 embedding: Optional[Embedding] = None, k: Optional[int] = None,
                 half_life: Optional[Duration] = None, half_life_days: Optional[float] = None,
                 recency_bias: Optional[float] = None,
                 decay: Optional[Union[str, Dict[str, Any]]] = None,
                 origin: Optional[Timestamp] = None, offset: Optional[Duration] = None,
                 coherence_weight: Optional[float] = None, since: Optional[Timestamp] = None,
                 until: Optional[Timestamp] = None, source: Optional[str] = None,
                 as_of: Optional[Timestamp] = None, min_score: Optional[float] = None,
                 include_superseded: Optional[bool] = None,
                 include_archived: Optional[bool] = None, match: Optional[str] = None,
                 filter: Optional[Dict[str, Any]] = None,
                 explain: Optional[bool] = None,
                 min_seq: Optional[int] = None) -> RetrieveResult:
        """POST /v1/namespaces/{ns}/retrieve: the scored top K for a text ``query`` or an
        ``embedding``. Fields left ``None`` take the server's defaults. ``min_seq`` (cluster
        mode) waits until the node has applied the log up to a write's ``log_seq``."""
        body = _wire({"query": query, "embedding": embedding, "k": k, "half_life": half_life,
                      "half_life_days": half_life_days, "recency_bias": recency_bias,
                      "decay": decay, "origin": origin, "offset": offset,
                      "coherence_weight": coherence_weight, "since": since, "until": until,
                      "source": source, "as_of": as_of, "min_score": min_score,
                      "include_superseded": include_superseded,
                      "include_archived": include_archived, "match": match, "filter": filter,
                      "explain": explain, "min_seq": min_seq})
        return RetrieveResult.from_dict(self.request("POST", self._ns_path(ns, "retrieve"),
                                                     body).body)

    def compact(self, ns: str, *, target: Optional[int] = None, ratio: Optional[float] = None,
                policy: Optional[str] = None, dry_run: Optional[bool] = None,
                purge: Optional[bool] = None, weights: Optional[Dict[str, float]] = None,
                context: Optional[Sequence[Sequence[float]]] = None,
                dedup_threshold: Optional[float] = None) -> CompactResult:
        """POST /v1/namespaces/{ns}/compact: shrink to ``target`` segments (or ``ratio`` of
        the active ones) with a retention policy; ``dry_run`` only reports."""
        body = _wire({"target": target, "ratio": ratio, "policy": policy, "dry_run": dry_run,
                      "purge": purge, "weights": weights,
                      "context": [list(v) for v in context] if context is not None else None,
                      "dedup_threshold": dedup_threshold})
        return CompactResult.from_dict(self.request("POST", self._ns_path(ns, "compact"),
                                                    body).body)

    # ------------------------------------------------------------------ cluster

    def cluster_status(self) -> Dict[str, Any]:
        """GET /v1/cluster: nodes, streams, namespaces and counters (docs/cluster.md).
        A server not in cluster mode answers 404 (:class:`NotFoundError`)."""
        return cast(Dict[str, Any], self.request("GET", "/v1/cluster").body)

    def cluster_snapshot(self, *, trim: Optional[bool] = None) -> Dict[str, Any]:
        """POST /v1/cluster/snapshot: publish a snapshot and return its manifest; ``trim``
        also drops the stream records the snapshot covers. 404 when not in cluster mode."""
        body = self.request("POST", "/v1/cluster/snapshot", _wire({"trim": trim})).body
        return cast(Dict[str, Any], body)

    # ------------------------------------------------------------------ export / import

    def export_lines(self, ns: str) -> Iterator[bytes]:
        """GET /v1/namespaces/{ns}/export as raw NDJSON lines (each ends with a newline),
        streamed: memory stays bounded whatever the namespace's size."""
        conn, resp = self._stream("GET", self._ns_path(ns, "export"))
        try:
            while True:
                line = resp.readline()
                if not line:
                    return
                if line.strip():
                    yield line if line.endswith(b"\n") else line + b"\n"
        except (OSError, http.client.HTTPException) as e:
            raise TransportError("export %s: %s" % (ns, e)) from e
        finally:
            resp.close()
            conn.close()

    def export(self, ns: str) -> Iterator[Dict[str, Any]]:
        """Every stored segment of the namespace (archived and superseded included), in seq
        order, as the export's JSON objects, from one consistent snapshot."""
        for line in self.export_lines(ns):
            yield json.loads(line)

    def export_to(self, ns: str, file: Any) -> int:
        """Write the namespace's NDJSON export to a binary file object; returns the lines."""
        n = 0
        for line in self.export_lines(ns):
            file.write(line)
            n += 1
        return n

    def import_segments(self, ns: str,
                        segments: Union[Iterable[Union[SegmentInput, str, bytes]], Any], *,
                        progress: Optional[ProgressCallback] = None,
                        chunk_bytes: int = 256 * 1024) -> ImportResult:
        """POST /v1/namespaces/{ns}/import: bulk load, all or nothing. ``segments`` is an
        iterable of insert objects (dicts), of NDJSON lines (str or bytes), or a file object
        holding NDJSON (an export, opened in binary or text mode). The body is streamed in chunks of about
        ``chunk_bytes``; ``progress`` is called after each chunk with an
        :class:`ImportProgress`, and once more with ``done=True`` after the answer. An error
        raises :class:`ApiError` whose ``details["line"]`` names the 1-based bad line."""
        total: Optional[int] = None
        if hasattr(segments, "read"):
            file: Any = segments
            try:
                total = os.fstat(file.fileno()).st_size - file.tell()
            except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
                total = None
        source: Iterable[Any] = segments  # a file object iterates its lines (bytes or str)
        state = {"lines": 0, "bytes": 0}

        def lines() -> Iterator[bytes]:
            for item in source:
                if isinstance(item, (bytes, bytearray)):
                    b = bytes(item)
                elif isinstance(item, str):
                    b = item.encode("utf-8")
                else:
                    b = json.dumps(_segment_wire(item), separators=(",", ":")).encode("utf-8")
                if not b.strip():
                    continue
                yield b if b.endswith(b"\n") else b + b"\n"

        def chunks() -> Iterator[bytes]:
            buf: List[bytes] = []
            size = 0
            for b in lines():
                buf.append(b)
                size += len(b)
                state["lines"] += 1
                if size >= chunk_bytes:
                    yield from emit(buf, size)
                    buf, size = [], 0
            if buf:
                yield from emit(buf, size)

        def emit(buf: List[bytes], size: int) -> Iterator[bytes]:
            yield b"".join(buf)
            state["bytes"] += size
            if progress:
                progress(ImportProgress(state["lines"], state["bytes"], total))

        headers = self._headers_for("application/x-ndjson")
        conn, resp = self._stream("POST", self._ns_path(ns, "import"), chunks(), headers)
        try:
            raw = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise TransportError("import %s: %s" % (ns, e)) from e
        finally:
            resp.close()
            conn.close()
        body = _decode(raw, resp.getheader("content-type") or "")
        if progress:
            progress(ImportProgress(state["lines"], state["bytes"], total, done=True))
        return ImportResult.from_dict(body)


def wait_until_ready(client: Client, timeout: float = 30.0) -> None:
    """Poll /healthz until the server answers ``ok`` (raises TransportError on timeout)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            if client.health().get("status") == "ok":
                return
        except (TransportError, socket.error) as e:
            last = e
        time.sleep(0.05)
    raise TransportError("server not ready within %.0f s (%s)" % (timeout, last))
