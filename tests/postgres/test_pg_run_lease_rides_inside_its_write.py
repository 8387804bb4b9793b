"""A run's lease statement rides inside the write it goes with: one statement.

The acquire of a run's lease travels with its first write and the release with
its last; on Postgres each is folded into that write's own statement
(``checkpointers/postgres/_lease_fold.py``), so a leased write is one statement
like any other, not a pipeline of two. The lease changes only together with the
write: when a ``put``'s delta base is gone and its first statement writes
nothing, the retry that writes the checkpoint is the one that takes or gives
back the lease.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import Cursor

from langgraph_durable.checkpointers.postgres import PostgresSaver
from tests._growing import put_items

SENT: list[str] = []


class CountingCursor(Cursor[Any]):
    """A real cursor that records every statement it sends."""

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        SENT.append(str(query))
        return super().execute(query, *args, **kwargs)


def _lease_row(url: str, schema: str, thread_id: str) -> tuple[Any, ...] | None:
    with psycopg.connect(url) as conn:
        return conn.execute(
            f'SELECT state, owner, token FROM "{schema}".durable_run_leases WHERE thread_id = %s',
            (thread_id,),
        ).fetchone()


def _acquire(thread_id: str, owner: str = "me") -> tuple[str, dict[str, Any]]:
    now = datetime.now(timezone.utc)
    return (
        "acquire_lease",
        {"thread_id": thread_id, "owner": owner, "now": now, "ttl": timedelta(seconds=30)},
    )


def _release(thread_id: str, owner: str = "me") -> tuple[str, dict[str, Any]]:
    now = datetime.now(timezone.utc)
    return (
        "release_lease",
        {"thread_id": thread_id, "owner": owner, "now": now, "reason": "finished", "error": None},
    )


def test_a_leased_write_is_one_statement(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True, cursor_factory=CountingCursor) as conn:
        saver = PostgresSaver(conn, schema=schema, leases=False)
        saver.setup()
        tid = f"t-{uuid.uuid4()}"
        cp = empty_checkpoint()
        cp["channel_values"] = {"n": 1, "blob": b"x" * 100}
        cp["channel_versions"] = {"n": "1", "blob": "1"}
        cfg = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
        SENT.clear()
        # first write: put_writes with the acquire
        stored = {"configurable": {**cfg["configurable"], "checkpoint_id": cp["id"]}}
        result, record, released = saver.leases.run_with_lease(
            "put_writes",
            saver.core.put_writes(stored, [("n", 2)], "task", ""),
            _acquire(tid),
            None,
        )
        assert len(SENT) == 1 and "durable_run_leases" in SENT[0]
        assert result is None and released is None
        assert record is not None and record.owner == "me" and record.state == "running"
        assert _lease_row(url, schema, tid) == ("running", "me", record.token)
        # last write: put with the release
        result, record, released = saver.leases.run_with_lease(
            "put",
            saver.core.put(cfg, cp, {"step": 1}, cp["channel_versions"]),
            None,
            _release(tid),
        )
        assert len(SENT) == 2 and "durable_run_leases" in SENT[1]
        assert result["configurable"]["checkpoint_id"] == cp["id"] and released is True
        assert _lease_row(url, schema, tid)[0] == "released"
        assert saver.get_tuple(cfg).checkpoint["channel_values"]["blob"] == b"x" * 100
        # a release by another owner gives nothing back, and the write still happens
        cp2 = empty_checkpoint()
        cp2["channel_versions"] = {}
        _, _, released = saver.leases.run_with_lease(
            "put", saver.core.put(cfg, cp2, {"step": 2}, {}), None, _release(tid, "other")
        )
        assert released is False
        assert saver.get_tuple(cfg).checkpoint["id"] == cp2["id"]
        # an acquire and a release in one write change one row twice: still a pipeline
        cp3 = empty_checkpoint()
        cp3["channel_versions"] = {}
        _, record, released = saver.leases.run_with_lease(
            "put",
            saver.core.put(cfg, cp3, {"step": 3}, {}),
            _acquire(tid, "again"),
            _release(tid, "again"),
        )
        assert record is not None and released is True
        assert _lease_row(url, schema, tid)[:2] == ("released", "again")


def _gone_base(url: str, schema: str, saver: PostgresSaver) -> tuple[str, list[Any]]:
    """A thread whose newest value version the saver holds but another process deleted."""
    parent = None
    items: list[Any] = []
    for n in range(1, 6):
        items = [{"id": i, "text": "x" * 120} for i in range(n * 3)]
        parent = put_items(saver, parent, items, f"{n:04}")
    with psycopg.connect(url, autocommit=True) as conn:
        deleted = conn.execute(
            f'DELETE FROM "{schema}".checkpoint_blobs WHERE thread_id = %s AND version = %s',
            ("t", "0005"),
        ).rowcount
    assert deleted == 1
    assert [link.version for _, link in saver.core._chains.links("t", "")] == ["0005"]
    assert parent is not None
    return parent, items


def _next_put(saver: PostgresSaver, parent: str, items: list[Any]) -> tuple[Any, Any]:
    items = [*items, {"id": 99, "text": "y" * 120}]
    cp = empty_checkpoint()
    cp["channel_values"] = {"items": items}
    cp["channel_versions"] = {"items": "0006"}
    cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": parent}}
    return saver.core.put(cfg, cp, {"step": 6}, {"items": "0006"}), items


def test_the_lease_changes_with_the_statement_that_writes(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True, cursor_factory=CountingCursor) as conn:
        saver = PostgresSaver(conn, schema=schema, leases=False)
        saver.setup()
        saver._runner.run(
            "acquire_lease",
            saver.leases._op_acquire_lease(
                "t", "me", datetime.now(timezone.utc), timedelta(seconds=30)
            ),
        )
        parent, items = _gone_base(url, schema, saver)
        op, items = _next_put(saver, parent, items)
        SENT.clear()
        result, _, released = saver.leases.run_with_lease("put", op, None, _release("t"))
        # the delta's base was gone: nothing written, then the whole value with the release
        assert len(SENT) == 2
        # released exactly once (a release in the first, unwritten statement would make
        # the retry's release find nothing and report False)
        assert released is True
        assert _lease_row(url, schema, "t")[0] == "released"
        got = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert got is not None and got.checkpoint["id"] == result["configurable"]["checkpoint_id"]
        assert got.checkpoint["channel_values"]["items"] == items


def test_an_acquire_rides_with_the_retry_too(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True, cursor_factory=CountingCursor) as conn:
        saver = PostgresSaver(conn, schema=schema, leases=False)
        saver.setup()
        parent, items = _gone_base(url, schema, saver)
        op, items = _next_put(saver, parent, items)
        SENT.clear()
        _, record, _ = saver.leases.run_with_lease("put", op, _acquire("t"), None)
        assert len(SENT) == 2
        assert record is not None and record.state == "running" and record.token == 1
        assert _lease_row(url, schema, "t") == ("running", "me", 1)
        got = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert got is not None and got.checkpoint["channel_values"]["items"] == items
