"""Shared pieces of the durability tests: a workflow, saver openers, storage checks.

The workflow (``pipeline_graph``) exercises every write path a crash can hit:
ordinary steps, a parallel fan-out (several ``put_writes`` per super-step),
values too big or too rich to live inline (blob rows), and a human approval
(``request_approval`` -> ``approve``, with the decision store and claims).

``check_storage`` reads the backend's storage directly (SQL / raw keys) and
asserts that nothing is half-written; ``history`` reduces a thread to a
comparable shape.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import psycopg
from langgraph.graph import END, START, StateGraph
from psycopg import sql

from langgraph_durable.interrupts import AlreadyDecided, ApprovalSweeper, approve, request_approval
from tests._parts import part_of

BIG = bytes(range(256)) * 80  # 20 kB: never inline, always a blob row / value key


class PipelineState(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]
    blob: bytes
    nested: dict[str, Any]
    approved: bool
    by: str


def pipeline_graph(saver: Any, *, on_node: Any = None) -> Any:
    """``prep -> (left | right) -> review (approval) -> finish -> END``."""

    def node(name: str, update: Any) -> Any:
        def run(state: PipelineState) -> dict[str, Any]:
            if on_node is not None:
                on_node(name)
            out: dict[str, Any] = dict(update(state))
            out["log"] = [name]
            return out

        return run

    def review(state: PipelineState) -> dict[str, Any]:
        if on_node is not None:
            on_node("review")
        d = request_approval(
            {"n": state["n"], "items": len(state["log"])},
            timeout=timedelta(days=1),
            approvers=("ops",),
        )
        return {"approved": d.approved, "by": d.by, "log": ["review"]}

    builder = StateGraph(PipelineState)
    builder.add_node("prep", node("prep", lambda s: {"n": s["n"] + 1, "blob": BIG}))
    builder.add_node("left", node("left", lambda s: {"nested": {"l": [s["n"], "x" * 300]}}))
    builder.add_node("right", node("right", lambda s: {"n": s["n"] * 10}))
    builder.add_node("review", review)
    builder.add_node("finish", node("finish", lambda s: {"blob": s["blob"][::-1], "n": s["n"] + 7}))
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "left")
    builder.add_edge("prep", "right")
    builder.add_edge(["left", "right"], "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=saver)


PIPELINE_INPUT: dict[str, Any] = {"n": 1, "log": []}


def drive_to_end(graph: Any, saver: Any, thread_id: str) -> None:
    """Take a thread from wherever it is (nothing, mid-run, waiting) to its end.

    What a fresh process does after a crash: start the run if nothing was
    stored, approve a pending approval (or, if a dead process already recorded
    the decision, let the sweeper finish that resume), resume an unfinished
    run, until the thread has nothing left to do.
    """
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    for _ in range(20):
        if saver.get_tuple(cfg) is None:
            graph.invoke(PIPELINE_INPUT, cfg)
            continue
        state = graph.get_state(cfg)
        if state.interrupts:
            try:
                approve(graph, cfg, by="alice", roles=["ops"])
            except AlreadyDecided:
                # recorded by the killed process, not yet resumed: lease 0 makes
                # its claim abandoned now (one process at a time in these tests)
                ApprovalSweeper(graph, lease=timedelta(0)).run_once()
            continue
        # not ``state.next``: after a crash between a step's writes and its
        # checkpoint, every task has its writes, so ``next`` is empty although
        # the run is not over; ``tasks`` still lists them
        if state.next or state.tasks:
            graph.invoke(None, cfg)
            continue
        return
    raise AssertionError(f"thread {thread_id} did not finish in 20 rounds")


def final_values(graph: Any, thread_id: str) -> dict[str, Any]:
    """The thread's final state values."""
    return dict(graph.get_state({"configurable": {"thread_id": thread_id}}).values)


