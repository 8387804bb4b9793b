"""The library never calls ``uuid.uuid4``: applications that patch it get their own sequence.

LangGraph's tests (and applications' tests) patch ``uuid.uuid4`` with a fixed
sequence to get deterministic ids; a saver that drew lease owner ids or setup
lock tokens from it shifted every id after its calls. Lease owners, the Redis
setup lock, upgrade workers, sweeper owners and decision ids come from
``secrets`` instead: a whole approval round trip on each backend, sync and
async, makes no ``uuid4`` call from the library.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.interrupts import ApprovalSweeper, aapprove, approve
from tests._approval_graphs import review_graph
from tests._backends import POSTGRES, SAVER_KINDS

KINDS = SAVER_KINDS


@pytest.fixture
def library_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The modules of langgraph_durable that call ``uuid.uuid4`` while the test runs."""
    real = uuid.uuid4
    callers: list[str] = []

    def spy() -> uuid.UUID:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("langgraph_durable"):
            callers.append(caller)
        return real()

    monkeypatch.setattr(uuid, "uuid4", spy)
    yield callers


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("kind", KINDS)
async def test_an_approval_round_trip_makes_no_uuid4_call(
    kind: str, request: pytest.FixtureRequest, library_calls: list[str]
) -> None:
    if kind.startswith(POSTGRES):
        url, area = request.getfixturevalue("pg_schema")
        options: dict[str, Any] = {"schema": area}
    else:
        url, area = request.getfixturevalue("redis_prefix")
        options = {"prefix": area}
    if kind == "postgres-sync":
        with PostgresSaver.from_conn_string(url, **options) as saver:
            saver.setup()
            _sync_round_trip(saver)
    elif kind == "redis-sync":
        with RedisSaver.from_conn_string(url, **options) as saver:
            saver.setup()
            _sync_round_trip(saver)
    else:
        opener = AsyncPostgresSaver if kind == "postgres-async" else AsyncRedisSaver
        async with opener.from_conn_string(url, **options) as saver:
            await saver.setup()
            graph = review_graph(saver)
            await graph.ainvoke({"amount": 5}, _cfg("t"))
            out = await aapprove(graph, _cfg("t"), by="ops")
            assert out["approved"] is True
    assert library_calls == []


def _sync_round_trip(saver: Any) -> None:
    graph = review_graph(saver)
    graph.invoke({"amount": 5}, _cfg("t"))
    assert approve(graph, _cfg("t"), by="ops")["approved"] is True
    ApprovalSweeper(graph)  # its owner id
