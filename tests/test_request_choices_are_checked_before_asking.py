"""An option outside its choices is refused by name before anything is asked.

A misspelt ``on_stale="Raise"`` is not taken for ``"reask"``, nor any other value
outside an option's choices for one of them: ``request_approval`` and
``request_batch_approval`` raise ``InvalidInput`` naming the option, and nothing
is asked. On every backend.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import (
    InvalidInput,
    pending_approvals,
    request_approval,
    request_batch_approval,
)
from tests import _approval_savers

approval_saver = _approval_savers.approval_saver


class State(TypedDict, total=False):
    done: bool


def asking(saver: Any, kind: str, options: dict[str, Any]) -> Any:
    def review(state: State) -> dict[str, Any]:
        if kind == "approval":
            request_approval({"what": "refund"}, **options)
        else:
            request_batch_approval([{"id": "a"}], key=lambda o: o["id"], **options)
        return {"done": True}

    b = StateGraph(State)
    b.add_node("review", review)
    b.add_edge(START, "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


CASES = [
    ("approval", "on_stale", "Raise"),
    ("approval", "on_reject", "undo"),
    ("approval", "on_timeout", "escalate"),
    ("batch", "on_stale", "Raise"),
    ("batch", "on_timeout", "escalate"),
]


@pytest.mark.parametrize(("kind", "option", "value"), CASES)
def test_an_option_outside_its_choices_is_refused_before_asking(
    approval_saver: Any, kind: str, option: str, value: str
) -> None:
    graph = asking(approval_saver, kind, {option: value})
    with pytest.raises(InvalidInput) as refused:
        graph.invoke({}, {"configurable": {"thread_id": "t1"}})
    assert refused.value.parameter == option and repr(value) in str(refused.value)
    assert pending_approvals(approval_saver, thread_id="t1") == []
