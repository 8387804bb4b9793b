"""The async saver's shared connection (AsyncLane) under cancellation.

A call cancelled while it opens the shared connection must not cancel the
other calls waiting for that connection (they were not cancelled).
"""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers.redis import AsyncRedisSaver


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_node("b", lambda s: {"items": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


async def test_a_call_cancelled_while_the_connection_opens_leaves_the_others_running(
    redis_prefix: tuple[str, str],
) -> None:
    url, prefix = redis_prefix
    for _ in range(5):
        async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
            lane = saver._runner.lane
            assert lane is not None
            configs = [
                {"configurable": {"thread_id": f"t-{uuid.uuid4()}", "checkpoint_ns": ""}}
                for _ in range(4)
            ]
            first = asyncio.ensure_future(saver.aget_tuple(configs[0]))
            # wait until the first call is opening the lane's connection
            for _ in range(1000):
                if lane._opening is not None:
                    break
                await asyncio.sleep(0)
            assert lane._opening is not None and lane._mux is None
            others = [asyncio.ensure_future(saver.aget_tuple(c)) for c in configs[1:]]
            await asyncio.sleep(0)  # the others now wait for the connection being opened
            first.cancel()
            got = await asyncio.gather(*others, return_exceptions=True)
            assert got == [None, None, None], got
            graph = _graph(saver)
            out = await graph.ainvoke({"items": []}, configs[1])
            assert out["items"] == ["a", "b"]
