"""On Redis a delta refers to the pending writes that hold its new items.

The writes are stored once; the delta names them. Reads rebuild the exact
value, prune/delete_for_runs keep the writes a kept delta needs (and drop them
with the last delta that does), a write stored with other bytes than the ones
the delta was cut from makes the put copy the items instead, and deltas of the
older form (``delta\\0<base>\\0<blob>``, layout steps 1-4) stay readable.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
import redis

from langgraph_durable.checkpointers import DeltaPolicy
from langgraph_durable.checkpointers._delta import DELTA_TYPE, delta_base, delta_writes
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from tests._growing import growing_graph, put_items


def _graph(saver: Any) -> Any:
    return growing_graph(saver, payload=300)


def _keys(prefix: str, thread: str = "t") -> list[str]:
    return Keys(prefix).thread(thread)


def _values(raw: redis.Redis, prefix: str) -> dict[bytes, bytes]:
    return {k: v for k, v in raw.hgetall(_keys(prefix)[4]).items() if b"\x00messages\x00" in k}


def _history(url: str, prefix: str, config: dict[str, Any]) -> list[Any]:
    """Every checkpoint's messages, read by a fresh saver (no cache)."""
    with RedisSaver.from_conn_string(url, prefix=prefix) as fresh:
        return [
            (s.config["configurable"]["checkpoint_id"], s.values.get("messages"))
            for s in _graph(fresh).get_state_history(config)
        ]


def _listed(raw: redis.Redis, prefix: str) -> int:
    """How many pending writes the checkpoints list (refs since layout step 6, else wi)."""
    refs = [ormsgpack.unpackb(v) for v in raw.hvals(_keys(prefix)[3])]
    return raw.zcard(_keys(prefix)[7]) + sum(len(t[6]) for t in refs if len(t) > 6)


def _named_writes(raw: redis.Redis, prefix: str) -> set[bytes]:
    """The write members the stored deltas refer to."""
    out = set()
    for v in _values(raw, prefix).values():
        if v.startswith(b"delta2\x00"):
            refs = delta_writes(DELTA_TYPE, v[len(b"delta2\x00") :])
            if refs:
                out |= {f"\x00{refs[0]}\x00{t}\x00{i}".encode() for t, i in refs[1]}
    return out


