"""On Redis a growing message list is stored as deltas, in linear space."""

from __future__ import annotations

from typing import Any

import redis

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from tests._growing import growing_graph


def _graph(saver: Any) -> Any:
    return growing_graph(saver, payload=768)


def test_appends_are_deltas_and_values_stay_linear(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    graph = _graph(sync_saver)
    graph.invoke({"target": 120}, config)
    history = list(graph.get_state_history(config))
    for snap in history:
        assert len(snap.values.get("messages", [])) == max(snap.metadata["step"], 0)
    assert [m.id for m in history[0].values["messages"]] == [f"m{i}" for i in range(120)]
    blobs = raw.hgetall(Keys(redis_prefix[1]).thread("t")[4])
    messages = [v for k, v in blobs.items() if b"\x00messages\x00" in k]
    deltas = [v for v in messages if v.startswith(b"delta2\x00")]
    assert len(deltas) > 100
    payload = 120 * 1024
    # full copies would be ~60x the payload here; snapshots double, deltas hold items once
    assert sum(map(len, messages)) < 4 * payload
    # and the deltas do not hold the items at all: they refer to the pending
    # writes that already do (~150 bytes each instead of ~1.2 KiB)
    assert sum(map(len, deltas)) < 0.25 * payload
    # a second saver (no cache) reads the same and keeps growing the chain
    with RedisSaver.from_conn_string(redis_prefix[0], prefix=redis_prefix[1]) as other:
        again = _graph(other)
        assert again.get_state(config).values == history[0].values
        again.invoke({"target": 130}, config)
        assert len(again.get_state(config).values["messages"]) == 130
    assert len(raw.hgetall(Keys(redis_prefix[1]).thread("t")[4])) > len(blobs)
