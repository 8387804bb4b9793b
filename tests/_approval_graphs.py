"""Real LangGraph graphs and a settable clock for the approval tests."""

from __future__ import annotations

import operator
import threading
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    CLOCK_CONFIG_KEY,
    Escalate,
    OnTimeout,
    request_approval,
    request_batch_approval,
    set_authorization,
)

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)


class FakeClock:
    """A clock the test moves by hand (thread-safe), so no test sleeps for a timeout."""

    def __init__(self, start: datetime = T0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._now += delta


def cfg(thread_id: str, clock: FakeClock | None = None) -> dict[str, Any]:
    """The config of ``thread_id``, the approval helpers reading time from ``clock`` if given."""
    conf: dict[str, Any] = {"thread_id": thread_id}
    if clock is not None:
        conf[CLOCK_CONFIG_KEY] = clock
    return {"configurable": conf}


class ReviewState(TypedDict, total=False):
    amount: int
    approved: bool
    by: str
    timed_out: bool
    escalations: int
    rule: str | None
    comment: str | None
    done: Annotated[list[str], operator.add]


def review_graph(
    saver: Any,
    *,
    timeout: timedelta | None = timedelta(minutes=15),
    on_timeout: OnTimeout = "reject",
    approvers: tuple[str, ...] = ("ops",),
    after: Any = None,
    open_to_all: bool = True,
) -> Any:
    """``START -> review -> act -> END``; ``review`` asks for approval of the amount.

    ``open_to_all`` lets any decider decide (these tests are about the mechanism, not
    about who may decide: tests/test_approvers_are_authorized.py passes ``False``).
    """

    def review(state: ReviewState) -> dict[str, Any]:
        d = request_approval(
            {"action": "refund", "amount": state["amount"]},
            timeout=timeout,
            on_timeout=on_timeout,
            approvers=approvers,
        )
        return {
            "approved": d.approved,
            "by": d.by,
            "timed_out": d.timed_out,
            "escalations": len(d.escalations),
            "rule": d.rule,
            "comment": d.comment,
        }

    def act(state: ReviewState) -> dict[str, Any]:
        if after is not None:
            after(state)
        return {"done": ["act"]}

    builder = StateGraph(ReviewState)
    builder.add_node("review", review)
    builder.add_node("act", act)
    builder.add_edge(START, "review")
    builder.add_edge("review", "act")
    builder.add_edge("act", END)
    graph = builder.compile(checkpointer=saver)
    if open_to_all:
        set_authorization(graph, allow_anyone)
    return graph


def allow_anyone(decider: Any, request: Any) -> bool:
    """An authorization policy that lets every decider decide."""
    return True


def two_level_escalation() -> Escalate:
    """manager for an hour, then director for an hour, then reject."""
    return Escalate(
        to="manager",
        timeout=timedelta(hours=1),
        then=Escalate(to="director", timeout=timedelta(hours=1), then="reject"),
    )


class OrderState(TypedDict, total=False):
    """State of :func:`order_graph`."""

    orders: list[dict[str, Any]]
    to_ship: list[dict[str, Any]]
    to_refund: list[dict[str, Any]]
    timed_out: list[str]
    deciders: dict[str, list[str]]


def order_graph(saver: Any, prices: dict[str, int] | None = None) -> Any:
    """``review_orders`` asks for a batch approval; ``prices`` may change between runs."""

    def review_orders(state: OrderState) -> dict[str, Any]:
        orders = state["orders"]
        if prices is not None:
            orders = [{**o, "price": prices.get(o["id"], o["price"])} for o in orders]
        result = request_batch_approval(
            orders, key=lambda o: o["id"], timeout=timedelta(hours=4), on_timeout="reject"
        )
        return {
            "to_ship": result.approved,
            "to_refund": result.rejected,
            "timed_out": result.timed_out,
            "deciders": {
                k: [d.by, d.at.isoformat(), str(len(d.history))]
                for k, d in result.decisions.items()
            },
        }

    builder = StateGraph(OrderState)
    builder.add_node("review_orders", review_orders)
    builder.add_edge(START, "review_orders")
    builder.add_edge("review_orders", END)
    return builder.compile(checkpointer=saver)


def orders(n: int = 5) -> list[dict[str, Any]]:
    """``n`` orders ``o1``..``on`` priced 10, 20, ..."""
    return [{"id": f"o{i}", "price": 10 * i} for i in range(1, n + 1)]
