"""Layout step 11 adds the notification outbox to a schema an older release set up.

A schema left at step 10 with an approval already waiting: ``setup()`` applies
step 11; the wait that was asked before notifications existed is not announced
after the fact, and every approval asked from then on is (its event written by
the step's trigger in the statement that indexes the wait).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from psycopg import sql

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.migrations.postgres import latest_version, layout_steps
from tests._approval_graphs import review_graph


def _at_step_10(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('search_path', %s, true)", (f'"{schema}", pg_catalog',))
        conn.execute(
            "CREATE TABLE langgraph_durable_layout (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for step in layout_steps()[:10]:
            conn.execute(step.sql)
            conn.execute(
                "INSERT INTO langgraph_durable_layout (version, name) VALUES (%s, %s)",
                (step.version, step.name),
            )
        conn.execute(
            "INSERT INTO durable_waits (thread_id, interrupt_id, checkpoint_ns, checkpoint_id,"
            " task_id, kind, deadline, value_type) VALUES"
            " ('old', 'i-old', '', 'c', 'task', 'approval', now() + interval '1 hour', 'null')"
        )


def test_setup_adds_the_outbox_and_announces_new_approvals_only(
    pg_schema: tuple[str, str],
) -> None:
    url, schema = pg_schema
    _at_step_10(url, schema)
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        with psycopg.connect(url) as conn:
            version = conn.execute(
                sql.SQL("SELECT max(version) FROM {}").format(
                    sql.Identifier(schema, "langgraph_durable_layout")
                )
            ).fetchone()
        assert version == (latest_version(),) and latest_version() >= 11
        assert saver.outbox.notification_counts().pending == 0
        review_graph(saver).invoke({"amount": 1}, {"configurable": {"thread_id": "new"}})
        claimed: list[Any] = saver.outbox.claim_notifications(
            now=datetime.now(timezone.utc) + timedelta(seconds=1),
            owner="test",
            lease=timedelta(minutes=1),
            limit=10,
        )
        assert [(e.thread_id, e.kind) for e in claimed] == [("new", "requested")]
        saver.setup()  # applied once: a second setup changes nothing
        assert saver.outbox.notification_counts().pending == 1
