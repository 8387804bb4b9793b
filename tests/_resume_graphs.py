"""A refund graph answered by ``Command(resume=...)``, sync or async, with one side effect."""

from __future__ import annotations

import threading
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import DECIDER_KEY, arequest_approval, request_approval

ALL = ["approve", "reject", "edit", "respond"]


class RefundState(TypedDict, total=False):
    amount: int
    decision: dict[str, Any]


class SideEffects:
    """What the graph did after its approval (thread-safe), to count side effects."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: list[dict[str, Any]] = []

    def record(self, decision: dict[str, Any]) -> None:
        with self.lock:
            self.done.append(decision)


def refund_graph(
    saver: Any,
    effects: SideEffects,
    *,
    use_async: bool = False,
    approvers: tuple[str, ...] = ("ops",),
    allowed: list[str] | None = None,
    ui: str = "hitl",
    effect_in: str = "review",
) -> Any:
    """``START -> review -> pay -> END``, the side effect in ``review`` or ``pay``.

    In ``review`` it follows the approval in the same node, which only the run that
    won the decision passes. In ``pay`` it runs in every run that finds ``pay``
    pending: concurrent runs of one thread each run it unless runs are serialized
    (Agent Server's multitask strategy; our savers' ``multitask=``).
    """
    options: dict[str, Any] = {
        "approvers": approvers,
        "allowed_decisions": allowed or ALL,
        "description": "Refund the customer",
        "ui": ui,
    }

    def review(state: RefundState) -> dict[str, Any]:
        d = request_approval({"action": "refund", "amount": state["amount"]}, **options)
        if effect_in == "review":
            effects.record(d.model_dump(mode="json"))
        return {"decision": d.model_dump(mode="json")}

    async def areview(state: RefundState) -> dict[str, Any]:
        d = await arequest_approval({"action": "refund", "amount": state["amount"]}, **options)
        if effect_in == "review":
            effects.record(d.model_dump(mode="json"))
        return {"decision": d.model_dump(mode="json")}

    def pay(state: RefundState) -> dict[str, Any]:
        if effect_in == "pay":
            effects.record(state["decision"])
        return {}

    builder = StateGraph(RefundState)
    builder.add_node("review", areview if use_async else review)
    builder.add_node("pay", pay)
    builder.add_edge(START, "review")
    builder.add_edge("review", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=saver)


def as_user(thread_id: str, user: Any) -> dict[str, Any]:
    """The config of a resume naming its decider with our own key."""
    return {"configurable": {"thread_id": thread_id, DECIDER_KEY: user}}


def as_server_user(thread_id: str, user: Any) -> dict[str, Any]:
    """The config Agent Server gives a run of an authenticated user."""
    return {"configurable": {"thread_id": thread_id, "langgraph_auth_user": user}}
