"""`run_forever` / `arun_forever` sweep every interval, at most `max_runs` times, until `stop()`."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

from langgraph_durable.interrupts import ApprovalSweeper, pending_approvals
from tests import _approval_savers
from tests._approval_graphs import FakeClock, cfg, review_graph

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def test_run_forever_sweeps_each_pass_and_returns_after_max_runs(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, on_timeout="approve")
    graph.invoke({"amount": 1}, cfg("t1", clock))
    clock.advance(timedelta(minutes=15))
    sweeper = ApprovalSweeper(graph, clock=clock)
    sweeper.run_forever(interval=0.01, max_runs=2)
    values = graph.get_state(cfg("t1")).values
    assert values["approved"] is True and values["timed_out"] is True
    assert pending_approvals(approval_saver) == []


def test_stop_ends_the_pause_between_passes(approval_saver: Any) -> None:
    graph = review_graph(approval_saver)
    sweeper = ApprovalSweeper(graph, clock=FakeClock())
    loop = threading.Thread(target=sweeper.run_forever, kwargs={"interval": 60.0})
    started = time.monotonic()
    loop.start()
    time.sleep(0.2)  # the first pass finds nothing due; the loop pauses for 60 s
    sweeper.stop()
    loop.join(timeout=10)
    assert not loop.is_alive()
    assert time.monotonic() - started < 10


async def test_arun_forever_sweeps_each_pass_and_returns_after_max_runs(
    async_approval_saver: Any,
) -> None:
    clock = FakeClock()
    graph = review_graph(async_approval_saver, on_timeout="reject")
    await graph.ainvoke({"amount": 1}, cfg("t1", clock))
    clock.advance(timedelta(minutes=15))
    sweeper = ApprovalSweeper(graph, clock=clock)
    await sweeper.arun_forever(interval=0.01, max_runs=2)
    values = (await graph.aget_state(cfg("t1"))).values
    assert values["approved"] is False and values["timed_out"] is True
    sweeper.stop()
    await sweeper.arun_forever(interval=0.01)  # stopped: returns without a pass
