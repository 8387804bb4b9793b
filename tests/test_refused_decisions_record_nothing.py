"""A decision the backends cannot store exactly is refused before its compare-and-set.

``approve``/``reject``/``decide`` check everything a decision stores (the decider,
roles, comment, the id asked for, each item's ``True``/``False``) before anything
is read or recorded: a refused call raises ``InvalidInput`` naming the argument
(and the item), records no decision and no audit entry, and the approval keeps
waiting for a decision that is stored whole; a decision that was recorded
returns normally. On every backend, sync and async.
"""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_durable.interrupts import (
    InvalidInput,
    aapprove,
    adecide,
    approve,
    audit_log,
    decide,
    pending_approvals,
    reject,
)
from langgraph_durable.interrupts._store import Backend
from tests import _approval_savers
from tests._approval_graphs import order_graph, orders, review_graph

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# (what is wrong, keyword arguments of approve, the parameter the error names)
BAD_DECISIONS = [
    ("lone surrogate in the comment", {"comment": "ok \ud800"}, "comment"),
    ("NUL in the comment", {"comment": "ok\x00"}, "comment"),
    ("comment that is not text", {"comment": 5}, "comment"),
    ("NUL in the decider id", {"by": "al\x00ice"}, "by"),
    ("lone surrogate in the decider id", {"by": "al\udc80ice"}, "by"),
    ("empty decider id", {"by": ""}, "by"),
    ("decider id that is not text", {"by": None}, "by"),
    ("NUL in a role", {"roles": ["ops", "o\x00ps"]}, "roles"),
    ("role that is not text", {"roles": ["ops", 7]}, "roles"),
    ("NUL in the approval id", {"approval_id": "a\x00b"}, "approval_id"),
]


def _recorded(saver: Any, thread: str) -> tuple[int, dict[str, Any]]:
    """(audit entries, stored decisions of the pending approval) of a thread."""
    (pending,) = pending_approvals(saver, thread_id=thread)
    decisions = Backend(saver).get_decisions(thread, [pending.approval_id])
    return len(audit_log(saver, thread_id=thread)), decisions


@pytest.mark.parametrize(("case", "kwargs", "parameter"), BAD_DECISIONS, ids=lambda v: v)
def test_an_approval_decision_that_cannot_be_stored_is_refused_first(
    approval_saver: Any, case: str, kwargs: dict[str, Any], parameter: str
) -> None:
    graph = review_graph(approval_saver)
    graph.invoke({"amount": 5}, cfg("t1"))
    before = _recorded(approval_saver, "t1")
    with pytest.raises(InvalidInput) as refused:
        approve(graph, cfg("t1"), **{"by": "alice", **kwargs})
    assert refused.value.parameter == parameter, case
    assert parameter in str(refused.value)
    # nothing recorded: no decision, no audit entry, still waiting
    assert _recorded(approval_saver, "t1") == before
    assert before[1] == {}
    done = reject(graph, cfg("t1"), by="alice", comment="too much: ünïcode ✓")
    assert done["approved"] is False and done["comment"] == "too much: ünïcode ✓"


async def test_an_async_decision_that_cannot_be_stored_is_refused_first(
    async_approval_saver: Any,
) -> None:
    graph = review_graph(async_approval_saver)
    await graph.ainvoke({"amount": 5}, cfg("t2"))
    with pytest.raises(InvalidInput) as refused:
        await aapprove(graph, cfg("t2"), by="alice", comment="bad \ud800")
    assert refused.value.parameter == "comment"
    state = await graph.aget_state(cfg("t2"))
    assert state.next == ("review",)  # still waiting
    done = await aapprove(graph, cfg("t2"), by="alice", comment="fine")
    assert done["approved"] is True and done["comment"] == "fine"


# values that look like decisions but are not True or False
NOT_DECISIONS = ["false", "no", None, 1, 0, "yes", [True]]


@pytest.mark.parametrize("value", NOT_DECISIONS, ids=repr)
def test_a_batch_item_decision_must_be_true_or_false(approval_saver: Any, value: Any) -> None:
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(3)}, cfg("b1"))
    audit_before = len(audit_log(approval_saver, thread_id="b1"))
    with pytest.raises(InvalidInput) as refused:
        decide(graph, cfg("b1"), {"o1": True, "o2": value}, by="alice")
    assert (refused.value.parameter, refused.value.item) == ("decisions", "o2")
    assert "'o2'" in str(refused.value) and repr(value) in str(refused.value)
    # not even o1, a proper decision, is recorded: the call is refused whole
    (batch,) = pending_approvals(approval_saver, thread_id="b1")
    assert [i.decided for i in batch.items] == [False, False, False]
    assert len(audit_log(approval_saver, thread_id="b1")) == audit_before
    result = decide(graph, cfg("b1"), {"o1": True, "o2": False, "o3": True}, by="alice")
    assert result.completed and sorted(result.applied) == ["o1", "o2", "o3"]
    assert [o["id"] for o in result.result["to_refund"]] == ["o2"]


def test_a_batch_decision_that_cannot_be_stored_is_refused_first(approval_saver: Any) -> None:
    graph = order_graph(approval_saver)
    graph.invoke({"orders": orders(2)}, cfg("b2"))
    for kwargs, parameter in [
        ({"comment": "x\ud800"}, "comment"),
        ({"by": "b\x00b"}, "by"),
        ({"batch_id": "x\x00"}, "batch_id"),
        ({"decisions": {"o\x001": True}}, "decisions"),
        ({"decisions": ["o1"]}, "decisions"),
    ]:
        call: dict[str, Any] = {"decisions": {"o1": True}, "by": "alice", **kwargs}
        with pytest.raises(InvalidInput) as refused:
            decide(graph, cfg("b2"), call.pop("decisions"), **call)
        assert refused.value.parameter == parameter
    (batch,) = pending_approvals(approval_saver, thread_id="b2")
    assert not any(i.decided for i in batch.items)
    assert decide(graph, cfg("b2"), {"o1": True, "o2": True}, by="alice").completed


async def test_an_async_batch_decision_must_be_true_or_false(async_approval_saver: Any) -> None:
    graph = order_graph(async_approval_saver)
    await graph.ainvoke({"orders": orders(2)}, cfg("b3"))
    with pytest.raises(InvalidInput) as refused:
        await adecide(graph, cfg("b3"), {"o1": "false"}, by="alice")
    assert refused.value.item == "o1"
    result = await adecide(graph, cfg("b3"), {"o1": False, "o2": True}, by="alice")
    assert result.completed
    assert [o["id"] for o in result.result["to_refund"]] == ["o1"]
