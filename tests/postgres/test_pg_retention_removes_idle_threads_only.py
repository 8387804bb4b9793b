"""Retention deletes or prunes idle threads, in bounded batches, and never a waiting or running one.

Real PostgreSQL, sync and async. A thread's age is its activity mark (written
by a trigger with every checkpoint); the tests age threads by moving that mark
back, as weeks of idleness would.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg import sql

from langgraph_durable.checkpointers import InvalidConfigError
from langgraph_durable.checkpointers.postgres import (
    AsyncPostgresSaver,
    PostgresSaver,
    RetentionPolicy,
    aapply_retention,
    apply_retention,
)
from tests._pg_locks import wait_until_blocked_by
from tests._retention_graphs import builder, run

TABLES = (
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "durable_waits",
    "durable_decisions",
    "durable_thread_activity",
    "durable_run_leases",
)


def _age(url: str, schema: str, threads: list[str], days: int = 40) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "UPDATE {}.durable_thread_activity SET active_at = now() - %s::interval"
                " WHERE thread_id = ANY(%s)"
            ).format(sql.Identifier(schema)),
            (timedelta(days=days), threads),
        )


def _rows(url: str, schema: str, thread: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {
            t: conn.execute(
                sql.SQL("SELECT count(*) FROM {}.{} WHERE thread_id = %s").format(
                    sql.Identifier(schema), sql.Identifier(t)
                ),
                (thread,),
            ).fetchone()[0]
            for t in TABLES
        }


@pytest.fixture
def saver(pg_schema: tuple[str, str]) -> Any:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as s:
        s.setup()
        yield s


def test_idle_threads_go_waiting_and_held_ones_stay(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    idle = [f"idle-{i}" for i in range(5)]
    for t in idle:
        run(saver, t)
    run(saver, "asks-plain", "plain")
    run(saver, "asks-marked", "marked")
    run(saver, "held")
    run(saver, "fresh")
    now = datetime.now(timezone.utc)
    assert saver.leases.acquire_lease(
        thread_id="held", owner="other-host:1", now=now, ttl=timedelta(minutes=5)
    )
    old = [*idle, "asks-plain", "asks-marked", "held"]
    _age(url, schema, old)
    before = {t: _rows(url, schema, t) for t in [*old, "fresh"]}

    dry = apply_retention(saver, RetentionPolicy(older_than=timedelta(days=30)), dry_run=True)
    assert sorted(dry.deleted) == idle and dry.dry_run
    assert (dry.kept_waiting, dry.kept_held) == (2, 1)
    assert dry.checkpoints == sum(before[t]["checkpoints"] for t in idle) > 0
    assert {t: _rows(url, schema, t) for t in before} == before  # a dry run deletes nothing

    done = apply_retention(saver, RetentionPolicy(older_than=timedelta(days=30), batch_size=2))
    assert sorted(done.deleted) == idle and done.cursor is None
    assert done.batches == 5  # 8 idle threads, 2 per batch; the fifth finds none left
    assert done.checkpoints == dry.checkpoints
    for t in idle:
        assert saver.get_tuple({"configurable": {"thread_id": t}}) is None
        assert set(_rows(url, schema, t).values()) == {0}
    for t in ("asks-plain", "asks-marked", "held", "fresh"):
        assert _rows(url, schema, t) == before[t]
    waiting = builder("plain").compile(checkpointer=saver)
    state = waiting.get_state({"configurable": {"thread_id": "asks-plain"}})
    assert state.next == ("ask",) and state.interrupts


def test_keep_latest_leaves_one_checkpoint_and_prunes_once(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    graph = builder("done").compile(checkpointer=saver)
    for t in ("a", "b"):
        for _ in range(3):
            graph.invoke({"steps": []}, {"configurable": {"thread_id": t}})
    run(saver, "asks", "plain")
    _age(url, schema, ["a", "b", "asks"])
    expected = {t: graph.get_state({"configurable": {"thread_id": t}}).values for t in "ab"}
    asks_before = _rows(url, schema, "asks")

    policy = RetentionPolicy(older_than=timedelta(days=30), keep_latest=True)
    report = apply_retention(saver, policy)
    assert sorted(report.pruned) == ["a", "b"] and report.deleted == []
    assert report.kept_waiting == 1 and report.checkpoints > 0
    for t in "ab":
        assert _rows(url, schema, t)["checkpoints"] == 1
        assert graph.get_state({"configurable": {"thread_id": t}}).values == expected[t]
    assert _rows(url, schema, "asks") == asks_before
    again = apply_retention(saver, policy)
    assert again.pruned == [] and again.checkpoints == 0  # nothing new to prune
    graph.invoke({"steps": []}, {"configurable": {"thread_id": "a"}})
    _age(url, schema, ["a"])
    assert apply_retention(saver, policy).pruned == ["a"]  # written since: pruned again


def test_batches_are_bounded_and_resume_at_their_cursor(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    threads = [f"t-{i:02d}" for i in range(7)]
    for t in threads:
        run(saver, t)
    _age(url, schema, threads)
    policy = RetentionPolicy(older_than=timedelta(days=1), batch_size=3)
    first = apply_retention(saver, policy, max_batches=1)
    assert len(first.deleted) == 3 and first.batches == 1 and first.cursor is not None
    rest = apply_retention(saver, policy, after=first.cursor)
    assert sorted(first.deleted + rest.deleted) == threads and rest.cursor is None


async def test_the_async_runner_deletes_what_the_sync_one_does(pg_schema: Any) -> None:
    url, schema = pg_schema
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
        await saver.setup()
        graph = builder("done").compile(checkpointer=saver)
        for t in ("x", "y"):
            await graph.ainvoke({"steps": []}, {"configurable": {"thread_id": t}})
        _age(url, schema, ["x"])
        report = await aapply_retention(saver, RetentionPolicy(older_than=3600))
        assert report.deleted == ["x"]
        assert await saver.aget_tuple({"configurable": {"thread_id": "x"}}) is None
        assert await saver.aget_tuple({"configurable": {"thread_id": "y"}}) is not None


def test_a_thread_written_after_the_threshold_is_not_idle(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    run(saver, "t")
    _age(url, schema, ["t"])
    run(saver, "t")  # a new checkpoint marks it active again
    assert apply_retention(saver, RetentionPolicy(older_than=timedelta(days=30))).deleted == []
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is not None


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"older_than": 0}, "older_than"),
        ({"older_than": "30d"}, "older_than"),
        ({"older_than": 60, "batch_size": 0}, "batch_size"),
        ({"older_than": 60, "keep_latest": "yes"}, "keep_latest"),
    ],
)
def test_a_bad_policy_is_refused_by_name(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidConfigError) as err:
        RetentionPolicy(**options)
    assert err.value.field == field


def test_a_bad_call_is_refused_and_changes_nothing(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    run(saver, "t")
    _age(url, schema, ["t"])
    before = _rows(url, schema, "t")
    policy = RetentionPolicy(older_than=60)
    with pytest.raises(InvalidConfigError) as err:
        apply_retention(saver, policy, max_batches=0)
    assert err.value.field == "max_batches"
    with pytest.raises(InvalidConfigError) as err:
        apply_retention(object(), policy)  # type: ignore[arg-type]
    assert err.value.field == "saver" and "ttl=" in str(err.value)
    assert _rows(url, schema, "t") == before


def test_threads_stored_before_the_layout_step_count_from_the_upgrade(pg_schema: Any) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        run(saver, "old")
        with psycopg.connect(url, autocommit=True) as conn:
            s = sql.Identifier(schema)
            # back to layout 11: no activity table, as an older release left it
            conn.execute(sql.SQL("DROP TABLE {}.durable_thread_activity").format(s))
            conn.execute(sql.SQL("DROP TRIGGER durable_thread_active ON {}.checkpoints").format(s))
            conn.execute(
                sql.SQL("DELETE FROM {}.langgraph_durable_layout WHERE version >= 12").format(s)
            )
        saver.setup()
        assert _rows(url, schema, "old")["durable_thread_activity"] == 1
        assert apply_retention(saver, RetentionPolicy(older_than=60)).deleted == []
        _age(url, schema, ["old"])
        assert apply_retention(saver, RetentionPolicy(older_than=60)).deleted == ["old"]


def test_a_schema_of_its_own_is_used_whatever_the_search_path(pg_schema: Any) -> None:
    url, schema = pg_schema
    # a connection whose search_path does not name the schema still marks activity there
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        thread = f"t-{uuid.uuid4().hex[:6]}"
        run(saver, thread)
    assert _rows(url, schema, thread)["durable_thread_activity"] == 1


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", ()):
        nodes.extend(_plan_nodes(child))
    return nodes


@pytest.mark.parametrize("keep_latest", [False, True])
def test_finding_idle_threads_reads_indexes_not_tables(pg_schema: Any, keep_latest: bool) -> None:
    from langgraph_durable.checkpointers.postgres._retention_core import (
        candidates_params,
        candidates_query,
    )

    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
    s = sql.Identifier(schema)
    with psycopg.connect(url, autocommit=True) as conn:
        # 20,000 threads of 3 checkpoints, a tenth of them waiting, most of them fresh
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint)"
                " SELECT 't' || i, '', 'c' || j, '{{}}' FROM generate_series(1, 20000) AS i,"
                " generate_series(1, 3) AS j"
            ).format(s)
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id,"
                " task_id, idx, channel, type, blob)"
                " SELECT 't' || i, '', 'c3', 'task', 0, '__interrupt__', 'msgpack', '\\x00'"
                " FROM generate_series(1, 20000, 10) AS i"
            ).format(s)
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.durable_waits (thread_id, interrupt_id, checkpoint_ns,"
                " checkpoint_id, task_id, kind, value_type)"
                " SELECT 't' || i, 'i', '', 'c3', 'task', 'approval', 'msgpack'"
                " FROM generate_series(1, 20000, 10) AS i"
            ).format(s)
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.durable_run_leases (thread_id, state, reason)"
                " SELECT 't' || i, 'released', 'finished' FROM generate_series(1, 20000, 2) AS i"
            ).format(s)
        )
        conn.execute(
            sql.SQL(
                "UPDATE {}.durable_thread_activity SET active_at = now() - interval '40 days'"
                " WHERE thread_id IN (SELECT 't' || i FROM generate_series(1, 500) AS i)"
            ).format(s)
        )
        for table in TABLES:
            conn.execute(sql.SQL("ANALYZE {}.{}").format(s, sql.Identifier(table)))
        policy = RetentionPolicy(older_than=timedelta(days=30), keep_latest=keep_latest)
        query = candidates_query(schema, keep_latest=keep_latest)
        with conn.transaction():
            (plan,) = conn.execute(
                "EXPLAIN (FORMAT JSON) " + query, candidates_params(policy)
            ).fetchone()[0]
    nodes = _plan_nodes(plan["Plan"])
    scans = {(n["Node Type"], n.get("Relation Name"), n.get("Index Name")) for n in nodes}
    assert not [n["Relation Name"] for n in nodes if n["Node Type"] == "Seq Scan"], scans
    index = (
        "durable_thread_activity_unpruned_idx"
        if keep_latest
        else "durable_thread_activity_idle_idx"
    )
    assert any(name == index for _, _, name in scans), scans


def test_the_mark_is_written_once_a_minute_and_retention_allows_for_it(
    saver: Any, pg_schema: Any
) -> None:
    url, schema = pg_schema

    def mark() -> Any:
        with psycopg.connect(url) as conn:
            return conn.execute(
                sql.SQL(
                    "SELECT active_at FROM {}.durable_thread_activity WHERE thread_id = 't'"
                ).format(sql.Identifier(schema))
            ).fetchone()[0]

    run(saver, "t")
    first = mark()
    run(saver, "t")
    assert mark() == first  # within the minute: nothing rewritten
    # a thread marked 30 days and 30 seconds ago may have been written 30 seconds ago
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "UPDATE {}.durable_thread_activity SET active_at = now() - %s::interval"
            ).format(sql.Identifier(schema)),
            (timedelta(days=30, seconds=30),),
        )
    assert apply_retention(saver, RetentionPolicy(older_than=timedelta(days=30))).deleted == []
    run(saver, "t")
    assert mark() > first  # older than a minute: written again


@pytest.mark.parametrize("keep_latest", [False, True])
def test_retention_on_the_partitioned_layout(pg_schema: Any, keep_latest: bool) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup(partitions=4)
        idle = [f"idle-{i}" for i in range(6)]
        for t in idle:
            run(saver, t)
            run(saver, t)
        run(saver, "asks", "plain")
        _age(url, schema, [*idle, "asks"])
        asks = _rows(url, schema, "asks")
        policy = RetentionPolicy(older_than=timedelta(days=30), keep_latest=keep_latest)
        report = apply_retention(saver, policy)
        assert sorted(report.pruned if keep_latest else report.deleted) == idle
        assert report.kept_waiting == 1 and _rows(url, schema, "asks") == asks
        for t in idle:
            assert _rows(url, schema, t)["checkpoints"] == (1 if keep_latest else 0)


def test_a_batch_that_loses_a_deadlock_to_a_write_runs_again(saver: Any, pg_schema: Any) -> None:
    """A write to an idle thread that waits on its batch while the batch waits on it.

    The other connection holds a row lock the batch's delete needs, then writes
    the thread's activity mark, which the batch holds: a deadlock. The batch's
    connection detects it first (the other's deadlock_timeout is longer), so
    the batch is rolled back and runs again, without the thread now written.
    """
    import threading

    url, schema = pg_schema
    for t in ("a", "b"):
        run(saver, t)
    _age(url, schema, ["a", "b"])
    s = sql.Identifier(schema)
    result: dict[str, Any] = {}

    def retention() -> None:
        result["report"] = apply_retention(saver, RetentionPolicy(older_than=timedelta(days=30)))

    with psycopg.connect(url) as other:
        other.execute("SET deadlock_timeout = '20s'")
        other.execute(
            sql.SQL("SELECT 1 FROM {}.checkpoint_blobs WHERE thread_id = 'b' FOR KEY SHARE").format(
                s
            )
        )
        worker = threading.Thread(target=retention)
        worker.start()
        # the batch now holds both marks and waits on b's blobs (on this connection)
        wait_until_blocked_by(url, other.info.backend_pid, "the batch waiting on b's blobs")
        other.execute(
            sql.SQL(
                "UPDATE {}.durable_thread_activity SET active_at = now() WHERE thread_id = 'b'"
            ).format(s)
        )
        other.commit()
        worker.join(timeout=60)
    report = result["report"]
    assert report.deleted == ["a"] and report.batches == 1
    assert saver.get_tuple({"configurable": {"thread_id": "b"}}) is not None
    assert saver.get_tuple({"configurable": {"thread_id": "a"}}) is None
