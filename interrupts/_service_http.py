"""HTTP plumbing of the approval service: bounded bodies, JSON errors, status codes."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse

from langgraph_durable.checkpointers import CheckpointerError, InvalidConfigError
from langgraph_durable.interrupts._authz import NotAuthorized
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    AmbiguousApproval,
    DecisionNotAllowed,
    InterruptsError,
    InvalidInput,
    NoPendingApproval,
    ResumeNotUnderstood,
    StaleApproval,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._links import LinkRefused
from langgraph_durable.interrupts._service_auth import CsrfRefused, NotAuthenticated
from langgraph_durable.interrupts._service_limits import TooManyAttempts
from langgraph_durable.interrupts._service_ops import UnknownThread

DEFAULT_MAX_BODY = 64 * 1024


class BodyTooLarge(InterruptsError):
    """The request body is larger than the service accepts; nothing was read or recorded.

    Attributes:
        limit: The largest body accepted, in bytes.
    """

    def __init__(self, *, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the request body is larger than {limit} bytes")


# most specific first: UnknownBatchItem is a KeyError, LinkRefused a PermissionError
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (NotAuthenticated, 401),
    (CsrfRefused, 403),
    (NotAuthorized, 403),
    (LinkRefused, 403),
    (AlreadyDecided, 409),
    (StaleApproval, 409),
    (UnknownThread, 404),
    (NoPendingApproval, 404),
    (BodyTooLarge, 413),
    (TooManyAttempts, 429),
    (UnknownBatchItem, 400),
    (InvalidInput, 400),
    (InvalidConfigError, 400),
    (AmbiguousApproval, 400),
    (DecisionNotAllowed, 400),
    (ResumeNotUnderstood, 400),
)


def status_of(exc: Exception) -> int | None:
    """The HTTP status of one of the library's errors, or ``None`` (a server error)."""
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status
    return None


def error_body(exc: Exception) -> dict[str, Any]:
    """``{"error": <class name>, "message": ...}``, with who decided for a 409."""
    body: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, AlreadyDecided):
        body["decided_by"] = exc.by
        body["decided_at"] = exc.at.isoformat() if exc.at else None
        body["approval_id"] = exc.approval_id
        body["timed_out"] = exc.timed_out
    if isinstance(exc, InvalidInput):
        body["parameter"] = exc.parameter
    if isinstance(exc, InvalidConfigError):
        body["parameter"] = exc.field
    return body


def error_headers(exc: Exception, status: int) -> dict[str, str] | None:
    """The headers a refusal carries: the scheme to sign in with, when to try again."""
    if status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, TooManyAttempts):
        return {"Retry-After": str(exc.retry_after)}
    return None


async def error_response(request: Request, exc: Exception) -> JSONResponse:
    """The JSON error of a refused request; storage failures are a 503."""
    status = status_of(exc)
    if status is None:
        status = 503 if isinstance(exc, CheckpointerError) else 500
    return JSONResponse(error_body(exc), status_code=status, headers=error_headers(exc, status))


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused past ``limit`` bytes before it is all read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit=limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit=limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int) -> Any:
    """The JSON body of an API call.

    Only ``application/json`` is read: a browser cannot send it cross-site without
    a CORS preflight, so a page elsewhere cannot post decisions with a user's cookie.

    Raises:
        InvalidInput: another content type, or malformed JSON (``parameter="body"``).
        BodyTooLarge: past ``limit`` bytes.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise InvalidInput(parameter="content-type", reason="must be application/json")
    raw = await read_body(request, limit)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(parameter="body", reason=f"malformed JSON: {exc}") from None
    except RecursionError:
        # a small body can still nest deeper than the parser's stack
        raise InvalidInput(parameter="body", reason="JSON nested too deeply") from None


async def read_form(request: Request, limit: int) -> dict[str, str]:
    """A console form (``application/x-www-form-urlencoded``), last value of each field."""
    raw = await read_body(request, limit)
    try:
        fields = parse_qs(raw.decode(), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise InvalidInput(parameter="body", reason="the form is not UTF-8") from None
    return {k: v[-1] for k, v in fields.items()}
