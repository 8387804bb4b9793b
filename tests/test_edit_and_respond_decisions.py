"""edit() approves with changed arguments and respond() answers with text: allowed per request,
recorded once, audited with both fingerprints, handed to the node."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_durable.interrupts import (
    AlreadyDecided,
    DecisionNotAllowed,
    InvalidInput,
    aedit,
    approve,
    arespond,
    audit_log,
    edit,
    pending_approvals,
    respond,
)
from langgraph_durable.interrupts._records import fingerprint
from tests import _approval_savers
from tests._resume_graphs import SideEffects, refund_graph

approval_saver = _approval_savers.approval_saver
async_approval_saver = _approval_savers.async_approval_saver

ASKED = {"action": "refund", "amount": 30}
EDITED = {"action": "refund", "amount": 12}


def cfg(thread_id: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_edit_runs_the_edited_arguments_and_audits_both_versions(approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, cfg())
    out = edit(graph, cfg(), by="ops", args=EDITED, comment="cap it")
    decision = out["decision"]
    assert (decision["type"], decision["approved"], decision["edited"]) == ("edit", True, EDITED)
    assert (decision["comment"], decision["via"]) == ("cap it", "api")
    assert effects.done == [decision]
    [entry] = [e for e in audit_log(approval_saver, thread_id="t1") if e.outcome == "recorded"]
    assert entry.action == "edit"
    assert entry.fingerprint == fingerprint(EDITED)
    assert entry.reason is not None
    assert f"{fingerprint(ASKED)} -> {fingerprint(EDITED)}" in entry.reason


def test_respond_hands_the_text_to_the_node(approval_saver: Any) -> None:
    effects = SideEffects()
    graph = refund_graph(approval_saver, effects)
    graph.invoke({"amount": 30}, cfg())
    out = respond(graph, cfg(), by="ops", text="ask finance first")
    assert out["decision"]["type"] == "respond"
    assert out["decision"]["approved"] is False
    assert out["decision"]["response"] == "ask finance first"


def test_a_decision_the_request_does_not_allow_records_nothing(approval_saver: Any) -> None:
    graph = refund_graph(approval_saver, SideEffects(), allowed=["approve", "reject"])
    graph.invoke({"amount": 30}, cfg())
    with pytest.raises(DecisionNotAllowed, match="allowed: approve, reject"):
        edit(graph, cfg(), by="ops", args=EDITED)
    with pytest.raises(DecisionNotAllowed):
        respond(graph, cfg(), by="ops", text="hm")
    outcomes = [e.outcome for e in audit_log(approval_saver, thread_id="t1")]
    assert outcomes.count("not_allowed") == 2
    assert len(pending_approvals(approval_saver)) == 1
    assert approve(graph, cfg(), by="ops")["decision"]["type"] == "approve"


def test_bad_edit_arguments_are_refused_before_anything(approval_saver: Any) -> None:
    graph = refund_graph(approval_saver, SideEffects())
    graph.invoke({"amount": 30}, cfg())
    with pytest.raises(InvalidInput, match="args"):
        edit(graph, cfg(), by="ops", args={"when": object()})
    with pytest.raises(InvalidInput, match="text"):
        respond(graph, cfg(), by="ops", text="")
    assert [e.action for e in audit_log(approval_saver, thread_id="t1")] == ["request"]


def test_an_edit_after_an_approval_loses(approval_saver: Any) -> None:
    graph = refund_graph(approval_saver, SideEffects())
    graph.invoke({"amount": 30}, cfg())
    approve(approval_saver, cfg(), by="ops", resume=False)
    with pytest.raises(AlreadyDecided):
        edit(approval_saver, cfg(), by="ops", args=EDITED, resume=False)


async def test_async_edit_and_respond(async_approval_saver: Any) -> None:
    graph = refund_graph(async_approval_saver, SideEffects(), use_async=True)
    await graph.ainvoke({"amount": 30}, cfg("t1"))
    out = await aedit(graph, cfg("t1"), by="ops", args=EDITED)
    assert out["decision"]["edited"] == EDITED
    await graph.ainvoke({"amount": 5}, cfg("t2"))
    out = await arespond(graph, cfg("t2"), by="ops", text="no")
    assert out["decision"]["response"] == "no"