def history(saver: Any, thread_id: str) -> list[tuple[Any, ...]]:
    """``(step, source, parent is the previous one)`` of the thread, oldest first.

    Asserts the history is one linear chain: every checkpoint but the first
    names the one before it as parent, and no checkpoint has two children.
    """
    tuples = list(saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}))
    tuples.reverse()
    ids = [t.config["configurable"]["checkpoint_id"] for t in tuples]
    parents = [
        t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
        for t in tuples
    ]
    assert parents[:1] == [None], parents
    assert parents[1:] == ids[:-1], f"history of {thread_id} is not one linear chain"
    return [(t.metadata.get("step"), t.metadata.get("source")) for t in tuples]


# -- opening savers ------------------------------------------------------------


@contextmanager
def open_saver(backend: str, url: str, area: str, *, pool_size: int = 4) -> Iterator[Any]:
    """A set-up sync saver of ``backend`` on the isolated ``area`` (schema / prefix)."""
    if backend == "postgres":
        from langgraph_durable.checkpointers.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url, schema=area, pool_size=pool_size) as saver:
            saver.setup()
            yield saver
    elif backend == "redis":
        from langgraph_durable.checkpointers.redis import RedisSaver

        with RedisSaver.from_conn_string(url, prefix=area) as saver:
            saver.setup()
            yield saver
    else:
        raise AssertionError(backend)


def storage_area(backend: str, request: Any) -> tuple[str, str]:
    """``(url, schema or prefix)`` of an isolated area of its own on the shared server.

    On Postgres the schema is set up already (see ``tests/_set_up_schemas.py``).
    """
    if backend == "postgres":
        return request.getfixturevalue("pg_set_up_schema")  # type: ignore[no-any-return]
    if backend == "redis":
        return request.getfixturevalue("redis_prefix")  # type: ignore[no-any-return]
    raise AssertionError(backend)


# -- direct storage checks -------------------------------------------------------


def check_storage(backend: str, saver: Any) -> None:
    """Assert every checkpoint loads and no wait is left (call once every thread finished).

    Every checkpoint and its writes load through the saver, and no wait-index
    entry is left behind. Completeness of each checkpoint is checked directly
    in storage by :func:`stored_shape`, compared with an uninterrupted run.
    """
    for tup in saver.list(None):
        # decoding every channel and write of every checkpoint must work
        assert saver.get_tuple(tup.config) is not None
    # finished threads wait for nothing: an interrupt indexed against a
    # checkpoint a crash never stored is gone once the thread moved on
    assert part_of(saver, "waits").list_waits() == []


def stored_shape(backend: str, url: str, area: str, thread_id: str) -> list[Any]:
    """What storage holds per checkpoint of the thread, oldest first, read directly.

    ``(step, channels holding a value, channels of its pending writes per
    task)``. A checkpoint whose blob rows (value keys) were lost or written
    apart from it, or a task whose writes were half stored, differs from the
    same step of an uninterrupted run (see :func:`same_shape`). Writes against
    a checkpoint that was never stored are legitimate and not listed: with
    LangGraph's default ``durability="async"`` the next step's writes may land
    before a killed process stored the step's checkpoint; nothing refers to
    them and the resumed run uses a new id.
    """
    if backend == "postgres":
        return _pg_stored_shape(url, area, thread_id)
    if backend == "redis":
        return _redis_stored_shape(url, area, thread_id)
    raise AssertionError(backend)


