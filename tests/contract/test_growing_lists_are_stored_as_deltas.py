"""A message list that grows by one message a step is stored as deltas, in linear space.

Full copies of a 120-step thread would take ~60 times its messages; stored as
deltas it takes less than 4 times (snapshots now and then), and the deltas
themselves hold almost nothing: they refer to the pending writes that already
hold the new messages. Every checkpoint of the history reads back exactly, and
a second saver (no cache) reads the same and keeps growing the chain. On both
backends, through their sync savers; what is stored is read straight from the
storage (the blob rows of the schema, the value hash of the thread's keys).
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from langgraph_durable.checkpointers.redis._keys import Keys
from tests._backends import BACKENDS, POSTGRES, area_fixture
from tests._durability import open_saver
from tests._growing import growing_graph

STEPS = 120
PAYLOAD = STEPS * 1024  # what the messages take once: 768 random bytes each, in base64


def _graph(saver: Any) -> Any:
    return growing_graph(saver, payload=768)


def _stored_messages(backend: str, url: str, area: str) -> list[tuple[bool, int]]:
    """``(is a delta, bytes)`` of every stored value of channel ``messages`` of thread ``t``."""
    if backend == POSTGRES:
        query = sql.SQL(
            "SELECT type = 'delta', length(blob) FROM {} WHERE thread_id = 't' "
            "AND channel = 'messages'"
        ).format(sql.Identifier(area, "checkpoint_blobs"))
        with psycopg.connect(url) as conn:
            return [(bool(delta), int(size or 0)) for delta, size in conn.execute(query)]
    client = redis.Redis.from_url(url)
    try:
        values = client.hgetall(Keys(area).thread("t")[4])
    finally:
        client.close()
    return [
        (value.startswith(b"delta2\x00"), len(value))
        for field, value in values.items()
        if b"\x00messages\x00" in field
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_appends_are_deltas_and_values_stay_linear(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    with open_saver(backend, url, area) as saver:
        graph = _graph(saver)
        graph.invoke({"target": STEPS}, config)
        history = list(graph.get_state_history(config))
    for snap in history:
        assert len(snap.values.get("messages", [])) == max(snap.metadata["step"], 0)
    assert [m.id for m in history[0].values["messages"]] == [f"m{i}" for i in range(STEPS)]

    stored = _stored_messages(backend, url, area)
    deltas = [size for is_delta, size in stored if is_delta]
    assert len(deltas) > 100
    # full copies would be ~60x the payload here; snapshots double, deltas hold items once
    assert sum(size for _, size in stored) < 4 * PAYLOAD
    # and the deltas do not hold the items at all: they refer to the pending
    # writes that already do (~150 bytes each instead of ~1.2 KiB)
    assert sum(deltas) < 0.25 * PAYLOAD

    # a second saver (no cache) reads every checkpoint the same and keeps growing the chain
    with open_saver(backend, url, area) as other:
        again = _graph(other)
        assert [s.values for s in again.get_state_history(config)] == [s.values for s in history]
        again.invoke({"target": STEPS + 10}, config)
        assert len(again.get_state(config).values["messages"]) == STEPS + 10
    assert len(_stored_messages(backend, url, area)) > len(stored)
