"""The exceptions the client raises.

Every failed API call is a :class:`DocindexError` carrying the server's problem+json fields
(``status``, ``code``, ``title``, ``detail``, ``errors``, ``request_id``); a subclass names the
common cases so callers can catch them directly, but ``code`` and ``status`` are always there.
A request that got no answer is a :class:`NetworkError` (``status`` 0, code ``network_error``).
"""

import json
from typing import Any, Dict, List, Mapping, Optional, Type

from .types import Document, FieldError


class DocindexError(Exception):
    """A docindex request failed; ``str(error)`` reads ``"404 not_found: No document …"``."""

    def __init__(
        self,
        status: int,
        code: str,
        title: str,
        detail: str,
        errors: Optional[List[FieldError]] = None,
        request_id: Optional[str] = None,
        retry_after_seconds: Optional[float] = None,
    ) -> None:
        prefix = "{} ".format(status) if status else ""
        super().__init__("{}{}: {}".format(prefix, code, detail))
        #: HTTP status; 0 when no answer arrived.
        self.status = status
        #: The API's error code (``invalid_request``, ``not_found``, …), or the client's own.
        self.code = code
        self.title = title
        self.detail = detail
        #: Per-field validation problems (JSON Pointers into the request).
        self.errors: List[FieldError] = list(errors or [])
        #: The server's request id, to quote when reporting a problem.
        self.request_id = request_id
        #: Seconds the server asked to wait (429, 503), if it said.
        self.retry_after_seconds = retry_after_seconds


class InvalidRequestError(DocindexError):
    """400: the request was refused as invalid; ``errors`` points at the fields."""


class UnauthorizedError(DocindexError):
    """401: the API key is missing, unknown, expired or revoked."""


class InsufficientScopeError(DocindexError):
    """403 ``insufficient_scope``: the API key lacks the scope the operation needs (``detail`` names it)."""


class NotFoundError(DocindexError):
    """404: no such document (or another organisation's: the answers are identical)."""


class RateLimitedError(DocindexError):
    """429: the organisation's per-minute rate limit is used up; see ``retry_after_seconds``."""


class ServiceUnavailableError(DocindexError):
    """503: the server is overloaded or a backing service is down; see ``retry_after_seconds``."""


class NetworkError(DocindexError):
    """No answer arrived (connection refused, reset, timed out); ``status`` is 0."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            status=0,
            code="network_error",
            title="Network error",
            detail="Could not reach {}: {}".format(url, reason),
        )


class WaitTimeoutError(DocindexError):
    """``wait_for_documents`` gave up before every document was ready or failed.

    ``pending`` lists the ids still queued or processing; ``documents`` the last status seen of
    each. It is a DocindexError (code ``wait_timeout``, ``status`` 0) so that one ``except``
    handles everything the client raises.
    """

    def __init__(self, pending: List[str], documents: List[Document], timeout: float) -> None:
        super().__init__(
            status=0,
            code="wait_timeout",
            title="Timed out waiting for documents",
            detail="{} document(s) still pending after {:g} s: {}".format(
                len(pending), timeout, ", ".join(pending)
            ),
        )
        self.pending = pending
        self.documents = documents
        self.timeout = timeout


_BY_STATUS: Dict[int, Type[DocindexError]] = {
    400: InvalidRequestError,
    401: UnauthorizedError,
    403: InsufficientScopeError,
    404: NotFoundError,
    429: RateLimitedError,
    503: ServiceUnavailableError,
}


def error_from_response(
    status: int,
    reason: str,
    body: bytes,
    headers: Mapping[str, str],
    retry_after_seconds: Optional[float],
) -> DocindexError:
    """The error for a non-2xx answer: its problem+json when the server sent one."""
    cls = _BY_STATUS.get(status, DocindexError)
    problem = _parse_problem(body)
    # The server puts request_id in the problem body; a proxy's plain error may still carry the
    # header some gateways add.
    header_id = headers.get("x-request-id")
    if problem is None:
        text = body.decode("utf-8", "replace").strip()
        return cls(
            status=status,
            code="invalid_response",
            title=reason or "Unexpected response",
            detail="The server answered {} without a problem+json body{}".format(
                status, ": " + text[:200] if text else "."
            ),
            request_id=header_id,
            retry_after_seconds=retry_after_seconds,
        )
    errors = [
        FieldError(pointer=str(item.get("pointer", "")), message=str(item.get("message", "")))
        for item in problem.get("errors") or []
        if isinstance(item, dict)
    ]
    request_id = problem.get("request_id")
    return cls(
        status=status,
        code=str(problem["code"]),
        title=str(problem.get("title", "")),
        detail=str(problem["detail"]),
        errors=errors,
        request_id=str(request_id) if request_id else header_id,
        retry_after_seconds=retry_after_seconds,
    )


def _parse_problem(body: bytes) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    if not isinstance(value.get("code"), str) or not isinstance(value.get("detail"), str):
        return None
    return value
