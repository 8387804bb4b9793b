"""The OpenAPI 3.1 description of the approval service's JSON API."""

from __future__ import annotations

from typing import Any

_ERROR = {"$ref": "#/components/schemas/Error"}
_THREAD = {
    "name": "thread_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}


_READERS = (
    "Readable by those an approval of the thread asked (pending or past, by the graph's "
    "policy), those who decided on it and the admin roles; anyone else gets the 404 of a "
    "thread that is not stored."
)


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "Bad input (names the parameter)",
        401: "Not authenticated",
        403: "The graph's policy refuses the caller",
        404: "Unknown thread (or one the caller may not read), or nothing pending",
        409: "Already decided (who and when)",
        413: "Body too large",
        429: "Too many failed sign-ins from this address: retry after Retry-After seconds",
    }
    # whatever may answer 401 may also refuse an address over its failed sign-ins
    codes = (*codes, 429) if 401 in codes else codes
    return {
        str(c): {"description": text[c], "content": {"application/json": {"schema": _ERROR}}}
        for c in codes
    }


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"200": {"description": description, "content": body}}


_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error", "message"],
        "properties": {
            "error": {"type": "string", "description": "The library's error class name"},
            "message": {"type": "string"},
            "parameter": {"type": "string"},
            "decided_by": {"type": "string"},
            "decided_at": {"type": "string", "format": "date-time"},
        },
    },
    "Decision": {
        "type": "object",
        "required": ["decision"],
        "additionalProperties": False,
        "properties": {
            "decision": {"enum": ["approve", "reject", "edit", "respond"]},
            "comment": {"type": ["string", "null"]},
            "arguments": {"description": "edit: the arguments to run instead"},
            "text": {"type": ["string", "null"], "description": "respond: the answer"},
            "item": {"type": ["string", "null"], "description": "a batch item key"},
            "approval_id": {"type": ["string", "null"]},
        },
    },
    "Approval": {
        "type": "object",
        "properties": {
            "thread_id": {"type": "string"},
            "approval_id": {"type": "string"},
            "kind": {"enum": ["approval", "batch"]},
            "request": {},
            "requested_at": {"type": ["string", "null"], "format": "date-time"},
            "deadline": {"type": ["string", "null"], "format": "date-time"},
            "time_left_s": {"type": ["number", "null"]},
            "overdue": {"type": "boolean"},
            "escalation_level": {"type": "integer"},
            "approvers": {"type": "array", "items": {"type": "string"}},
            "items": {"type": "array"},
        },
    },
}


def openapi_schema(root_path: str = "") -> dict[str, Any]:
    """The schema, with ``root_path`` as the server when the app is mounted."""
    paths = {
        "/api/approvals": _inbox_path(),
        **_thread_paths(),
        "/api/health": {
            "get": {
                "summary": "Waiting, overdue, running, orphaned, parked; notifications",
                "responses": {**_ok("Counts"), **_errors(401)},
            }
        },
        "/healthz": {"get": {"summary": "Liveness and storage", "responses": _ok("OK")}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "langgraph-durable approval service", "version": "1"},
        "servers": [{"url": root_path or "/"}],
        "paths": paths,
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }


def _inbox_path() -> dict[str, Any]:
    """``GET /api/approvals``: the inbox, a page at a time."""
    approvals = {
        "type": "object",
        "properties": {
            "approvals": {"type": "array", "items": {"$ref": "#/components/schemas/Approval"}},
            "next_cursor": {"type": ["string", "null"]},
        },
    }
    query = [
        {"name": "approver", "in": "query", "schema": {"type": "string"}},
        {"name": "overdue", "in": "query", "schema": {"type": "boolean"}},
        {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 500}},
        {"name": "cursor", "in": "query", "schema": {"type": "string"}},
    ]
    return {
        "get": {
            "summary": "Pending approvals the caller may decide, overdue first",
            "parameters": query,
            "responses": {**_ok("A page", approvals), **_errors(400, 401)},
        }
    }


def _thread_paths() -> dict[str, Any]:
    """The paths of one thread: its page, its decision, its audit trail."""
    decision_body = {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Decision"}}},
    }
    return {
        "/api/threads/{thread_id}": {
            "get": {
                "summary": "State, timeline, pending request (full payload), decisions",
                "description": _READERS,
                "parameters": [_THREAD],
                "responses": {**_ok("The thread"), **_errors(401, 404)},
            }
        },
        "/api/threads/{thread_id}/decision": {
            "post": {
                "summary": "Decide the pending approval, exactly once",
                "parameters": [_THREAD],
                "requestBody": decision_body,
                "responses": {**_ok("Recorded"), **_errors(400, 401, 403, 404, 409, 413)},
            }
        },
        "/api/threads/{thread_id}/audit": {
            "get": {
                "summary": "The thread's audit trail",
                "description": _READERS,
                "parameters": [_THREAD],
                "responses": {**_ok("Entries"), **_errors(401, 404)},
            }
        },
    }
