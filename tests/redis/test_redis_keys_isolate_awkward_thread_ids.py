"""Thread ids with ``{ } : * ? [``, spaces or non-ASCII never collide, match or split slots."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from redis.cluster import RedisCluster, key_slot

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys

AWKWARD = [
    "a",
    "a:b",
    "a*",
    "{a}",
    "a}",
    "{a",
    "}{",
    "a b",
    "a?",
    "a[",
    "[a-z]",
    "é☃",
    "",
    "%7Ba%7D",
]


def _put(saver: RedisSaver, thread_id: str, ns: str = "") -> None:
    cp = empty_checkpoint()
    cp["channel_values"] = {"who": [thread_id, ns]}
    cp["channel_versions"] = {"who": saver.get_next_version(None, None)}
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    saver.put(config, cp, {"source": "input", "step": -1}, cp["channel_versions"])


def _who(saver: RedisSaver, thread_id: str, ns: str = "") -> Any:
    tup = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}})
    return None if tup is None else tup.checkpoint["channel_values"]["who"]


def _check_isolation(saver: RedisSaver) -> None:
    for tid in AWKWARD:
        for ns in ("", "a*", "x:{y}"):
            _put(saver, tid, ns)
    for tid in AWKWARD:
        for ns in ("", "a*", "x:{y}"):
            assert _who(saver, tid, ns) == [tid, ns]
        assert len(list(saver.list({"configurable": {"thread_id": tid}}))) == 3
    saver.delete_thread("a*")
    assert _who(saver, "a*") is None
    for tid in AWKWARD:
        if tid != "a*":
            assert _who(saver, tid) == [tid, ""], tid
            assert len(list(saver.list({"configurable": {"thread_id": tid}}))) == 3
    saver.delete_thread("{a}")
    assert _who(saver, "{a}") is None and _who(saver, "a") == ["a", ""]
    assert _who(saver, "%7Ba%7D") == ["%7Ba%7D", ""]


def test_awkward_thread_ids_are_isolated(sync_saver: RedisSaver) -> None:
    _check_isolation(sync_saver)


def test_every_key_of_a_thread_shares_one_slot() -> None:
    keys = Keys("p")
    slots = {}
    for tid in AWKWARD:
        thread_slots = {key_slot(k.encode()) for k in keys.thread(tid)}
        assert len(thread_slots) == 1, tid
        slots[tid] = thread_slots.pop()
    # escaping keeps the tag injective: "{a}" and "%7Ba%7D" differ in their keys
    assert keys.thread("{a}") != keys.thread("%7Ba%7D")
    assert len({tuple(keys.thread(t)) for t in AWKWARD}) == len(AWKWARD)


def test_the_prefix_cannot_carry_a_hash_tag(redis_prefix: tuple[str, str]) -> None:
    from langgraph_durable.checkpointers import InvalidConfigError

    with pytest.raises(InvalidConfigError) as err:
        RedisSaver.from_conn_string(redis_prefix[0], prefix="x{y}").__enter__()
    assert err.value.field == "prefix"


@pytest.mark.cluster
def test_awkward_thread_ids_are_isolated_on_a_cluster(cluster_prefix: tuple[str, str]) -> None:
    url, prefix = cluster_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        assert isinstance(saver.client, RedisCluster)
        saver.setup()
        _check_isolation(saver)
        # the threads really are spread over the three masters
        nodes = {saver.client.get_node_from_key(Keys(prefix).thread(t)[0]).name for t in AWKWARD}
        assert len(nodes) > 1


def test_names_do_not_leak_across_prefixes(redis_prefix: tuple[str, str]) -> None:
    url, prefix = redis_prefix
    with (
        RedisSaver.from_conn_string(url, prefix=prefix) as a,
        RedisSaver.from_conn_string(url, prefix=prefix + "x" + uuid.uuid4().hex[:4]) as b,
    ):
        _put(a, "same")
        assert _who(b, "same") is None
        b.delete_thread("same")
        assert _who(a, "same") == ["same", ""]
