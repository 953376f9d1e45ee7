"""Errors raised by the mnemod client.

Every error the server answers is a JSON body ``{"error": {"code", "message", ...}}``;
the client raises it as an :class:`ApiError` (or the subclass for its status) carrying
the code, the message, the field it names and every other field of the body.
"""

from __future__ import annotations

from typing import Any, Dict, Optional


class MnemodError(Exception):
    """Base class of everything this package raises."""


class TransportError(MnemodError):
    """The server could not be reached, or its answer was not HTTP/JSON."""


class ApiError(MnemodError):
    """The server answered with an error status.

    ``status`` is the HTTP status, ``code`` the snake_case error code (``"invalid_field"``,
    ``"non_monotonic_timestamp"``, ...), ``message`` the server's sentence, ``field`` the
    request field it names (or ``None``) and ``details`` every field of the error object
    (``last_timestamp``, ``line``, ...). ``retry_after`` is the ``Retry-After`` header in
    seconds when the server sent one.
    """

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None,
                 details: Optional[Dict[str, Any]] = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__("%d %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.details = dict(details or {})
        self.retry_after = retry_after


class BadRequestError(ApiError):
    """400: malformed JSON, an invalid field, a dimension mismatch, ..."""


class UnauthorizedError(ApiError):
    """401: a missing or wrong key."""


class ForbiddenError(ApiError):
    """403: the key does not cover this namespace or role, or the origin/host is refused."""


class NotFoundError(ApiError):
    """404: no such namespace, segment or route."""


class ConflictError(ApiError):
    """409: non-monotonic timestamp, duplicate id, namespace exists, embedder mismatch."""


class PayloadTooLargeError(ApiError):
    """413: the body is over the server's limit."""


class UnavailableError(ApiError):
    """503: loading, draining or overloaded; still failing after the client's retries."""


_BY_STATUS = {400: BadRequestError, 401: UnauthorizedError, 403: ForbiddenError,
              404: NotFoundError, 409: ConflictError, 413: PayloadTooLargeError,
              503: UnavailableError}


def error_from_response(status: int, body: Any, retry_after: Optional[float] = None) -> ApiError:
    """Build the exception for an error answer; body is the decoded JSON (or raw text)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        code = str(err.get("code") or "error")
        message = str(err.get("message") or "")
        field = err.get("field") if isinstance(err.get("field"), str) else None
        details = err
    else:
        code, message, field, details = "http_%d" % status, str(body or "")[:400], None, {}
    cls = _BY_STATUS.get(status, ApiError)
    return cls(status, code, message, field, details, retry_after)
