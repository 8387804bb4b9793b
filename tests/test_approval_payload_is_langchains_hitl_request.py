"""An approval's interrupt value is what LangChain's HITL types (and the legacy ones) describe.

Checked with the types of the installed ``langchain`` (v1's human-in-the-loop
middleware) and ``langgraph.prebuilt.interrupt`` (the legacy Agent Inbox shape),
through pydantic, as LangGraph validates a ``response_schema``.
"""

from __future__ import annotations

import typing
import warnings
from typing import Any

import pytest
from langchain.agents.middleware.human_in_the_loop import (
    ActionRequest,
    DecisionType,
    HITLRequest,
    HITLResponse,
    ReviewConfig,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import TypeAdapter

from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts import pending_approvals
from tests._resume_graphs import ALL, SideEffects, as_user, refund_graph
from tests.test_any_resume_is_a_decision import SHAPES

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the legacy types are deprecated, which is the point
    from langgraph.prebuilt.interrupt import HumanInterrupt, HumanResponse


def _interrupt(ui: str, allowed: list[str]) -> Any:
    graph = refund_graph(InMemorySaver(), SideEffects(), allowed=allowed, ui=ui)
    out = graph.invoke({"amount": 30}, {"configurable": {"thread_id": "t1"}})
    [intr] = out["__interrupt__"]
    return graph, intr


@pytest.mark.parametrize("allowed", [["approve", "reject"], ALL])
def test_the_value_is_a_hitl_request(allowed: list[str]) -> None:
    _, intr = _interrupt("hitl", allowed)
    TypeAdapter(HITLRequest).validate_python(intr.value, strict=True)
    [action] = intr.value["action_requests"]
    [review] = intr.value["review_configs"]
    assert set(action) <= set(typing.get_type_hints(ActionRequest))
    assert set(review) <= set(typing.get_type_hints(ReviewConfig))
    assert action == {
        "name": "refund",
        "args": {"action": "refund", "amount": 30},
        "description": "Refund the customer",
    }
    assert review == {"action_name": "refund", "allowed_decisions": allowed}
    assert set(review["allowed_decisions"]) <= set(typing.get_args(DecisionType))
    # the deadline key beside it: the wait index still sees the approval
    assert extract_wait(intr) is not None


def test_every_hitl_shape_we_read_is_a_hitl_response() -> None:
    for name, (value, *_) in SHAPES.items():
        if name.startswith("hitl-"):
            TypeAdapter(HITLResponse).validate_python(value, strict=True)


def test_the_legacy_value_is_a_human_interrupt_list_that_a_legacy_answer_decides() -> None:
    graph, intr = _interrupt("human_interrupt", ALL)
    TypeAdapter(list[HumanInterrupt]).validate_python(intr.value)
    [item] = intr.value
    assert item["action_request"] == {
        "action": "refund",
        "args": {"action": "refund", "amount": 30},
    }
    assert item["config"] == {
        "allow_ignore": True,
        "allow_respond": True,
        "allow_edit": True,
        "allow_accept": True,
    }
    [waiting] = pending_approvals(graph.checkpointer)
    assert waiting.request == {"action": "refund", "amount": 30}
    for name, (value, *_) in SHAPES.items():
        if name.startswith("legacy-"):
            TypeAdapter(list[HumanResponse]).validate_python(value)
    out = graph.invoke(Command(resume=SHAPES["legacy-edit"][0]), as_user("t1", "ops"))
    assert out["decision"]["edited"] == {"action": "refund", "amount": 7}
