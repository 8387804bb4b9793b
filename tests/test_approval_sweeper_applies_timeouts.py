"""The sweeper applies on_timeout, escalates, and finishes resumes a crash left undone."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from langgraph_durable.interrupts import (
    AlreadyDecided,
    ApprovalSweeper,
    approval_health,
    approve,
    pending_approvals,
)
from langgraph_durable.interrupts._approve import _env, decide_approval_flow
from langgraph_durable.interrupts._perform import perform
from langgraph_durable.interrupts._requests import Invoke
from tests import _approval_savers
from tests._approval_graphs import T0, FakeClock, cfg, review_graph, two_level_escalation

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


@pytest.mark.parametrize("on_timeout", ["reject", "approve"])
def test_timeout_applies_the_default(approval_saver: Any, on_timeout: str) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, on_timeout=on_timeout)  # type: ignore[arg-type]
    graph.invoke({"amount": 1}, cfg("t1", clock))
    sweeper = ApprovalSweeper(graph, clock=clock)
    clock.advance(timedelta(minutes=14))
    assert sweeper.run_once() == 0
    assert len(pending_approvals(approval_saver)) == 1
    clock.advance(timedelta(minutes=1))  # exactly at the deadline
    assert sweeper.run_once() == 1
    values = graph.get_state(cfg("t1")).values
    assert values["approved"] is (on_timeout == "approve")
    assert values["timed_out"] is True and values["by"] == "system"
    assert values["rule"] == f"on_timeout={on_timeout}"
    assert values["done"] == ["act"]
    assert pending_approvals(approval_saver) == []
    assert sweeper.run_once() == 0
    assert approval_health(approval_saver, clock=clock).waiting == 0


def test_two_level_escalation_chain(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver, on_timeout=two_level_escalation())
    graph.invoke({"amount": 1}, cfg("t1", clock))
    graph.invoke({"amount": 2}, cfg("t2", clock))
    sweeper = ApprovalSweeper(graph, clock=clock)

    clock.advance(timedelta(minutes=15))
    assert sweeper.run_once() == 2
    level1 = pending_approvals(approval_saver, approver="manager")
    assert [(i.escalation_level, i.approvers) for i in level1] == [(1, ["manager"])] * 2
    assert all(i.deadline == T0 + timedelta(minutes=75) for i in level1)
    assert pending_approvals(approval_saver, approver="ops") == []

    # the manager answers t2 at level 1
    result = approve(graph, cfg("t2"), by="manager-mia", clock=clock)
    assert (result["approved"], result["by"], result["escalations"]) == (True, "manager-mia", 1)

    clock.advance(timedelta(hours=1))
    assert sweeper.run_once() == 1
    level2 = pending_approvals(approval_saver)
    assert [(i.thread_id, i.escalation_level, i.approvers) for i in level2] == [
        ("t1", 2, ["director"])
    ]
    clock.advance(timedelta(hours=1))
    assert sweeper.run_once() == 1
    values = graph.get_state(cfg("t1")).values
    assert values["approved"] is False and values["timed_out"] is True
    assert values["escalations"] == 2 and values["rule"] == "on_timeout=reject"


def test_decision_recorded_before_a_crash_is_resumed_by_the_sweeper(approval_saver: Any) -> None:
    clock = FakeClock()
    resumes: list[str] = []
    graph = review_graph(approval_saver, after=lambda s: resumes.append(s["by"]))
    graph.invoke({"amount": 1}, cfg("t1", clock))
    # run approve() up to the point where it would resume, then "crash"
    flow = decide_approval_flow(
        cfg("t1"),
        approved=True,
        by="alice",
        comment=None,
        approval_id=None,
        roles=["ops"],
        clock=clock,
    )
    env = _env(graph)
    request = next(flow)
    while not isinstance(request, Invoke):
        request = flow.send(perform(request, env))
    flow.close()
    with pytest.raises(AlreadyDecided) as caught:
        approve(graph, cfg("t1"), by="bob", clock=clock)
    assert caught.value.by == "alice"
    sweeper = ApprovalSweeper(graph, clock=clock, lease=timedelta(minutes=2))
    assert sweeper.run_once() == 0  # alice may still be resuming: leave it for a lease
    clock.advance(timedelta(minutes=2))
    assert sweeper.run_once() == 1
    assert resumes == ["alice"]
    assert graph.get_state(cfg("t1")).values["approved"] is True


def test_concurrent_sweepers_resume_each_approval_once(approval_saver: Any) -> None:
    clock = FakeClock()
    effects: Counter[str] = Counter()
    lock = threading.Lock()

    def count(state: dict[str, Any]) -> None:
        with lock:
            effects[str(state["amount"])] += 1

    graph = review_graph(approval_saver, after=count)
    n = 60
    for i in range(n):
        graph.invoke({"amount": i}, cfg(f"t{i}", clock))
    clock.advance(timedelta(hours=1))
    sweepers = [
        ApprovalSweeper(graph, clock=clock, page_size=7, concurrency=1 + k % 2 * 3)
        for k in range(4)
    ]
    totals = [0] * 4
    barrier = threading.Barrier(4)

    def run(k: int) -> None:
        barrier.wait()
        totals[k] = sweepers[k].run_once()

    workers = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sum(totals) == n
    assert effects == Counter({str(i): 1 for i in range(n)})


async def test_async_sweeper_resumes_a_page_concurrently(async_approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(async_approval_saver, on_timeout="approve")
    for i in range(12):
        await graph.ainvoke({"amount": i}, cfg(f"t{i}", clock))
    clock.advance(timedelta(minutes=15))
    sweeper = ApprovalSweeper(graph, clock=clock, page_size=5, concurrency=4)
    assert await sweeper.arun_once() == 12
    assert await sweeper.arun_once() == 0
    for i in range(12):
        values = (await graph.aget_state(cfg(f"t{i}"))).values
        assert values["approved"] is True and values["done"] == ["act"]


def _record_then_crash(graph: Any, thread_id: str, clock: FakeClock) -> None:
    """Run approve() until it would resume the run, then stop (a crash)."""
    flow = decide_approval_flow(
        cfg(thread_id),
        approved=True,
        by="alice",
        comment=None,
        approval_id=None,
        roles=["ops"],
        clock=clock,
    )
    env = _env(graph)
    request = next(flow)
    while not isinstance(request, Invoke):
        request = flow.send(perform(request, env))
    flow.close()


def test_fresh_decisions_left_alone_do_not_stop_the_sweep(approval_saver: Any) -> None:
    clock = FakeClock()
    graph = review_graph(approval_saver)
    for i in range(6):
        graph.invoke({"amount": i}, cfg(f"t{i}", clock))
    clock.advance(timedelta(minutes=15))
    for i in range(3):  # deciders that are (as far as anyone knows) still resuming
        _record_then_crash(graph, f"t{i}", clock)
    sweeper = ApprovalSweeper(graph, clock=clock, page_size=2, lease=timedelta(minutes=5))
    assert sweeper.run_once() == 3  # the timeouts, past the decided ones
    clock.advance(timedelta(minutes=5))
    assert sweeper.run_once() == 3  # the deciders' resumes, a lease later
    for i in range(6):
        values = graph.get_state(cfg(f"t{i}")).values
        assert values["approved"] is (i < 3) and values["done"] == ["act"]
