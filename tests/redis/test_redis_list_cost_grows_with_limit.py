"""list() reads what it returns: cost follows ``limit`` and matches, not the thread's length."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.redis import RedisSaver
from tests.redis._own_server import OwnRedis


@pytest.fixture
def counted() -> Iterator[tuple[RedisSaver, redis.Redis]]:
    # a server of our own: its command statistics count only this test
    server = OwnRedis(args=["--save", "", "--appendonly", "no"]).start()
    with RedisSaver.from_conn_string(server.url, prefix="p") as saver:
        client = redis.Redis.from_url(server.url)
        yield saver, client
        client.close()
    server.remove()


def _fill(saver: RedisSaver, thread_id: str, n: int) -> None:
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    for i in range(n):
        cp = empty_checkpoint()
        cp["channel_values"] = {"items": [i], "n": i}
        cp["channel_versions"] = {"items": saver.get_next_version(None, None), "n": i + 1}
        md = {"source": "loop", "step": i, "kind": "even" if i % 2 == 0 else "odd", "tag": i % 30}
        config = saver.put(config, cp, md, cp["channel_versions"])


def _reads(client: redis.Redis, fn: Any) -> int:
    """Server-side reads of checkpoint data (HGET/HMGET/ZSCORE, also from scripts) during fn."""
    client.config_resetstat()
    fn()
    stats = client.info("commandstats")
    return sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("hget", "hmget", "zscore"))


def test_list_with_limit_reads_the_same_on_short_and_long_threads(counted: Any) -> None:
    saver, client = counted
    _fill(saver, "short", 30)
    _fill(saver, "long", 300)
    costs = {}
    for tid in ("short", "long"):
        config = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
        got: list[Any] = []
        costs[tid] = _reads(client, lambda c=config, g=got: g.extend(saver.list(c, limit=10)))
        top = 29 if tid == "short" else 299
        assert [t.metadata["step"] for t in got] == list(range(top, top - 10, -1))
    assert costs["short"] == costs["long"] <= 40


def test_metadata_filters_use_the_index(counted: Any) -> None:
    saver, client = counted
    _fill(saver, "t", 300)
    config = {"configurable": {"thread_id": "t"}}
    got: list[Any] = []
    cost = _reads(client, lambda: got.extend(saver.list(config, filter={"tag": 7})))
    assert [t.metadata["step"] for t in got] == [277, 247, 217, 187, 157, 127, 97, 67, 37, 7]
    assert cost <= 40  # ten matches, not 300 checkpoints
    got.clear()
    cost = _reads(
        client, lambda: got.extend(saver.list(config, filter={"tag": 7, "kind": "odd"}, limit=3))
    )
    assert [t.metadata["step"] for t in got] == [277, 247, 217]
    assert cost <= 40
    # a value the index does not hold (a dict) is still answered, by checking pages
    assert list(saver.list(config, filter={"tag": {"x": 1}})) == []


def test_listing_across_threads_batches_round_trips_and_decodes_only_the_newest(
    counted: Any,
) -> None:
    saver, client = counted
    for t in range(150):
        _fill(saver, f"t{t:03d}", 3)
    trips = 0
    runner = saver._runner
    execute = runner.execute

    def counting(cmds: Any) -> Any:
        nonlocal trips
        trips += 1
        return execute(cmds)

    runner.execute = counting  # type: ignore[method-assign]
    got: list[Any] = []
    cost = _reads(client, lambda: got.extend(saver.list(None, filter={"kind": "even"}, limit=5)))
    # registry + 3 batches of 64 threads + the values of the 5 winners; not one per thread
    assert trips <= 6, trips
    # the index answers the filter: the 300 matches' records are read (three
    # reads each, in the scripts), the 150 odd checkpoints never
    assert cost <= 3 * 300 + 20, cost
    ids = [t.checkpoint["id"] for t in got]
    assert len(got) == 5 and ids == sorted(ids, reverse=True)
    assert all(t.metadata["kind"] == "even" for t in got)
    assert ids[0] == max(
        t.checkpoint["id"] for t in saver.list({"configurable": {"thread_id": "t149"}})
    )
