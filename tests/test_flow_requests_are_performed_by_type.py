"""A flow's requests are performed by their type, the same way sync and async."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_durable.interrupts._driver import Env, Flow, Req
from langgraph_durable.interrupts._perform import drive, perform
from langgraph_durable.interrupts._perform_async import adrive, aperform
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    GetDecisions,
    RecordDecision,
    RunAll,
)
from langgraph_durable.interrupts._resume import IoReady


@dataclass(frozen=True)
class Unheard(Req[None]):
    """A request no driver knows."""


def _decided(thread_id: str) -> Flow[dict[str, Any]]:
    stored = yield from RecordDecision(thread_id=thread_id, key="k", decision={"type": "approve"})
    yield from AppendAudit(entries=[{"thread_id": thread_id, "event": "decided"}])
    got = yield from GetDecisions(thread_id=thread_id, keys=["k", "other"])
    assert got == {"k": stored}
    return stored


def _both(first: str, second: str) -> Flow[list[Any]]:
    return (yield from RunAll(flows=[_decided(first), _decided(second)], concurrency=2))


def test_a_sync_flow_records_and_reads_its_decisions() -> None:
    env = Env(InMemorySaver())
    first, second = drive(_both("t1", "t2"), env)
    assert first["type"] == second["type"] == "approve"
    assert perform(GetDecisions(thread_id="t2", keys=["k"]), env) == {"k": second}
    assert perform(IoReady(), env) is True  # no event loop here


async def test_an_async_flow_records_and_reads_its_decisions() -> None:
    env = Env(InMemorySaver())
    first, second = await adrive(_both("t1", "t2"), env)
    assert first["type"] == second["type"] == "approve"
    assert await aperform(GetDecisions(thread_id="t1", keys=["k"]), env) == {"k": first}
    assert await aperform(IoReady(), env) is True


async def test_a_request_of_no_known_type_is_refused_by_name() -> None:
    env = Env(InMemorySaver())
    with pytest.raises(TypeError, match="Unheard"):
        perform(Unheard(), env)
    with pytest.raises(TypeError, match="Unheard"):
        await aperform(Unheard(), env)
