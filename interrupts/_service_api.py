"""The approval service's JSON API under ``/api`` (a contract: see the OpenAPI schema)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._service_auth import NotAuthenticated
from langgraph_durable.interrupts._service_http import read_json
from langgraph_durable.interrupts._service_openapi import openapi_schema
from langgraph_durable.interrupts._service_ops import ServiceOps, jsonable
from langgraph_durable.interrupts._service_sessions import Gate

MAX_LIMIT = 500


def approval_row(item: Any, now: Any) -> dict[str, Any]:
    """One inbox entry as the API returns it."""
    left = None if item.deadline is None else (item.deadline - now).total_seconds()
    return {
        **jsonable(item),
        "time_left_s": left,
        "overdue": left is not None and left <= 0,
    }


def _limit(raw: str | None) -> int:
    if raw is None:
        return 50
    # isdigit() alone accepts digits int() refuses ("²")
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_LIMIT:
        raise InvalidInput(parameter="limit", reason=f"must be a whole number 1..{MAX_LIMIT}")
    return int(raw)


def _flag(raw: str | None, name: str) -> bool:
    if raw is None or raw.lower() in ("", "0", "false", "no"):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise InvalidInput(parameter=name, reason="must be true or false")


class Api:
    """The API's endpoints over one :class:`ServiceOps`."""

    def __init__(self, ops: ServiceOps, gate: Gate, max_body: int) -> None:
        self.ops = ops
        self.gate = gate
        self.max_body = max_body

    async def caller(self, request: Request) -> Decider:
        """The authenticated decider, or :class:`NotAuthenticated` (401).

        Raises:
            TooManyAttempts: too many failed attempts from the caller's address (429).
        """
        decider = await self.gate.identity(request)
        if decider is None:
            raise NotAuthenticated()
        return decider

    async def approvals(self, request: Request) -> JSONResponse:
        """``GET /api/approvals``: what the caller may decide, overdue first."""
        decider = await self.caller(request)
        q = request.query_params
        items, cursor = await self.ops.inbox(
            decider,
            approver=q.get("approver") or None,
            overdue=_flag(q.get("overdue"), "overdue"),
            limit=_limit(q.get("limit")),
            cursor=q.get("cursor") or None,
        )
        now = self.ops.now()
        return JSONResponse(
            {"approvals": [approval_row(i, now) for i in items], "next_cursor": cursor}
        )

    async def thread(self, request: Request) -> JSONResponse:
        """``GET /api/threads/{thread_id}``."""
        reader = await self.caller(request)
        detail = await self.ops.thread(reader, request.path_params["thread_id"])
        return JSONResponse(jsonable(detail))

    async def decision(self, request: Request) -> JSONResponse:
        """``POST /api/threads/{thread_id}/decision``: exactly once, else 409."""
        decider = await self.caller(request)
        body = await read_json(request, self.max_body)
        done = await self.ops.decide(decider, request.path_params["thread_id"], body)
        return JSONResponse(jsonable(done))

    async def audit(self, request: Request) -> JSONResponse:
        """``GET /api/threads/{thread_id}/audit``."""
        reader = await self.caller(request)
        entries = await self.ops.audit(reader, request.path_params["thread_id"])
        return JSONResponse({"entries": jsonable(entries)})

    async def health(self, request: Request) -> JSONResponse:
        """``GET /api/health``: waiting, overdue, running, orphaned, parked."""
        await self.caller(request)
        return JSONResponse(await self.ops.health())

    async def healthz(self, request: Request) -> JSONResponse:
        """``GET /healthz``: the service answers and reaches its storage (no login)."""
        await self.ops.health()
        return JSONResponse({"ok": True})

    async def openapi(self, request: Request) -> JSONResponse:
        """``GET /api/openapi.json``."""
        return JSONResponse(openapi_schema(request.scope.get("root_path", "")))

    def routes(self) -> list[Route]:
        """The API's routes (thread ids may hold ``/``: the longer paths match first)."""
        return [
            Route("/api/approvals", self.approvals, methods=["GET"]),
            Route("/api/threads/{thread_id:path}/decision", self.decision, methods=["POST"]),
            Route("/api/threads/{thread_id:path}/audit", self.audit, methods=["GET"]),
            Route("/api/threads/{thread_id:path}", self.thread, methods=["GET"]),
            Route("/api/health", self.health, methods=["GET"]),
            Route("/api/openapi.json", self.openapi, methods=["GET"]),
            Route("/healthz", self.healthz, methods=["GET"]),
        ]
