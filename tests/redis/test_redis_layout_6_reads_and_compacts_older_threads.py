"""Layout step 6: fewer index entries, and threads of layout 5 still read.

Since step 6 a checkpoint's pending writes are listed in its refs (not one
``wi`` entry per write), ``za`` holds only subgraph namespaces' checkpoints
(the root's are in ``z``) and the metadata index ``x`` leaves out ``step``
(a step filter is checked on the refs). A thread stored in the layout-5 form
(rebuilt here from a layout-6 thread by plain commands: its writes back in
``wi``, its root checkpoints back in ``za``, its steps back in ``x``) reads
the same before ``setup()`` applies the step (an unregistered thread is never
migrated) and after it, and the step leaves it in the compact form.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from langgraph_durable.migrations.redis import latest_version

SEP = b"\x00"
Z, ZA, R, X, WI = 0, 1, 3, 5, 7


def _fill(saver: RedisSaver, thread: str) -> None:
    """Checkpoints in the root and in a subgraph namespace, each with two writes."""
    parents: dict[str, Any] = {}
    for step in range(6):
        for ns in ("", "child:1"):
            config = parents.get(ns) or {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
            cp = empty_checkpoint()
            cp["channel_values"] = {"items": [f"{ns}-{i}" for i in range(step + 1)]}
            cp["channel_versions"] = {"items": step + 1}
            md = {"source": "loop", "step": step, "run_id": f"run-{step % 2}"}
            parents[ns] = saver.put(config, cp, md, {"items": step + 1})
            saver.put_writes(parents[ns], [("items", [f"w{step}"]), ("other", step)], f"task{step}")


def _reads(saver: RedisSaver, thread: str) -> dict[str, Any]:
    def ids(tups: Any) -> list[tuple[str, str, list[Any]]]:
        return [
            (
                t.config["configurable"]["checkpoint_ns"],
                t.checkpoint["id"],
                [(tid, ch, v) for tid, ch, v in t.pending_writes or []],
            )
            for t in tups
        ]

    conf = {"configurable": {"thread_id": thread}}
    root = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    child = {"configurable": {"thread_id": thread, "checkpoint_ns": "child:1"}}
    everything = list(saver.list(conf))
    return {
        "all": ids(everything),
        "all_2": ids(saver.list(conf, limit=3)),
        "before": ids(
            saver.list(
                conf,
                before={"configurable": {"checkpoint_id": everything[4].checkpoint["id"]}},
                limit=4,
            )
        ),
        "root": ids(saver.list(root)),
        "child": ids(saver.list(child, limit=2)),
        "step": ids(saver.list(conf, filter={"step": 3})),
        "step_source": ids(saver.list(conf, filter={"step": 2, "source": "loop"})),
        "step_root": ids(saver.list(root, filter={"step": 4}, limit=1)),
        "run": ids(saver.list(conf, filter={"run_id": "run-1"}, limit=3)),
        "across": ids(saver.list(None, filter={"step": 5}, limit=10)),
        "across_all": ids(saver.list(None, filter={"source": "loop"}, limit=5)),
        "latest": ids([saver.get_tuple(root), saver.get_tuple(child)]),
        "values": [t.checkpoint["channel_values"] for t in everything],
    }


def _to_layout_5(raw: redis.Redis, prefix: str, thread: str) -> None:
    """Rewrite a layout-6 thread as layout 5 stored it."""
    keys = Keys(prefix).thread(thread)
    for f, refs in raw.hgetall(keys[R]).items():
        t = ormsgpack.unpackb(refs)
        for s in t[6:7][0] if len(t) > 6 else []:
            raw.zadd(keys[WI], {f + SEP + s.encode(): 0})
        raw.hset(keys[R], f, ormsgpack.packb(t[:6]))
        ns, cid = f.split(SEP, 1)
        raw.zadd(keys[ZA], {cid + SEP + ns: 0})
        for p in t[2]:
            if p.startswith('"step"\x00'):
                raw.zadd(keys[X], {p.encode() + cid + SEP + ns: 0})
    raw.set(Keys(prefix).layout(), 5)


def _compact(raw: redis.Redis, prefix: str, thread: str) -> bool:
    keys = Keys(prefix).thread(thread)
    refs = [ormsgpack.unpackb(v) for v in raw.hvals(keys[R])]
    return (
        raw.zcard(keys[WI]) == 0
        and all(len(t) == 7 and len(t[6]) == 2 for t in refs)
        and not any(m.endswith(SEP) for m in raw.zrange(keys[ZA], 0, -1))
        and raw.zcard(keys[ZA]) == 6
        and not raw.zrangebylex(keys[X], b'["step"\x00', b'["step"\x00\xff')
    )


def test_layout_5_threads_read_the_same_before_and_after_step_6(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        _fill(saver, "a")
        _fill(saver, "b")
        assert _compact(raw, prefix, "a")
        expected = _reads(saver, "a")
        assert [len(expected[k]) for k in ("all", "step", "step_source", "run", "across")] == [
            12,
            2,
            2,
            3,
            4,
        ]
        assert all(len(w) == 2 for _, _, w in expected["all"])
        _to_layout_5(raw, prefix, "a")
        _to_layout_5(raw, prefix, "b")
        assert not _compact(raw, prefix, "a")
        assert _reads(saver, "a") == expected  # old form, not migrated yet
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        assert int(raw.get(Keys(prefix).layout())) == latest_version() >= 6
        assert _compact(raw, prefix, "a") and _compact(raw, prefix, "b")
        assert _reads(saver, "a") == expected
        # the migrated thread goes on: writes, prune, copy, delete by run
        saver.copy_thread("a", "c")
        assert _reads(saver, "c")["values"] == expected["values"]
        saver.delete_for_runs(["run-1"])
        left = list(saver.list({"configurable": {"thread_id": "a"}}))
        assert {t.metadata["step"] for t in left} == {0, 2, 4}
        assert all(len(t.pending_writes or []) == 2 for t in left)
        saver.prune(["a"], strategy="keep_latest")
        assert len(list(saver.list({"configurable": {"thread_id": "a"}}))) == 2
        saver.delete_thread("a")
        assert not list(raw.scan_iter(match=f"{prefix}:{{t:a}}:*"))


def test_an_unmigrated_thread_keeps_working(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    """A layout-5 thread that step 6 did not reach (not registered) takes new checkpoints."""
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        _fill(saver, "a")
        expected = _reads(saver, "a")
        _to_layout_5(raw, prefix, "a")
        raw.set(Keys(prefix).layout(), latest_version())
        root = {"configurable": {"thread_id": "a", "checkpoint_ns": ""}}
        head = saver.get_tuple(root)
        assert head is not None
        cp = empty_checkpoint()
        cp["channel_values"] = {"items": ["x"]}
        cp["channel_versions"] = {"items": 99}
        new = saver.put(head.config, cp, {"source": "loop", "step": 6}, {"items": 99})
        saver.put_writes(new, [("items", ["late"])], "task-late")
        assert saver.get_tuple(new).pending_writes == [("task-late", "items", ["late"])]
        listed = _reads(saver, "a")
        assert listed["all"][1:] == expected["all"]
        assert listed["step"] == expected["step"]
        assert listed["across"] == expected["across"]
        across = saver.list(None, filter={"step": 6}, limit=10)
        assert [t.checkpoint["id"] for t in across] == [cp["id"]]
        saver.prune(["a"], strategy="keep_latest")
        kept = list(saver.list({"configurable": {"thread_id": "a"}}))
        assert [t.checkpoint["id"] for t in kept] == [cp["id"], expected["latest"][1][1]]


def test_a_write_stored_again_on_an_unmigrated_thread_is_listed_once(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    """A layout-5 thread keeps its writes in ``wi``; a write stored again moves to the refs.

    (It was listed in both, and every read returned it twice: an interrupt
    shown twice to the user after each resume.)
    """
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"a": 1}
        cp["channel_versions"] = {"a": 1}
        config = saver.put(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
            cp,
            {"source": "loop", "step": 1},
            {"a": 1},
        )
        saver.put_writes(config, [("__interrupt__", "first")], "task1")
        saver.put_writes(config, [("x", "v")], "task2")
        _to_layout_5(raw, prefix, "t")
        raw.set(Keys(prefix).layout(), latest_version())  # the step never reached it
        saver.put_writes(config, [("__interrupt__", "second")], "task1")  # replaces
        saver.put_writes(config, [("x", "v")], "task2")  # sent again (a retry)
        got = saver.get_tuple(config)
        assert got is not None
        assert got.pending_writes == [("task1", "__interrupt__", "second"), ("task2", "x", "v")]
        assert raw.zrange(Keys(prefix).thread("t")[7], 0, -1) == []  # moved to the refs


def test_a_step_that_fails_releases_the_layout_lock(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    """A thread the step cannot handle fails setup() loudly, and the lock is released.

    (The lock's release ran in a ``finally`` the shell never let run: the next
    setup() waited out the 60 s lock.) Damaged refs alone no longer stop the
    step: that checkpoint's writes stay in ``wi``, which readers also read.
    """
    import time

    from langgraph_durable.checkpointers import CheckpointerError

    url, prefix = redis_prefix
    keys = Keys(prefix)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        for thread in ("good", "damaged", "broken"):
            _fill(saver, thread)
            _to_layout_5(raw, prefix, thread)
        expected = _reads(saver, "good")
    damaged = keys.thread("damaged")
    raw.hset(damaged[3], raw.hkeys(damaged[3])[0], b"\xc1not refs")
    broken = keys.thread("broken")
    refs = raw.hgetall(broken[3])
    raw.delete(broken[3])
    raw.set(broken[3], b"not a hash")  # the step's HGET fails on it
    raw.set(keys.layout(), 5)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        start = time.monotonic()
        with pytest.raises(CheckpointerError):
            saver.setup()
        assert raw.exists(keys.layout_lock()) == 0
        raw.delete(broken[3])
        raw.hset(broken[3], mapping=refs)
        saver.setup()  # at once: nobody holds the lock
        assert time.monotonic() - start < 30
        assert raw.get(keys.layout()) == str(latest_version()).encode()
        # the good thread's own reads (the cross-thread listings also meet the
        # checkpoint whose refs this test damaged)
        got = _reads(saver, "good")
        for across in ("across", "across_all"):
            del got[across], expected[across]
        assert got == expected
