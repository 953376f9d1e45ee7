"""Typed request and response objects of the mnemod REST API.

Responses are dataclasses built from the server's JSON with :meth:`from_dict`. Fields the
server adds in a later version land in ``extra`` instead of being lost, so an older client
keeps working against a newer server. Timestamps stay the RFC 3339 strings the server
sends (``"2026-07-31T09:30:00.000Z"``); :func:`parse_timestamp` turns one into a
``datetime``. The request side is :class:`SegmentInput` (one insert object) and the keyword
arguments of the client's methods; a test checks both against the server's
``/openapi.json``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import (Any, Callable, Dict, List, Optional, Sequence, Type, TypedDict, TypeVar,
                    Union)

Json = Any
#: A timestamp in a request: RFC 3339 with a zone, Unix seconds, or an aware ``datetime``.
Timestamp = Union[str, int, float, _dt.datetime]
#: A duration in a request: seconds, a string with a unit ("90d", "36h"), or a ``timedelta``.
Duration = Union[str, int, float, _dt.timedelta]
#: An embedding: a sequence of floats or the base64 of little-endian float32 values.
Embedding = Union[Sequence[float], str]


class SegmentInput(TypedDict, total=False):
    """One segment to insert (or one import line). At least text or embedding."""
    id: str
    text: str
    embedding: Embedding
    timestamp: Timestamp
    source: str
    metadata: Dict[str, Json]
    supersedes: List[str]


_M = TypeVar("_M", bound="_Model")


class _Model:
    """from_dict/to_dict for the response dataclasses below."""

    extra: Dict[str, Json]

    @classmethod
    def from_dict(cls: Type[_M], d: Dict[str, Json]) -> _M:
        if not isinstance(d, dict):
            raise TypeError("%s: expected a JSON object, got %r" % (cls.__name__, type(d)))
        known = {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}
        kw: Dict[str, Json] = {}
        extra: Dict[str, Json] = {}
        for k, v in d.items():
            if k in known:
                conv = _NESTED.get((cls.__name__, k))
                kw[k] = conv(v) if conv and v is not None else v
            else:
                extra[k] = v
        return cls(**kw, extra=extra)  # type: ignore[call-arg]

    def to_dict(self) -> Dict[str, Json]:
        """The JSON object this was built from (None-valued optional fields left out)."""
        out: Dict[str, Json] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra" or f.name in _LOCAL:
                continue
            v = getattr(self, f.name)
            if isinstance(v, list) and v and isinstance(v[0], _Model):
                v = [x.to_dict() for x in v]
            if v is not None or f.name in _NULLABLE:
                out[f.name] = v
        out.update(self.extra)
        return out


_NULLABLE = {"superseded_by", "next", "oldest", "newest"}
_LOCAL = {"created"}  # set by the client from the HTTP status, not part of the JSON


@dataclasses.dataclass
class NamespaceStats(_Model):
    """GET /v1/namespaces/{ns}: what a namespace holds."""
    name: str
    count: int = 0                      # stored, not archived (superseded included)
    superseded: int = 0
    archived: int = 0
    dim: int = 0
    oldest: Optional[str] = None        # None while empty
    newest: Optional[str] = None
    graph_edges: int = 0
    max_degree: int = 0
    coherence: Optional[bool] = None    # False: the namespace keeps no graph
    embedder: Optional[str] = None      # which embedder made its vectors from text
    log_seq: Optional[int] = None       # cluster mode, in listings: the copy's log position
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class NamespaceCreated(_Model):
    """PUT /v1/namespaces/{ns}. ``created`` is False when it existed with that dim."""
    name: str
    dim: int
    created: bool = True
    log_seq: Optional[int] = None       # cluster mode: the write's position in the log
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Segment(_Model):
    """A stored segment, as GET /v1/namespaces/{ns}/segments/{id} and the listing show it."""
    id: str
    seq: int = 0
    timestamp: str = ""
    text: Optional[str] = None
    source: Optional[str] = None
    metadata: Optional[Dict[str, Json]] = None
    supersedes: List[str] = dataclasses.field(default_factory=list)
    superseded_by: Optional[str] = None
    archived: bool = False
    embedding: Optional[Union[List[float], str]] = None  # with embedding=True / "base64"
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Inserted(_Model):
    """One member of an insert's answer."""
    id: str
    seq: int
    timestamp: str
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class InsertResult(_Model):
    """POST /v1/namespaces/{ns}/segments. ``created`` is False for an identical retry."""
    inserted: List[Inserted] = dataclasses.field(default_factory=list)
    created: bool = True
    log_seq: Optional[int] = None       # cluster mode: pass as min_seq to read your writes
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ScoredSegment(_Model):
    """One retrieve result. The score parts are set only with ``explain=True``."""
    id: str
    seq: int
    score: float
    timestamp: str = ""
    text: Optional[str] = None
    source: Optional[str] = None
    metadata: Optional[Dict[str, Json]] = None
    similarity: Optional[float] = None
    decay: Optional[float] = None
    gate: Optional[float] = None
    age_seconds: Optional[float] = None
    text_score: Optional[float] = None
    vector_score: Optional[float] = None
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RetrieveResult(_Model):
    """POST /v1/namespaces/{ns}/retrieve."""
    namespace: str
    results: List[ScoredSegment] = dataclasses.field(default_factory=list)
    took_ms: float = 0.0
    scanned: int = 0
    kernel: str = ""
    match: str = ""  # "vector", "text" or "hybrid": how the query matched
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CompactResult(_Model):
    """POST /v1/namespaces/{ns}/compact."""
    before: int
    after: int
    policy: str
    evicted: List[str] = dataclasses.field(default_factory=list)
    took_ms: float = 0.0
    log_seq: Optional[int] = None
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class SegmentPage(_Model):
    """One page of GET /v1/namespaces/{ns}/segments; ``next`` is None on the last page."""
    segments: List[Segment] = dataclasses.field(default_factory=list)
    next: Optional[str] = None
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ImportResult(_Model):
    """POST /v1/namespaces/{ns}/import."""
    imported: int = 0
    skipped: int = 0
    log_seq: Optional[int] = None
    extra: Dict[str, Json] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ImportProgress:
    """What an import's progress callback receives, once per chunk sent."""
    lines: int          # lines sent so far
    bytes: int          # bytes sent so far
    total_bytes: Optional[int] = None  # when known (a sized file), else None
    done: bool = False  # the last call, after the server answered


def _list_of(cls: Type[_Model]) -> Callable[[List[Dict[str, Json]]], List[_Model]]:
    return lambda v: [cls.from_dict(x) for x in v]


_NESTED = {
    ("InsertResult", "inserted"): _list_of(Inserted),
    ("RetrieveResult", "results"): _list_of(ScoredSegment),
    ("SegmentPage", "segments"): _list_of(Segment),
}


def parse_timestamp(s: str) -> _dt.datetime:
    """The server's RFC 3339 UTC form -> an aware datetime."""
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    return _dt.datetime.fromisoformat(s)


def format_timestamp(t: Timestamp) -> Union[str, int, float]:
    """A request timestamp in wire form: datetimes become RFC 3339 (naive ones are refused,
    since the server requires a zone)."""
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            raise ValueError("timestamp: a datetime needs a timezone (use datetime.timezone.utc)")
        return t.isoformat()
    return t


def format_duration(d: Duration) -> Union[str, int, float]:
    """A request duration in wire form: timedeltas become seconds."""
    if isinstance(d, _dt.timedelta):
        return d.total_seconds()
    return d
