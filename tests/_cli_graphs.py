"""Graphs the CLI tests name with ``--graph tests._cli_graphs:build``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import request_approval

ALL = ["approve", "reject", "edit", "respond"]


class RefundState(TypedDict, total=False):
    amount: int
    decision: dict[str, Any]


def build(saver: Any) -> Any:
    """``review`` asks ops to approve a refund within 15 minutes; every decision is allowed."""

    def review(state: RefundState) -> dict[str, Any]:
        d = request_approval(
            {"action": "refund", "amount": state["amount"]},
            timeout=timedelta(minutes=15),
            approvers="ops",
            allowed_decisions=ALL,
        )
        return {"decision": d.model_dump(mode="json")}

    builder = StateGraph(RefundState)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)
