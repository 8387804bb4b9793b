"""What Postgres adds to the delta storage of growing lists (both backends:
``tests/contract/test_growing_lists_are_stored_as_deltas.py``).

A thread the official langgraph-checkpoint-postgres wrote keeps growing
through our saver as deltas, and its old checkpoints stay readable by the
official saver; what our saver wrote as deltas is not (the documented rollback
caveat), and fails loudly instead of reading wrong. A delta row names the
checkpoint whose writes hold its items (``writes_of``), and a put waits for
its step's writes still being stored.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres import PostgresSaver as OfficialSaver
from psycopg import sql

from langgraph_durable.checkpointers.postgres import PostgresSaver
from tests._growing import growing_graph
from tests._pg_locks import wait_until_blocked_by


def _graph(saver: Any) -> Any:
    return growing_graph(saver, payload=768)


def _run(graph: Any, thread: str, target: int) -> None:
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 999}
    graph.invoke({"target": target}, config)


def _blob_stats(url: str, schema: str) -> dict[str, tuple[int, int]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            sql.SQL(
                "SELECT type, count(*), sum(length(blob)) FROM {}.checkpoint_blobs "
                "WHERE channel = 'messages' GROUP BY type"
            ).format(sql.Identifier(schema))
        ).fetchall()
    return {t: (n, int(b or 0)) for t, n, b in rows}


def test_an_official_thread_grows_as_deltas_and_rollback_fails_loudly(pg_database) -> None:
    # a database of its own: the official setup() runs CREATE INDEX CONCURRENTLY, which
    # waits for every older transaction in the same database
    url, schema = pg_database, "public"
    official_url = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    config = {"configurable": {"thread_id": "t"}}
    with OfficialSaver.from_conn_string(official_url) as official:
        official.setup()
        _run(_graph(official), "t", 20)
        old = list(_graph(official).get_state_history(config))
    with PostgresSaver.from_conn_string(url, schema=schema) as ours:
        ours.setup()
        graph = _graph(ours)
        assert [s.values for s in graph.get_state_history(config)] == [s.values for s in old]
        _run(graph, "t", 60)
        assert len(graph.get_state(config).values["messages"]) == 60
    assert _blob_stats(url, schema)["delta"][0] > 30
    with OfficialSaver.from_conn_string(official_url) as official:
        graph = _graph(official)
        # checkpoints written before the change still read the same...
        for snap in old:
            assert graph.get_state(snap.config).values == snap.values
        # ...the ones written as deltas do not read at all (docs/guides/adopting.md)
        with pytest.raises(NotImplementedError, match="delta"):
            graph.get_state(config)


def test_deltas_refer_to_the_pending_writes_that_hold_their_items(pg_schema) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        graph = _graph(saver)
        _run(graph, "t", 80)
        expected = [s.values for s in graph.get_state_history({"configurable": {"thread_id": "t"}})]
    with psycopg.connect(url) as conn:
        refs, delta_bytes = conn.execute(
            sql.SQL(
                "SELECT count(*), sum(length(blob)) FROM {}.checkpoint_blobs "
                "WHERE type = 'delta' AND writes_of IS NOT NULL"
            ).format(sql.Identifier(schema))
        ).fetchone()
    assert refs > 70
    assert delta_bytes < 200 * refs  # the 1 KiB messages live in the writes only
    # a fresh saver (no caches) reads every checkpoint exactly
    with PostgresSaver.from_conn_string(url, schema=schema) as other:
        history = list(_graph(other).get_state_history({"configurable": {"thread_id": "t"}}))
        assert [s.values for s in history] == expected


def test_a_write_stored_with_other_bytes_is_not_referred_to(pg_schema) -> None:
    """Two savers write the same task's write; the store keeps the first one's bytes."""
    from langgraph.checkpoint.base import empty_checkpoint

    url, schema = pg_schema
    first = [AIMessage(content="x" * 600, id="m0")]
    with (
        PostgresSaver.from_conn_string(url, schema=schema) as a,
        PostgresSaver.from_conn_string(url, schema=schema) as b,
    ):
        a.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": first}
        cp["channel_versions"] = {"messages": b.get_next_version(None, None)}
        base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        c1 = b.put(base, cp, {"step": 1}, cp["channel_versions"])
        win, lose = AIMessage(content="y" * 600, id="m1"), AIMessage(content="z" * 600, id="m1")
        a.put_writes(c1, [("messages", [win])], "task-1")
        b.put_writes(c1, [("messages", [lose])], "task-1")  # kept out: a's came first
        cp2 = empty_checkpoint()
        cp2["channel_values"] = {"messages": [*first, lose]}
        cp2["channel_versions"] = {
            "messages": b.get_next_version(cp["channel_versions"]["messages"], None)
        }
        c2 = b.put(c1, cp2, {"step": 2}, cp2["channel_versions"])
    with PostgresSaver.from_conn_string(url, schema=schema) as fresh:
        got = fresh.get_tuple(c2)
        assert got is not None and got.checkpoint["channel_values"]["messages"] == [*first, lose]
        assert fresh.get_tuple(c1).pending_writes == [("task-1", "messages", [win])]


def test_a_put_waits_for_its_steps_writes_still_being_stored(pg_schema) -> None:
    """LangGraph runs a step's put_writes and the next put at the same time.

    The put that overtook the writes copied their items (or, early in a thread,
    wrote a snapshot), which moved every later snapshot: 5% of 300-step threads
    stored over 5x. Here the writes are held back by another transaction's
    uncommitted row of the same key, so the put certainly starts while they are
    in flight.
    """
    import threading
    import time

    from langgraph.checkpoint.base import empty_checkpoint
    from psycopg_pool import ConnectionPool

    url, schema = pg_schema
    first = [AIMessage(content="x" * 600, id="m0")]
    added = AIMessage(content="y" * 600, id="m1")
    # a pool, so the put does not queue behind the writes for one connection
    with ConnectionPool(url, min_size=2, max_size=4, kwargs={"autocommit": True}) as pool:
        saver = PostgresSaver(pool, schema=schema)
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": first}
        cp["channel_versions"] = {"messages": saver.get_next_version(None, None)}
        c1 = saver.put(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
            cp,
            {"step": 1},
            cp["channel_versions"],
        )
        cp2 = empty_checkpoint()
        cp2["channel_values"] = {"messages": [*first, added]}
        cp2["channel_versions"] = {
            "messages": saver.get_next_version(cp["channel_versions"]["messages"], None)
        }
        done: dict[str, Any] = {}
        with psycopg.connect(url) as blocker:
            # the write's own key, inserted and not committed: put_writes' INSERT
            # waits for this transaction, nothing else does
            blocker.execute(
                sql.SQL(
                    "INSERT INTO {} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,"
                    " channel, type, blob) VALUES ('t', '', %s, 'task-1', 0, 'messages', 'x', 'x')"
                ).format(sql.Identifier(schema, "checkpoint_writes")),
                (c1["configurable"]["checkpoint_id"],),
            )
            writes = threading.Thread(
                target=lambda: saver.put_writes(c1, [("messages", [added])], "task-1")
            )
            writes.start()
            # put_writes is running: its INSERT waits for the blocker's transaction
            wait_until_blocked_by(url, blocker.info.backend_pid, "put_writes")
            put = threading.Thread(
                target=lambda: done.setdefault(
                    "c2", saver.put(c1, cp2, {"step": 2}, cp2["channel_versions"])
                )
            )
            put.start()
            time.sleep(0.2)
            assert "c2" not in done  # the put waits for the writes in flight
            blocker.rollback()  # put_writes' INSERT goes on
        writes.join(10)
        put.join(10)
        assert "c2" in done
    with psycopg.connect(url) as conn:
        row = conn.execute(
            sql.SQL(
                "SELECT type, writes_of FROM {} WHERE channel = 'messages' AND version = %s"
            ).format(sql.Identifier(schema, "checkpoint_blobs")),
            (cp2["channel_versions"]["messages"],),
        ).fetchone()
    assert row == ("delta", c1["configurable"]["checkpoint_id"])
    with PostgresSaver.from_conn_string(url, schema=schema) as fresh:
        got = fresh.get_tuple(done["c2"])
        assert got is not None and got.checkpoint["channel_values"]["messages"] == [*first, added]
