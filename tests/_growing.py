"""What the delta tests share: a thread whose message list grows by one message a step.

``growing_graph`` appends one ``AIMessage`` of incompressible text (ids ``m0``,
``m1``, ...) until the list holds the state's ``target``; ``put_items`` stores a
checkpoint whose one channel ``items`` holds a list, as a saver's caller would.
"""

from __future__ import annotations

import base64
import os
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages


class GrowingState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    target: int


def growing_graph(saver: Any, *, node: str = "append", payload: int = 300) -> Any:
    """The graph compiled with ``saver``; each message holds ``payload`` random bytes in base64."""

    def append(state: GrowingState) -> dict[str, Any]:
        text = base64.b64encode(os.urandom(payload)).decode()
        return {"messages": [AIMessage(content=text, id=f"m{len(state['messages'])}")]}

    def more(state: GrowingState) -> str:
        return node if len(state["messages"]) < state["target"] else END

    b = StateGraph(GrowingState)
    b.add_node(node, append)
    b.add_edge(START, node)
    b.add_conditional_edges(node, more, [node, END])
    return b.compile(checkpointer=saver)


def put_items(saver: Any, parent: str | None, items: list[Any], version: str) -> str:
    """Put a checkpoint of thread ``t`` whose channel ``items`` is ``items`` at ``version``."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"items": items}
    cp["channel_versions"] = {"items": version}
    conf: dict[str, Any] = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    if parent:
        conf["configurable"]["checkpoint_id"] = parent
    saver.put(conf, cp, {"step": len(items)}, {"items": version})
    return str(cp["id"])