def test_deltas_name_writes_and_read_back_exactly(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    graph = _graph(sync_saver)
    graph.invoke({"target": 60}, config)
    deltas = [v for v in _values(raw, redis_prefix[1]).values() if v.startswith(b"delta2\x00")]
    assert len(deltas) > 40
    # no delta holds a message's text: each names the write that holds it
    # (but the rare put that LangGraph sends before the step's writes landed)
    texts = [m.content.encode() for m in graph.get_state(config).values["messages"]]
    assert len([d for d in deltas if any(t in d for t in texts)]) <= len(deltas) // 10
    history = _history(*redis_prefix, config)
    assert [len(m or []) for _, m in history] == [*range(60, -1, -1), 0]
    assert history[0][1] == graph.get_state(config).values["messages"]


def test_prune_keeps_the_writes_kept_deltas_refer_to(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    # a snapshot at least every 8 versions, so a later prune can drop old writes
    with RedisSaver.from_conn_string(url, prefix=prefix, deltas=DeltaPolicy(max_depth=7)) as s:
        s.setup()
        graph = _graph(s)
        graph.invoke({"target": 30}, config)
        before = graph.get_state(config).values["messages"]
        s.prune(["t"], strategy="keep_latest")
        assert raw.hlen(_keys(prefix)[2]) == 1  # one checkpoint left
        # its value's chain refers to writes of pruned checkpoints: all kept
        named = _named_writes(raw, prefix)
        assert all(raw.hexists(_keys(prefix)[6], m) for m in named)
        assert named or len(_values(raw, prefix)) == 1  # (unless it is a snapshot)
        assert _history(url, prefix, config)[0][1] == before
        # the thread goes on; once no kept delta needs them the old writes go
        graph.invoke({"target": 50}, config)
        after = graph.get_state(config).values["messages"]
        s.prune(["t"], strategy="keep_latest")
        assert _history(url, prefix, config)[0][1] == after
        assert after[:30] == before
        # the writes stored: those of the kept checkpoints and those kept for a delta
        members = [m.split(b"\x00") for m in raw.hkeys(_keys(prefix)[6])]
        assert len(members) <= 10
        assert raw.zcard(_keys(prefix)[7]) == 0  # since layout step 6 listed in the refs
        # a write kept for a delta is gone with the last delta that needs it
        checkpoints = {k.split(b"\x00")[1].decode() for k in raw.hkeys(_keys(prefix)[2])}
        values = _values(raw, prefix)
        assert len(values) <= 8  # the latest's chain: a snapshot and at most 7 deltas
        referenced = set()
        for v in values.values():
            if v.startswith(b"delta2\x00"):
                refs = delta_writes(DELTA_TYPE, v[len(b"delta2\x00") :])
                referenced |= {(refs[0], t, str(i)) for t, i in refs[1]} if refs else set()
        for m in members:
            cid, task, idx = (p.decode() for p in m[1:])
            assert cid in checkpoints or (cid, task, idx) in referenced


def test_delete_for_runs_keeps_writes_other_runs_need(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    graph = _graph(sync_saver)
    first = {"configurable": {"thread_id": "t", "run_id": "run-a"}, "recursion_limit": 999}
    graph.invoke({"target": 20}, first)
    second = {"configurable": {"thread_id": "t", "run_id": "run-b"}, "recursion_limit": 999}
    graph.invoke({"target": 40}, second)
    config = {"configurable": {"thread_id": "t"}}
    expected = _history(*redis_prefix, config)
    runs = [s.metadata.get("run_id") for s in graph.get_state_history(config)]
    assert runs.count("run-a") > 10 and runs.count("run-b") > 10
    # run-b's deltas build on run-a's values and refer to run-a's writes
    sync_saver.delete_for_runs(["run-a"])
    left = _history(*redis_prefix, config)
    assert left and len(left) < len(expected)
    assert left == [h for h in expected if h[0] in {c for c, _ in left}]
    assert left[0][1] is not None and len(left[0][1]) == 40


def test_copy_thread_copies_the_referenced_writes(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str]
) -> None:
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    _graph(sync_saver).invoke({"target": 25}, config)
    sync_saver.prune(["t"], strategy="keep_latest")
    sync_saver.copy_thread("t", "u")
    sync_saver.delete_thread("t")
    got = _history(*redis_prefix, {"configurable": {"thread_id": "u"}})
    assert [m.id for m in got[0][1]] == [f"m{i}" for i in range(25)]


def _item(i: int, fill: str = "x") -> dict[str, Any]:
    return {"i": i, "text": fill * 200}


_put = put_items


def test_a_write_stored_with_other_bytes_is_copied_not_referred_to(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    prefix = redis_prefix[1]
    items = [_item(i) for i in range(5)]
    parent = _put(sync_saver, None, items, "0001")
    conf = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": parent}}
    sync_saver.put_writes(conf, [("items", [_item(5, "y")])], "task-1")
    # another process's retry of the task stored first, with another item
    member = f"\x00{parent}\x00task-1\x000".encode()
    stored = raw.hget(_keys(prefix)[6], member)
    assert stored is not None
    raw.hset(_keys(prefix)[6], member, stored.replace(b"y" * 200, b"z" * 200))
    items = [*items, _item(5, "y")]
    cid = _put(sync_saver, parent, items, "0002")
    value = raw.hget(_keys(prefix)[4], b"\x00items\x000002")
    # the put did not refer to the write: its delta copies the item
    assert value is not None and value.startswith(b"delta2\x00") and b"y" * 200 in value
    got = sync_saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_id": cid}})
    assert got is not None and got.checkpoint["channel_values"]["items"] == items
    # with the writes as the saver stored them, the next put refers to them;
    # an item no write holds is copied into the delta
    conf["configurable"]["checkpoint_id"] = cid
    sync_saver.put_writes(conf, [("items", [_item(6, "w")])], "task-2")
    items = [*items, _item(6, "w"), _item(7, "u")]
    cid2 = _put(sync_saver, cid, items, "0003")
    value = raw.hget(_keys(prefix)[4], b"\x00items\x000003")
    assert value is not None and value.startswith(b"delta2\x00")
    assert b"w" * 200 not in value and b"u" * 200 in value
    with RedisSaver.from_conn_string(redis_prefix[0], prefix=prefix) as fresh:
        again = fresh.get_tuple({"configurable": {"thread_id": "t", "checkpoint_id": cid2}})
    assert again is not None and again.checkpoint["channel_values"]["items"] == items


def test_deltas_of_the_older_form_stay_readable(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    parent = None
    for n in range(1, 12):
        items = [_item(i) for i in range(n)]
        parent = _put(sync_saver, parent, items, f"{n:04}")
    # rewrite every delta as layout steps 1-4 stored it: delta\0<base>\0<blob>
    key = _keys(prefix)[4]
    converted = 0
    for fld, v in raw.hgetall(key).items():
        if v.startswith(b"delta2\x00"):
            blob = v[len(b"delta2\x00") :]
            base = delta_base(DELTA_TYPE, blob)
            assert base is not None
            raw.hset(key, fld, b"delta\x00" + base.encode() + b"\x00" + blob)
            converted += 1
    assert converted >= 5
    with RedisSaver.from_conn_string(url, prefix=prefix) as fresh:
        got = fresh.get_tuple({"configurable": {"thread_id": "t"}})
        assert got is not None and got.checkpoint["channel_values"]["items"] == items
        # a chain of both forms: extended, pruned, read back
        items = [*items, _item(11)]
        parent = _put(fresh, parent, items, "0012")
        assert raw.hget(key, b"\x00items\x000012").startswith(b"delta2\x00")
        fresh.prune(["t"], strategy="keep_latest")
    with RedisSaver.from_conn_string(url, prefix=prefix) as fresh:
        got = fresh.get_tuple({"configurable": {"thread_id": "t"}})
        assert got is not None and got.checkpoint["channel_values"]["items"] == items


class _LongVersions(RedisSaver):
    """Versions as this saver wrote them before layout step 5 (32-digit counter)."""

    def get_next_version(self, current: str | None, channel: None) -> str:
        n = 0 if current is None else int(str(current).split(".")[0])
        return f"{n + 1:032}.{0.5 + n / 1e6:016}"


def test_a_thread_of_long_versions_goes_on_with_short_ones(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    with _LongVersions.from_conn_string(url, prefix=prefix) as old:
        old.setup()
        _graph(old).invoke({"target": 6}, config)
    with RedisSaver.from_conn_string(url, prefix=prefix) as new:
        graph = _graph(new)
        graph.invoke({"target": 12}, config)
        state = graph.get_state(config)
        assert [m.id for m in state.values["messages"]] == [f"m{i}" for i in range(12)]
        versions = state.config and new.get_tuple(config).checkpoint["channel_versions"]
        assert len(versions["messages"]) == 23
        # every checkpoint reads back, the old ones with their long versions
        history = _history(url, prefix, config)
        final = state.values["messages"]
        lengths = [len(m or []) for _, m in history]
        assert lengths == sorted(lengths, reverse=True) and set(lengths) == set(range(13))
        assert all(m is None or m == final[: len(m)] for _, m in history)
    fields = [f for f in raw.hkeys(_keys(prefix)[4]) if b"\x00messages\x00" in f]
    assert {len(f.split(b"\x00")[2]) for f in fields} == {23, 49}


def test_an_upgrade_that_replaces_writes_keeps_those_deltas_refer_to(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    from langgraph_durable.migrations import StateMigrations, upgrade_all

    url, prefix = redis_prefix
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
    with RedisSaver.from_conn_string(url, prefix=prefix) as s:
        s.setup()
        _graph(s).invoke({"target": 30}, config)
        before = {
            t.config["configurable"]["checkpoint_id"]: t.checkpoint["channel_values"].get(
                "messages"
            )
            for t in s.list(config)
        }
    # renaming the node renames the task ids of every checkpoint's pending
    # writes: the old writes go, but those the deltas name are kept for them
    m = StateMigrations(version=1)
    m.rename_node(from_version=0, old="append", new="add")
    with RedisSaver.from_conn_string(url, prefix=prefix, migrations=m) as s:
        result = upgrade_all(s, m, all_history=True)
        assert result.upgraded == len(before) and not result.failures
    with RedisSaver.from_conn_string(url, prefix=prefix, migrations=m) as s:
        after = {
            t.config["configurable"]["checkpoint_id"]: t.checkpoint["channel_values"].get(
                "messages"
            )
            for t in s.list(config)
        }
        assert after == before
        # the renamed writes are the checkpoints' pending writes, once each
        tup = s.get_tuple(config)
        assert tup is not None
        assert _listed(raw, prefix) < raw.hlen(_keys(prefix)[6])
        # and the thread goes on under the new node name
        graph = growing_graph(s, node="add")
        graph.invoke({"target": 35}, config)
        assert [x.id for x in graph.get_state(config).values["messages"]] == [
            f"m{i}" for i in range(35)
        ]
