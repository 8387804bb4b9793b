"""DeltaChannel state: the one-query history matches the reference walk; prune keeps it."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph


def _extend(state: list[str], writes: list[list[str]]) -> list[str]:
    return state + [item for batch in writes for item in batch]


class State(TypedDict):
    log: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=3)]
    count: int


def _step(state: State) -> dict[str, Any]:
    n = state.get("count", 0) + 1
    return {"log": [f"a{n}", f"b{n}"], "count": n}


def _route(state: State) -> str:
    return END if state["count"] >= 7 else "step"


def _graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("step", _step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", _route)
    return b.compile(checkpointer=saver)


def _expected(n: int) -> list[str]:
    return ["start"] + [x for i in range(1, n + 1) for x in (f"a{i}", f"b{i}")]


async def test_history_matches_the_reference_walk_and_prune_keeps_state(saver) -> None:
    graph = _graph(saver)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    out = await graph.ainvoke({"log": ["start"], "count": 0}, config)
    assert out["log"] == _expected(7)

    # every checkpoint of the thread: one query == BaseCheckpointSaver's get_tuple walk
    checked = 0
    async for tup in saver.alist(config):
        fast = await saver.aget_delta_channel_history(
            config=tup.config, channels=["log", "count", "missing"]
        )
        slow = await BaseCheckpointSaver.aget_delta_channel_history(
            saver, config=tup.config, channels=["log", "count", "missing"]
        )
        assert fast == slow, tup.config
        checked += 1
    assert checked >= 8
    assert await saver.aget_delta_channel_history(config=config, channels=[]) == {}
    missing = {"configurable": {"thread_id": f"none-{uuid.uuid4()}", "checkpoint_ns": ""}}
    assert await saver.aget_delta_channel_history(config=missing, channels=["log"]) == {
        "log": {"writes": []}
    }

    # keep_latest keeps what the latest checkpoint needs to rebuild `log`
    await saver.aprune([config["configurable"]["thread_id"]], strategy="keep_latest")
    remaining = [t async for t in saver.alist(config)]
    assert 1 <= len(remaining) < checked
    state = await _graph(saver).aget_state(config)
    assert state.values["log"] == _expected(7)
    # and the thread continues correctly
    out = await _graph(saver).ainvoke({"log": ["more"], "count": 6}, config)
    assert out["log"] == [*_expected(7), "more", "a7", "b7"]
