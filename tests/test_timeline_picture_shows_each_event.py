"""plot_timeline draws each event of a thread at its time: the pause on the node that paused,
deadlines, escalations, decisions, resumes, failed undos and the operator's skip."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    ApprovalSweeper,
    Compensate,
    Escalate,
    SagaState,
    add_compensation,
    compensable,
    plot_timeline,
    request_approval,
    resume_undo,
    thread_timeline,
)
from langgraph_durable.interrupts._timeline_plot import timeline_events


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


class Notes(TypedDict, total=False):
    topic: str
    answer: str


def _chain(state_type: Any, *nodes: tuple[str, Any]) -> StateGraph[Any]:
    builder: StateGraph[Any] = StateGraph(state_type)
    for name, fn in nodes:
        builder.add_node(name, fn)
    names = [START, *(n for n, _ in nodes), END]
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder


def _kinds(events: list[Any]) -> list[str]:
    return [e.kind for e in events if e.kind != "checkpoint"]


def test_a_pause_is_drawn_on_the_node_that_paused() -> None:
    saver = InMemorySaver()
    graph = _chain(
        Notes,
        ("research", lambda s: {"topic": "flights"}),
        ("ask_human", lambda s: {"answer": interrupt("book it?")}),
        ("book", lambda s: {}),
    ).compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({}, config)
    graph.invoke(Command(resume="yes"), config)

    events, pauses = timeline_events(thread_timeline(saver, "t"))
    assert _kinds(events) == ["asked", "resumed"]
    assert [p.label for p in pauses] == ["paused in ask_human"]
    assert pauses[0].start < pauses[0].end
    figure = plot_timeline(thread_timeline(saver, "t"), title="t")
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert legend == ["checkpoint", "asked", "resumed"]
    assert figure.axes[0].get_xlabel() == "time (UTC)"


def test_an_escalation_shows_both_levels_and_the_timeout_decision() -> None:
    clock = Clock()

    def review(state: Notes) -> Notes:
        d = request_approval(
            {"refund": 5000},
            approvers=["ops"],
            timeout=timedelta(minutes=15),
            on_timeout=Escalate(to="manager", timeout=timedelta(hours=1), then="reject"),
        )
        return {"answer": "yes" if d.approved else "no"}

    saver = InMemorySaver()
    graph = _chain(Notes, ("review", review)).compile(checkpointer=saver)
    graph.invoke({}, {"configurable": {"thread_id": "r", CLOCK_CONFIG_KEY: clock}})
    clock.now += timedelta(minutes=16)
    ApprovalSweeper(graph, clock=clock).run_once()  # escalates to the manager
    clock.now += timedelta(hours=2)
    ApprovalSweeper(graph, clock=clock).run_once()  # the manager did not answer: reject

    events, pauses = timeline_events(thread_timeline(saver, "r"))
    kinds = _kinds(events)
    assert kinds.count("asked") == 2 and kinds.count("escalated") == 1
    assert "deadline" in kinds and "resumed" in kinds
    (rejected,) = [e for e in events if e.kind == "rejected"]
    assert rejected.label == "rejected by the timeout rule"
    assert rejected.at == datetime(2026, 1, 5, 11, 16, tzinfo=timezone.utc)
    asks = sorted(e.at for e in events if e.kind == "asked")
    assert asks[1] - asks[0] == timedelta(minutes=16)  # the wait is drawn as long as it was
    assert pauses[-1].label == "paused in review, asks manager"


class Order(SagaState, total=False):
    charge_id: str


REFUNDS: list[str] = []


def _refund(charge_id: str) -> None:
    REFUNDS.append(charge_id)
    raise ConnectionError("refund service unavailable")


def test_a_failed_undo_and_the_operators_skip_are_drawn() -> None:
    charge = compensable(undo=_refund, args=lambda s, out: {"charge_id": out["charge_id"]})(
        lambda s: {"charge_id": "ch_1"}
    )

    def ship(state: Order) -> Order:
        raise Compensate("carrier refused the parcel")

    saver = InMemorySaver()
    builder = _chain(Order, ("charge", charge), ("ship", ship))
    graph = add_compensation(builder, max_attempts=2, sleep=lambda s: None).compile(
        checkpointer=saver
    )
    config: Any = {"configurable": {"thread_id": "o"}}
    graph.invoke({}, config)
    graph.invoke(resume_undo("skip", by="ops"), config)

    events, pauses = timeline_events(thread_timeline(saver, "o"))
    kinds = _kinds(events)
    assert "undo failed" in kinds and "retry / skip / abort" in kinds
    assert [e.label for e in events if e.kind == "retry / skip / abort"] == ["skip by ops"]
    assert [p.label for p in pauses] == ["paused in compensate"]
    assert REFUNDS  # the undo was attempted
