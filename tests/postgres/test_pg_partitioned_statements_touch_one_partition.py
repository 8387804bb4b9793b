"""On the hash-partitioned layout, every statement about one thread touches one partition.

``setup(partitions=N)`` partitions checkpoints, blobs, writes, waits and
decisions by ``thread_id``. Each per-thread statement the saver sends (put,
put_writes, get_tuple, list of a thread, delete_thread, recording and reading
decisions) is EXPLAINed with its real parameters: planned with the values
(what PostgreSQL does for the first runs of a statement) or generically
(what a prepared statement may settle on), EXPLAIN ANALYZE shows it running
in at most one partition of each table; where the thread is named in each
table's own WHERE, the plan itself names only that partition. Under Citus,
with ``thread_id`` as the distribution column, this is what makes each of them
single-shard.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.postgres._stmt import Stmt, advance
from langgraph_durable.migrations.postgres import PARTITIONED_TABLES

PARTITIONS = 8
THREADS = [f"thread-{i}" for i in range(40)]
_PART = re.compile(r"^(?P<table>\w+)_p\d+$")


def _first(op: Any) -> Stmt:
    done, stmt = advance(op, None)
    assert not done and isinstance(stmt, Stmt)
    op.close()
    return stmt


def _statements(saver: PostgresSaver) -> dict[str, Stmt]:
    thread = THREADS[7]
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    head = saver.get_tuple(cfg)
    assert head is not None
    deadline = datetime(2030, 1, 1, tzinfo=timezone.utc)
    value = {WAIT_KEY: wait_marker("approval", deadline), "q": "ok?"}
    from langgraph.types import Interrupt

    decision = {"at": datetime.now(timezone.utc).isoformat(), "by": "alice", "approved": True}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"x": "y" * 100}
    checkpoint["channel_versions"] = {"x": saver.get_next_version(None, None)}
    return {
        "put": _first(saver.core.put(head.config, checkpoint, {"step": 9}, {"x": "9"})),
        "put_writes": _first(
            saver.core.put_writes(
                head.config, [("__interrupt__", [Interrupt(value)])], "task-1", ""
            )
        ),
        "get_tuple": _first(saver.core._op_get_tuple(cfg)),
        "get_tuple_by_id": _first(saver.core._op_get_tuple(head.config)),
        "list": _list_statement(saver, cfg),
        "delete_thread": _first(saver.core._op_delete_threads([thread])),
        "record_decision": _first(saver.decisions._op_record_decision(thread, "i-1", decision)),
        "get_decisions": _first(saver.decisions._op_get_decisions(thread, ["i-1"])),
    }


def _list_statement(saver: PostgresSaver, cfg: Any) -> Stmt:
    from langgraph_durable.checkpointers.postgres._listing import ListPages

    stmt = ListPages(saver.core, cfg, None, None, 10).next_statement()
    assert stmt is not None
    return stmt


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", ()):
        found.extend(_nodes(child))
    return found


def _partitions_touched(plan: dict[str, Any], *, executed: bool) -> dict[str, set[str]]:
    touched: dict[str, set[str]] = {}
    for node in _nodes(plan):
        name = node.get("Relation Name")
        match = _PART.match(name or "")
        if not match or match.group("table") not in PARTITIONED_TABLES:
            continue
        if executed and not node.get("Actual Loops"):
            continue  # planned, pruned at execution
        touched.setdefault(match.group("table"), set()).add(name)
    return touched


@pytest.fixture
def saver(pg_schema: tuple[str, str]) -> Any:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema, leases=False) as s:
        s.setup(partitions=PARTITIONS)
        for i, thread in enumerate(THREADS):
            cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            for step in range(3):
                cp = empty_checkpoint()
                cp["channel_values"] = {"x": f"{thread}-{step}"}
                cp["channel_versions"] = {"x": f"{step + 1}"}
                cfg = s.put(cfg, cp, {"step": step, "i": i}, {"x": f"{step + 1}"})
            s.put_writes(cfg, [("x", "w")], "task-0")
        yield s


def test_the_layout_has_the_partitions_asked_for(saver: Any, pg_schema: Any) -> None:
    url, schema = pg_schema
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT p.relname, count(i.inhrelid) FROM pg_class AS p"
            " JOIN pg_namespace AS n ON n.oid = p.relnamespace"
            " JOIN pg_inherits AS i ON i.inhparent = p.oid"
            " WHERE n.nspname = %s AND p.relkind = 'p' GROUP BY 1 ORDER BY 1",
            (schema,),
        ).fetchall()
        spread = conn.execute(
            f'SELECT count(DISTINCT tableoid) FROM "{schema}".checkpoints'
        ).fetchone()[0]
    assert rows == [(t, PARTITIONS) for t in sorted(PARTITIONED_TABLES)]
    assert spread > 1  # the threads are spread over the partitions


# Statements naming the thread in every table's own WHERE: pruned when planned.
# The others reach blobs and writes through a join on the checkpoint row's
# thread_id (a parameterized nested loop): PostgreSQL plans every partition
# there and prunes all but one at execution (never executed in EXPLAIN ANALYZE).
PLANNED_PRUNING = ("put_writes", "delete_thread", "record_decision", "get_decisions")


@pytest.mark.parametrize("planning", ["custom", "generic"])
def test_each_per_thread_statement_runs_in_one_partition(
    saver: Any, pg_schema: Any, planning: str
) -> None:
    url, _ = pg_schema
    statements = _statements(saver)
    with psycopg.connect(url) as conn:
        for name, stmt in statements.items():
            with conn.transaction(force_rollback=True):  # ANALYZE runs the writes: undone
                if planning == "generic":
                    conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
                (ran,) = conn.execute(
                    "EXPLAIN (ANALYZE, FORMAT JSON) " + stmt.query, stmt.params
                ).fetchone()[0]
                (planned,) = conn.execute(
                    "EXPLAIN (FORMAT JSON) " + stmt.query, stmt.params
                ).fetchone()[0]
            touched = _partitions_touched(ran["Plan"], executed=True)
            many = {t: sorted(p) for t, p in touched.items() if len(p) > 1}
            assert not many, (name, many)
            if name in ("get_tuple", "get_tuple_by_id", "list", "delete_thread"):
                assert touched.get("checkpoints"), (name, ran)  # it does read the table
            if planning == "custom" and name in PLANNED_PRUNING:
                listed = _partitions_touched(planned["Plan"], executed=False)
                assert all(len(p) <= 1 for p in listed.values()), (name, listed)


def test_setup_of_a_laid_out_schema_keeps_its_layout(saver: Any) -> None:
    from langgraph_durable.checkpointers import InvalidConfigError

    saver.setup()  # no argument: goes on with the schema's partitions
    saver.setup(partitions=PARTITIONS)
    with pytest.raises(InvalidConfigError) as err:
        saver.setup(partitions=PARTITIONS * 2)
    assert err.value.field == "partitions" and "already has 8 partitions" in str(err.value)


def test_partitions_on_an_unpartitioned_schema_are_refused(pg_schema: Any) -> None:
    from langgraph_durable.checkpointers import InvalidConfigError

    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as s:
        s.setup()
        with pytest.raises(InvalidConfigError) as err:
            s.setup(partitions=4)
        assert "unpartitioned tables" in str(err.value)
        for bad in (0, -1, 2000, "4", True):
            with pytest.raises(InvalidConfigError) as err:
                s.setup(partitions=bad)
            assert err.value.field == "partitions"
