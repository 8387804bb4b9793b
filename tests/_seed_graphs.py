"""The seed story's graphs: v1 pauses for review, v2 changed the state and renamed the node."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class StateV1(TypedDict, total=False):
    price: int
    approved: bool
    log: Annotated[list[str], operator.add]


class StateV2(TypedDict, total=False):
    price: dict[str, Any]
    approved: bool
    log: Annotated[list[str], operator.add]


def build_v1(checkpointer: Any, *, parallel: bool = False) -> Any:
    """plan -> review (interrupt) -> done; ``parallel``: plan also fans out to ``pricer``."""

    def plan(s: StateV1) -> dict[str, Any]:
        return {"price": s["price"] + 1, "log": ["plan"]}

    def review(s: StateV1) -> dict[str, Any]:
        ok = interrupt({"ask": "approve?", "price": s["price"]})
        return {"approved": ok, "log": ["review"]}

    def pricer(s: StateV1) -> dict[str, Any]:
        return {"price": s["price"] * 2, "log": ["pricer"]}

    def done(s: StateV1) -> dict[str, Any]:
        return {"log": [f"done v1 {s['price']}"]}

    g = StateGraph(StateV1)
    g.add_node("plan", plan)
    g.add_node("review", review)
    g.add_node("done", done)
    g.add_edge(START, "plan")
    g.add_edge("plan", "review")
    if parallel:
        g.add_node("pricer", pricer)
        g.add_edge("plan", "pricer")
        g.add_edge(["review", "pricer"], "done")
    else:
        g.add_edge("review", "done")
    g.add_edge("done", END)
    return g.compile(checkpointer=checkpointer)


def build_v2(checkpointer: Any, *, parallel: bool = False) -> Any:
    """The same flow after the deploy: ``price`` is money, ``review`` is ``human_review``."""

    def plan(s: StateV2) -> dict[str, Any]:
        p = s["price"]
        return {"price": {**p, "amount": p["amount"] + 1}, "log": ["plan"]}

    def human_review(s: StateV2) -> dict[str, Any]:
        ok = interrupt({"ask": "approve?", "price": s["price"]["amount"]})
        return {"approved": ok, "log": ["human_review"]}

    def pricer(s: StateV2) -> dict[str, Any]:
        p = s["price"]
        return {"price": {**p, "amount": p["amount"] * 2}, "log": ["pricer"]}

    def done(s: StateV2) -> dict[str, Any]:
        p = s["price"]
        return {"log": [f"done v2 {p['amount']} {p['currency']}"]}

    g = StateGraph(StateV2)
    g.add_node("plan", plan)
    g.add_node("human_review", human_review)
    g.add_node("done", done)
    g.add_edge(START, "plan")
    g.add_edge("plan", "human_review")
    if parallel:
        g.add_node("pricer", pricer)
        g.add_edge("plan", "pricer")
        g.add_edge(["human_review", "pricer"], "done")
    else:
        g.add_edge("human_review", "done")
    g.add_edge("done", END)
    return g.compile(checkpointer=checkpointer)


def seed_migrations(*, with_step: bool = True) -> Any:
    """``version=2``: 1 -> 2 turns ``price`` into money and renames ``review``."""
    from langgraph_durable.migrations import StateMigrations

    m = StateMigrations(version=2)
    if with_step:

        @m.upgrade(from_version=1)
        def price_to_money(values: dict[str, Any]) -> dict[str, Any]:
            values["price"] = {"amount": values["price"], "currency": "USD"}
            return values

        m.rename_node(from_version=1, old="review", new="human_review")
    return m


def v1_migrations() -> Any:
    from langgraph_durable.migrations import StateMigrations

    return StateMigrations(version=1)