def _redis_stored_shape(url: str, prefix: str, thread_id: str) -> list[Any]:
    import ormsgpack
    import redis

    from langgraph_durable.checkpointers import default_serde
    from langgraph_durable.checkpointers.redis._keys import Keys

    serde = default_serde()
    names = ("z", "za", "c", "r", "b", "x", "w", "wi")
    keys = dict(zip(names, Keys(prefix).thread(thread_id)[: len(names)], strict=True))
    client = redis.Redis.from_url(url)
    try:
        records = client.hgetall(keys["c"])
        refs = client.hgetall(keys["r"])
        blobs = client.hgetall(keys["b"])
        writes = client.hgetall(keys["w"])
    finally:
        client.close()
    shape = []
    for field in sorted(records):
        ns, cid = field.split(b"\x00", 1)
        if ns:
            continue
        # record formats 1 and 2 share their first six items (2 appends ts and
        # flags, and leaves the type out when it is msgpack)
        _fmt, ck_type, ck_bytes, md_type, md_bytes, _v = ormsgpack.unpackb(records[field])[:6]
        checkpoint = serde.loads_typed((ck_type or "msgpack", ck_bytes))
        metadata = serde.loads_typed((md_type or "msgpack", md_bytes))
        channels = set(checkpoint["channel_values"])
        for blob_field in ormsgpack.unpackb(refs[field])[1]:
            raw = blobs.get(blob_field.encode())
            if raw is not None and not raw.startswith(b"empty\x00"):
                channels.add(blob_field.split("\x00")[1])
        prefix_w = b"\x00" + cid + b"\x00"
        task_channels = [
            (w.split(b"\x00", 4)[0].decode(), w.split(b"\x00", 4)[2].decode())
            for f, w in writes.items()
            if f.startswith(prefix_w)
        ]
        shape.append((metadata.get("step"), tuple(sorted(channels)), _per_task(task_channels)))
    return shape


def _pg_stored_shape(url: str, schema: str, thread_id: str) -> list[Any]:
    s = sql.Identifier(schema)
    query = sql.SQL(
        """
        SELECT (c.metadata ->> 'step')::int, ARRAY(
            SELECT k FROM jsonb_object_keys(c.checkpoint -> 'channel_values') AS k
            UNION
            SELECT b.channel FROM {s}.checkpoint_blobs AS b
            JOIN jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
              ON b.channel = v.key AND b.version = v.value
            WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
              AND b.type <> 'empty'
            ORDER BY 1), ARRAY(
            SELECT w.task_id || chr(1) || w.channel FROM {s}.checkpoint_writes AS w
            WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
              AND w.checkpoint_id = c.checkpoint_id)
        FROM {s}.checkpoints AS c
        WHERE c.thread_id = %s AND c.checkpoint_ns = ''
        ORDER BY c.checkpoint_id
        """
    ).format(s=s)
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(query, (thread_id,)).fetchall()
    return [(step, tuple(chs), _per_task(w.split("\x01", 1) for w in ws)) for step, chs, ws in rows]


def _per_task(task_channels: Any) -> tuple[tuple[str, ...], ...]:
    """The channels each ``put_writes`` call stored, sorted (task ids vary per run).

    A task's ``__interrupt__`` comes in a call of its own (the node raised),
    its result writes in another one when it is resumed.
    """
    by_task: dict[tuple[str, bool], list[str]] = {}
    for task_id, channel in task_channels:
        by_task.setdefault((task_id, channel == "__interrupt__"), []).append(channel)
    return tuple(sorted(tuple(sorted(chs)) for chs in by_task.values()))


def same_shape(stored: list[Any], expected: list[Any]) -> bool:
    """Whether a crashed-and-resumed thread's storage matches an uninterrupted one.

    Same steps, same channels holding values at each. Each task's writes are
    all there or all absent: a whole task's writes may be missing from a
    checkpoint that has a child, since with ``durability="async"`` the child
    (which already holds their effect) can be stored before a killed process
    stored them; the last checkpoint must match exactly.
    """
    if [s[:2] for s in stored] != [e[:2] for e in expected]:
        return False
    for i, (got, want) in enumerate(zip(stored, expected, strict=True)):
        remaining = list(want[2])
        for group in got[2]:
            if group not in remaining:
                return False  # a task's writes are half there (or foreign)
            remaining.remove(group)
        if remaining and i == len(expected) - 1:
            return False
    return True
