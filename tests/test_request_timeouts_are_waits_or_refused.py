"""A request's timeout is a positive wait of at most 100 years, or it is refused by name.

``timeout=60`` means 60 seconds, a float too; a zero or negative timeout (it would
time out at once), one too long for a date (``timedelta(days=1e8)``), NaN,
infinity or a value that is not a number raise ``InvalidInput`` naming
``timeout`` before anything is asked. ``Escalate(timeout=...)`` is checked the
same way when it is built. On every backend, for approvals and batches.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    Escalate,
    InvalidInput,
    audit_log,
    pending_approvals,
    request_approval,
    request_batch_approval,
)
from tests import _approval_savers
from tests._approval_graphs import T0, FakeClock

approval_saver = _approval_savers.approval_saver


class State(TypedDict, total=False):
    done: bool


def cfg(thread: str, clock: FakeClock) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "__durable_clock__": clock}}


def asking(saver: Any, kind: str, timeout: Any) -> Any:
    """A graph whose one node asks an approval (or a batch) with ``timeout``."""

    def review(state: State) -> dict[str, Any]:
        if kind == "approval":
            request_approval({"what": "refund"}, timeout=timeout)
        else:
            request_batch_approval([{"id": "a"}], key=lambda o: o["id"], timeout=timeout)
        return {"done": True}

    b = StateGraph(State)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", ["approval", "batch"])
@pytest.mark.parametrize(
    ("timeout", "wait"),
    [(60, timedelta(seconds=60)), (0.5, timedelta(milliseconds=500))],
    ids=["int", "float"],
)
def test_a_number_is_a_timeout_in_seconds(
    approval_saver: Any, kind: str, timeout: Any, wait: timedelta
) -> None:
    clock = FakeClock()
    asking(approval_saver, kind, timeout).invoke({}, cfg("t1", clock))
    (item,) = pending_approvals(approval_saver, thread_id="t1")
    assert item.deadline == T0 + wait


NOT_WAITS = [
    timedelta(days=1e8),
    timedelta(days=36_526),
    10**30,
    0,
    -5,
    timedelta(0),
    timedelta(seconds=-1),
    math.nan,
    math.inf,
    True,
    "60",
]


@pytest.mark.parametrize("kind", ["approval", "batch"])
@pytest.mark.parametrize("timeout", NOT_WAITS, ids=repr)
def test_a_timeout_that_is_not_a_wait_is_refused_before_asking(
    approval_saver: Any, kind: str, timeout: Any
) -> None:
    graph = asking(approval_saver, kind, timeout)
    with pytest.raises(InvalidInput) as refused:
        graph.invoke({}, cfg("t2", FakeClock()))
    assert refused.value.parameter == "timeout"
    assert "timeout" in str(refused.value)
    assert pending_approvals(approval_saver, thread_id="t2") == []
    assert audit_log(approval_saver, thread_id="t2") == []


@pytest.mark.parametrize("timeout", NOT_WAITS, ids=repr)
def test_an_escalation_timeout_that_is_not_a_wait_is_refused_when_built(timeout: Any) -> None:
    with pytest.raises(InvalidInput) as refused:
        Escalate(to="manager", timeout=timeout)
    assert refused.value.parameter == "Escalate.timeout"


def test_an_escalation_timeout_may_be_seconds() -> None:
    assert Escalate(to="manager", timeout=90.5).timeout == timedelta(seconds=90.5)
    assert Escalate(to="manager", timeout=timedelta(days=36_525)).timeout.days == 36_525
