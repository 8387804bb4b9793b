"""Runs with a strategy beside the recovery worker and the approval sweeper.

Recovery: a run SIGKILLed mid-node leaves an orphan; a recovery worker whose
saver has ``multitask="reject"`` claims and resumes it (its own claim never
turns it away), and while it runs, a user's run of that thread is turned away
with ``ThreadBusy`` naming the worker. The sweeper: an approval times out on a
thread that a live run holds; the sweep records the timeout decision (once)
but its resume is turned away, the claim is kept, and the next sweep after the
sweeper's lease resumes the thread with that decision.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langgraph_durable.checkpointers import ThreadBusy
from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    ApprovalSweeper,
    RecoveryWorker,
    pending_approvals,
)
from tests._approval_graphs import FakeClock, review_graph
from tests._backends import BACKENDS, area_fixture
from tests._lease_support import settings
from tests._multitask_support import sync_saver
from tests._parts import part_of
from tests.test_multitask_holder_that_is_gone_does_not_block import CFG, T, work_graph

SHORT = settings(1.5, 0.5)


def _dies_mid_run(backend: str, url: str, area: str, inside: Any) -> None:
    """Child: a run that is SIGKILLed inside its node (it blocks there)."""
    with sync_saver(backend, url, area, multitask="reject", leases=SHORT) as saver:

        class Signal(list[str]):
            def append(self, item: str) -> None:
                super().append(item)
                inside.set()

        # durability="sync": its input checkpoint is stored before the node runs
        work_graph(saver, Signal(), threading.Event()).invoke({}, CFG, durability="sync")
    os._exit(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_recovery_resumes_an_orphan_and_user_runs_are_turned_away_meanwhile(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    ctx = multiprocessing.get_context("fork")
    inside = ctx.Event()
    child = ctx.Process(target=_dies_mid_run, args=(backend, url, area, inside))
    child.start()
    assert inside.wait(60), "the run never started its node"
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    with (
        sync_saver(backend, url, area, multitask="reject", leases=SHORT) as worker_saver,
        sync_saver(backend, url, area, multitask="reject") as user_saver,
    ):
        deadline = time.monotonic() + 30
        while (
            not part_of(worker_saver, "leases")
            .get_lease(thread_id=T)
            .is_orphaned(datetime.now(timezone.utc))
        ):
            assert time.monotonic() < deadline, "the killed run's lease never expired"
            time.sleep(0.1)
        calls: list[str] = []
        block = threading.Event()
        worker = RecoveryWorker(work_graph(worker_saver, calls, block))
        reports: list[Any] = []
        recovering = threading.Thread(target=lambda: reports.append(worker.run_once()))
        recovering.start()
        while calls != ["work"]:
            assert time.monotonic() < deadline + 30, "the recovery never started"
            time.sleep(0.01)
        user_calls: list[str] = []
        with pytest.raises(ThreadBusy) as exc:
            work_graph(user_saver, user_calls).invoke(None, CFG)
        assert exc.value.owner == worker_saver.run_leases.owner and user_calls == []
        block.set()
        recovering.join(30)
        assert reports[0].recovered == [T] and reports[0].failed == []
        record = part_of(worker_saver, "leases").get_lease(thread_id=T)
        assert (record.state, record.reason, record.recoveries) == ("released", "finished", 1)


def _cfg(clock: FakeClock) -> dict[str, Any]:
    return {"configurable": {"thread_id": T, CLOCK_CONFIG_KEY: clock}}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sweep_turned_away_resumes_one_lease_later(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    holder = "elsewhere:8:run:alive"
    clock = FakeClock()
    with sync_saver(backend, url, area, multitask="reject") as saver:
        graph = review_graph(saver)
        graph.invoke({"amount": 1}, _cfg(clock))
        (waiting,) = pending_approvals(saver)
        key = waiting.approval_id
        deadline = time.monotonic() + 5
        while not part_of(saver, "leases").acquire_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc), ttl=timedelta(seconds=30)
        ):
            assert time.monotonic() < deadline, "the paused run kept the thread's lease"
            time.sleep(0.01)
        sweeper = ApprovalSweeper(graph, clock=clock)
        clock.advance(timedelta(minutes=15))
        assert sweeper.run_once() == 0  # decided, but the resume was turned away
        (decision,) = part_of(saver, "decisions").get_decisions(thread_id=T, keys=[key]).values()
        assert decision["timed_out"] is True
        assert graph.get_state(_cfg(clock)).next == ("review",)
        part_of(saver, "leases").release_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc), reason="finished"
        )
        assert sweeper.run_once() == 0  # its claim stands until the sweeper's lease ends
        clock.advance(timedelta(minutes=6))
        assert sweeper.run_once() == 1
        values = graph.get_state(_cfg(clock)).values
        assert values["timed_out"] is True and values["done"] == ["act"]
        assert part_of(saver, "decisions").get_decisions(thread_id=T, keys=[key]) == {key: decision}
