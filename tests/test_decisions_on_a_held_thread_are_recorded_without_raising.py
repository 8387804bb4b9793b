"""A decision on a thread that a live run holds is recorded and returned, never raised.

On a saver with a multitask strategy, the resume after ``approve`` / ``decide``
is a run like any other: another run holding the thread turns it away. The
decision was recorded by then, so the call must not raise: with ``reject`` the
held thread is seen before the decision is stored, which is then recorded as
deferred, and the next sweep resumes the run at once; with ``enqueue`` the
resume waits, is turned away when the wait runs out, and the recorded
decision is returned all the same, for a sweep to resume one sweeper lease
later. Either way the decision is recorded once (a second attempt is
``AlreadyDecided``), the run does not move until the sweep, and the sweep
resumes it with that decision. Postgres and Redis, sync and async.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    DecideResult,
    Decision,
    aapprove,
    adecide,
    approve,
    decide,
)
from tests._approval_graphs import order_graph, orders, review_graph
from tests._backends import BACKENDS, area_fixture
from tests._multitask_support import async_saver, sync_saver
from tests._parts import method_of

MODES = ["sync", "async"]
HOLDER = "elsewhere:8:run:alive"  # another host's run: alive while it renews
CFG: dict[str, Any] = {"configurable": {"thread_id": "t"}}
SWEEPER_LEASE = timedelta(seconds=1)


class Side:
    """One saver and its graph, called sync or async alike."""

    def __init__(self, saver: Any, mode: str, kind: str) -> None:
        self.saver, self.mode, self.kind = saver, mode, kind
        self.graph = (review_graph if kind == "approve" else order_graph)(saver)

    async def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return method_of(self.saver, name)(*args, **kwargs)
        return await method_of(self.saver, "a" + name)(*args, **kwargs)

    async def run(self, sync: Any, asynchronous: Any, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return sync(*args, **kwargs)
        return await asynchronous(*args, **kwargs)

    async def decide(self) -> Any:
        if self.kind == "approve":
            return await self.run(approve, aapprove, self.graph, CFG, by="olga")
        answers = {o["id"]: True for o in orders(3)}
        return await self.run(decide, adecide, self.graph, CFG, answers, by="olga")

    async def state(self) -> Any:
        return await self.run(self.graph.get_state, self.graph.aget_state, CFG)


async def _hold(side: Side) -> None:
    """Let another (live) run hold the thread, once the paused run has let it go."""
    deadline = time.monotonic() + 10
    while not await side.call(
        "acquire_lease",
        thread_id="t",
        owner=HOLDER,
        now=datetime.now(timezone.utc),
        ttl=timedelta(seconds=60),
    ):
        assert time.monotonic() < deadline, "the paused run kept the thread's lease"
        await asyncio.sleep(0.01)


async def _scenario(side: Side, strategy: str) -> None:
    start = {"amount": 5} if side.kind == "approve" else {"orders": orders(3)}
    await side.run(side.graph.invoke, side.graph.ainvoke, start, CFG)
    paused = (await side.state()).next
    await _hold(side)

    outcome = await side.decide()  # recorded: returned, not raised

    if side.kind == "approve":
        assert isinstance(outcome, Decision) and outcome.approved and outcome.by == "olga"
    else:
        assert isinstance(outcome, DecideResult)
        assert outcome.deferred and not outcome.completed and len(outcome.applied) == 3
    assert (await side.state()).next == paused  # nobody resumed the run
    with pytest.raises(AlreadyDecided):
        await side.decide()  # the decision stands, once
    await side.call(
        "release_lease", thread_id="t", owner=HOLDER, now=datetime.now(timezone.utc), reason="x"
    )
    sweeper = ApprovalSweeper(side.graph, lease=SWEEPER_LEASE)
    sweeps = 1
    while not await side.run(sweeper.run_once, sweeper.arun_once):
        # a deferred decision (reject) is resumed by the first sweep; one whose
        # resume was turned away after it was recorded (enqueue), a lease later
        assert strategy == "enqueue" and sweeps < 50, "no sweep resumed the run"
        await asyncio.sleep(0.1)
        sweeps += 1
    final = await side.state()
    assert not final.next
    if side.kind == "approve":
        assert final.values["approved"] is True and final.values["by"] == "olga"
        assert final.values["done"] == ["act"]
    else:
        assert sorted(o["id"] for o in final.values["to_ship"]) == ["o1", "o2", "o3"]


@pytest.mark.parametrize("kind", ["approve", "decide"])
@pytest.mark.parametrize("strategy", ["reject", "enqueue"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_decision_on_a_held_thread_is_returned_and_resumed_by_a_sweep(
    backend: str, mode: str, strategy: str, kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    options = {"multitask": strategy, "multitask_timeout": 0.3}
    if mode == "sync":
        with sync_saver(backend, url, area, **options) as saver:
            await _scenario(Side(saver, mode, kind), strategy)
        return
    async with async_saver(backend, url, area, **options) as asaver:
        await asaver.setup()
        await _scenario(Side(asaver, mode, kind), strategy)
