"""Redis restarts mid-run: calls fail cleanly while down, then reconnect; acked data stays."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests.redis._own_server import OwnRedis


class State(TypedDict):
    n: int


def _graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("inc", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "inc")
    b.add_edge("inc", END)
    return b.compile(checkpointer=saver)


def test_sync_saver_survives_a_restart(own_redis: OwnRedis) -> None:
    config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    with RedisSaver.from_conn_string(own_redis.url, prefix="r") as saver:
        saver.setup()
        graph = _graph(saver)
        assert graph.invoke({"n": 1}, config)["n"] == 2
        own_redis.stop()
        with pytest.raises(StorageUnavailableError) as err:
            saver.get_tuple(config)
        assert err.value.operation == "get_tuple"
        own_redis.start()
        # the same saver (and client) reconnects; what was acknowledged is there
        assert graph.get_state(config).values == {"n": 2}
        assert graph.invoke({"n": 10}, config)["n"] == 11
        assert len(list(saver.list(config))) == 6


async def test_async_saver_survives_a_restart(own_redis: OwnRedis) -> None:
    config: Any = {"configurable": {"thread_id": f"t-{uuid.uuid4()}"}}
    async with AsyncRedisSaver.from_conn_string(own_redis.url, prefix="r") as saver:
        await saver.setup()
        graph = _graph(saver)
        assert (await graph.ainvoke({"n": 1}, config))["n"] == 2
        own_redis.stop()
        with pytest.raises(StorageUnavailableError):
            await saver.aget_tuple(config)
        own_redis.start()
        assert (await graph.aget_state(config)).values == {"n": 2}
        assert (await graph.ainvoke({"n": 5}, config))["n"] == 6
