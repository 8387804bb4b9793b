"""A two-node graph that pauses at an interrupt: ``work`` then ``ask`` (``interrupt('ship it?')``).

Resumed with ``Command(resume=x)`` it ends with items ``[..., "worked", "answered:x"]``.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    """The graph's state: a list every node appends to."""

    items: Annotated[list[str], operator.add]


def _ask(state: State) -> dict[str, Any]:
    return {"items": [f"answered:{interrupt('ship it?')}"]}


def pause_graph(saver: Any) -> Any:
    """The graph compiled with ``saver``."""
    b = StateGraph(State)
    b.add_node("work", lambda s: {"items": ["worked"]})
    b.add_node("ask", _ask)
    b.add_edge(START, "work")
    b.add_edge("work", "ask")
    b.add_edge("ask", END)
    return b.compile(checkpointer=saver)
