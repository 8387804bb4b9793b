"""Every parameter that takes a list of names takes a string as one name.

``approvers="ops"`` asks ``ops``, not ``o``, ``p`` and ``s`` (a decider with role
``o`` is refused, one with role ``ops`` allowed); the same for a batch's approvers,
``Escalate(to=...)``, ``forbid=`` and a decider's ``roles=``. A list holding
something else than a non-empty name, or a rule ``forbid=`` does not know, is
refused by name when the request is made, before anything is asked. On every
backend.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    ApprovalSweeper,
    Escalate,
    InvalidInput,
    NotAuthorized,
    approve,
    audit_log,
    decide,
    pending_approvals,
    request_approval,
    request_batch_approval,
)
from tests import _approval_savers
from tests._approval_graphs import FakeClock

approval_saver = _approval_savers.approval_saver


class State(TypedDict, total=False):
    by: str
    shipped: list[str]


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def one_ask(saver: Any, **ask: Any) -> Any:
    """A graph whose one node asks ``request_approval({...}, **ask)``."""

    def review(state: State) -> dict[str, Any]:
        return {"by": request_approval({"what": "refund"}, **ask).by}

    b = StateGraph(State)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


def batch_ask(saver: Any, **ask: Any) -> Any:
    """A graph whose one node asks a batch approval of orders a and b."""

    def review(state: State) -> dict[str, Any]:
        res = request_batch_approval([{"id": "a"}, {"id": "b"}], key=lambda o: o["id"], **ask)
        return {"shipped": [o["id"] for o in res.approved]}

    b = StateGraph(State)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


def test_a_string_of_approvers_is_one_approver(approval_saver: Any) -> None:
    graph = one_ask(approval_saver, approvers="ops")
    graph.invoke({}, cfg("t1"))
    (item,) = pending_approvals(approval_saver, thread_id="t1")
    assert item.approvers == ["ops"]
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t1"), by="oscar", roles=["o"])
    # a string of roles is one role too
    assert approve(graph, cfg("t1"), by="olga", roles="ops")["by"] == "olga"


def test_a_string_of_batch_approvers_is_one_approver(approval_saver: Any) -> None:
    graph = batch_ask(approval_saver, approvers="ops")
    graph.invoke({}, cfg("t2"))
    (item,) = pending_approvals(approval_saver, thread_id="t2")
    assert item.approvers == ["ops"]
    with pytest.raises(NotAuthorized):
        decide(graph, cfg("t2"), {"a": True}, by="oscar", roles=["p"])
    done = decide(graph, cfg("t2"), {"a": True, "b": False}, by="olga", roles="ops")
    assert done.completed and done.result["shipped"] == ["a"]


def test_a_string_escalation_target_is_one_approver(approval_saver: Any) -> None:
    clock = FakeClock()
    on_timeout = Escalate(to="manager", timeout=3600, then="reject")  # seconds
    assert on_timeout.to == ["manager"] and on_timeout.timeout == timedelta(hours=1)
    graph = one_ask(approval_saver, approvers="ops", timeout=60, on_timeout=on_timeout)
    graph.invoke({}, cfg("t3", __durable_clock__=clock))
    clock.advance(timedelta(minutes=2))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    (item,) = pending_approvals(approval_saver, thread_id="t3")
    assert item.approvers == ["manager"]
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t3"), by="mo", roles=["m"], clock=clock)
    assert approve(graph, cfg("t3"), by="mia", roles="manager", clock=clock)["by"] == "mia"


def test_a_string_forbid_rule_is_one_rule(approval_saver: Any) -> None:
    graph = one_ask(approval_saver, forbid="requester")
    graph.invoke({}, cfg("t4", requested_by="rita"))
    with pytest.raises(NotAuthorized):
        approve(graph, cfg("t4"), by="rita")
    assert approve(graph, cfg("t4"), by="olga")["by"] == "olga"


NOT_NAMES = [
    ({"approvers": ["ops", 7]}, "approvers"),
    ({"approvers": ["ops", ""]}, "approvers"),
    ({"approvers": None}, "approvers"),
    ({"approvers": b"ops"}, "approvers"),
    ({"approvers": ["o\x00ps"]}, "approvers"),
    ({"forbid": ["requestor"]}, "forbid"),
    ({"forbid": [None]}, "forbid"),
]
CASES = [(kind, ask, parameter) for kind in ("approval", "batch") for ask, parameter in NOT_NAMES]
# an Escalate built around its checks (model_construct) is checked when it is used
CASES.append(
    (
        "approval",
        {"timeout": 60, "on_timeout": Escalate.model_construct(to=[1], timeout=60)},
        "Escalate.to",
    )
)


@pytest.mark.parametrize(("kind", "ask", "parameter"), CASES, ids=repr)
def test_a_list_of_names_that_is_not_one_is_refused_before_asking(
    approval_saver: Any, kind: str, ask: dict[str, Any], parameter: str
) -> None:
    graph = (one_ask if kind == "approval" else batch_ask)(approval_saver, **ask)
    with pytest.raises(InvalidInput) as refused:
        graph.invoke({}, cfg("t5", requested_by="rita"))
    assert refused.value.parameter == parameter
    assert pending_approvals(approval_saver, thread_id="t5") == []
    assert audit_log(approval_saver, thread_id="t5") == []


def test_an_escalation_with_a_list_that_is_not_names_is_refused_when_built() -> None:
    with pytest.raises(InvalidInput) as refused:
        Escalate(to=["manager", 3], timeout=timedelta(hours=1))
    assert refused.value.parameter == "Escalate.to"
    with pytest.raises(InvalidInput) as refused:
        Escalate(to=None, timeout=timedelta(hours=1))  # type: ignore[arg-type]
    assert refused.value.parameter == "Escalate.to"
