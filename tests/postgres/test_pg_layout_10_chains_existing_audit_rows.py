"""Layout step 10 adopts the audit rows an older release wrote: each thread's rows chained in order.

A schema left at step 9 holds audit rows without links (written by the older
release's plain INSERT). ``setup()`` applies step 10 in one transaction: every
thread's rows get their positions and links in ``seq`` order and the thread a
head, so the trail verifies, later appends continue the chain, the old rows
are covered (an edit of one is found) and protected (the triggers refuse it).
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql

from langgraph_durable.checkpointers import audit_entry
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.interrupts import audit_log, verify_audit
from langgraph_durable.migrations.postgres import latest_version, layout_steps
from tests._approval_graphs import T0
from tests._audit_tamper import PostgresTamper

# rows as the older release stored them, interleaving two threads
OLD_ROWS = [
    ("t1", "run", "request", "waiting", None, "request:i1"),
    ("t2", "run", "request", "waiting", None, "request:i2"),
    ("t1", "eve", "approve", "not_authorized", "not among the approvers: ops ünï", None),
    ("t1", "olga", "approve", "recorded", None, None),
    ("t2", "system", "reject", "recorded", "on_timeout=reject", None),
]


def _at_step_9(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('search_path', %s, true)", (f'"{schema}", pg_catalog',))
        conn.execute(
            "CREATE TABLE langgraph_durable_layout (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for step in layout_steps()[:9]:
            conn.execute(step.sql)
            conn.execute(
                "INSERT INTO langgraph_durable_layout (version, name) VALUES (%s, %s)",
                (step.version, step.name),
            )
        for i, (thread, actor, action, outcome, reason, dedupe) in enumerate(OLD_ROWS):
            conn.execute(
                "INSERT INTO durable_audit (at, thread_id, approval_id, actor, action, outcome,"
                " reason, dedupe_key) VALUES (%s, %s, 'i', %s, %s, %s, %s, %s)",
                (T0.replace(minute=i), thread, actor, action, outcome, reason, dedupe),
            )


@pytest.fixture
def adopted(pg_schema: tuple[str, str]) -> Any:
    url, schema = pg_schema
    _at_step_9(url, schema)
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        yield saver, url, schema


def test_setup_chains_the_old_rows_in_seq_order(adopted: Any) -> None:
    saver, url, schema = adopted
    with psycopg.connect(url) as conn:
        version = conn.execute(
            sql.SQL("SELECT max(version) FROM {}").format(
                sql.Identifier(schema, "langgraph_durable_layout")
            )
        ).fetchone()
        rows = conn.execute(
            sql.SQL("SELECT thread_id, pos FROM {} ORDER BY seq").format(
                sql.Identifier(schema, "durable_audit")
            )
        ).fetchall()
    assert version == (latest_version(),)
    assert rows == [("t1", 1), ("t2", 1), ("t1", 2), ("t1", 3), ("t2", 2)]
    for thread, n in (("t1", 3), ("t2", 2)):
        report = verify_audit(saver, thread)
        assert report.intact and report.entries == n and report.head_position == n
    assert [e.actor for e in audit_log(saver, thread_id="t1")] == ["run", "eve", "olga"]


def test_appends_after_the_step_continue_the_chain(adopted: Any) -> None:
    saver, _, _ = adopted
    entry = audit_entry(at=T0, thread_id="t1", actor="mia", action="approve", outcome="recorded")
    saver.audit.append_audit(entries=[entry])
    # a node's entry seen before the step is still seen: its dedupe key is kept
    saver.audit.append_audit(entries=[{**entry, "actor": "run", "dedupe_key": "request:i1"}])
    report = verify_audit(saver, "t1")
    assert report.intact and report.entries == 4 and report.head_position == 4


def test_an_old_row_is_covered_and_protected(adopted: Any) -> None:
    saver, url, schema = adopted
    refused = audit_log(saver, thread_id="t1")[1].seq
    with (
        psycopg.connect(url, autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"),
    ):
        conn.execute(
            sql.SQL("UPDATE {} SET actor = 'olga' WHERE seq = %s").format(
                sql.Identifier(schema, "durable_audit")
            ),
            [refused],
        )
    assert verify_audit(saver, "t1").intact
    PostgresTamper(url, schema).alter("t1", refused)
    broken = verify_audit(saver, "t1").broken
    assert broken is not None and (broken.seq, broken.problem) == (refused, "altered")
