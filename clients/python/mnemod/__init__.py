"""mnemod: a client for the mnemod agent-memory server (standard library only).

    from mnemod import Client
    c = Client()                                   # MNEMOD_URL, MNEMOD_API_KEY
    c.insert("agent", "team lunch moved to thursday")
    print(c.retrieve("agent", "when is lunch?", k=3).results)

See :class:`Client` for every operation, :class:`AsyncClient` for the awaitable variant
and :mod:`mnemod.errors` for the exceptions.
"""

from .aio import AsyncClient
from .client import DEFAULT_URL, Client, Response, wait_until_ready
from .errors import (ApiError, BadRequestError, ConflictError, ForbiddenError, MnemodError,
                     NotFoundError, PayloadTooLargeError, TransportError, UnauthorizedError,
                     UnavailableError)
from .types import (CompactResult, ImportProgress, ImportResult, Inserted, InsertResult,
                    NamespaceCreated, NamespaceStats, RetrieveResult, ScoredSegment, Segment,
                    SegmentInput, SegmentPage, parse_timestamp)

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "Response", "DEFAULT_URL", "wait_until_ready",
    "MnemodError", "ApiError", "TransportError", "BadRequestError", "UnauthorizedError",
    "ForbiddenError", "NotFoundError", "ConflictError", "PayloadTooLargeError",
    "UnavailableError",
    "NamespaceStats", "NamespaceCreated", "Segment", "SegmentInput", "Inserted",
    "InsertResult", "ScoredSegment", "RetrieveResult", "CompactResult", "SegmentPage",
    "ImportResult", "ImportProgress", "parse_timestamp",
]
