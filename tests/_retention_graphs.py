"""Small graphs for the retention tests: one that finishes, one that waits at an interrupt."""

from __future__ import annotations

import operator
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker


class State(TypedDict):
    steps: Annotated[list[str], operator.add]
    answer: str


def builder(kind: str) -> StateGraph[Any]:
    def work(state: State) -> dict[str, Any]:
        return {"steps": ["work"]}

    def ask(state: State) -> dict[str, Any]:
        if kind == "plain":
            return {"answer": interrupt("ok?")}
        if kind == "marked":
            deadline = datetime.now(timezone.utc) + timedelta(days=1)
            return {"answer": interrupt({WAIT_KEY: wait_marker("approval", deadline), "q": 1})}
        return {"answer": "none asked"}

    b = StateGraph(State)
    b.add_node("work", work)
    b.add_node("ask", ask)
    b.add_edge(START, "work")
    b.add_edge("work", "ask")
    b.add_edge("ask", END)
    return b


def run(saver: Any, thread: str, kind: str = "done") -> None:
    builder(kind).compile(checkpointer=saver).invoke(
        {"steps": []}, {"configurable": {"thread_id": thread}}
    )
