"""A role that does not own the schema runs the library, and cannot edit the audit trail.

The role gets the grants docs/guides/authorization.md documents (tables, no write on the audit
tables, EXECUTE on the two audit functions) or, as a deployment that granted
too much, every privilege on every table: either way it approves through the
library, and every edit it tries on the trail is refused by the database, the
trail and its chain staying exactly as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.interrupts import (
    NotAuthorized,
    approve,
    audit_log,
    purge_audit,
    verify_audit,
)
from tests._approval_graphs import review_graph

# What docs/guides/authorization.md tells a deployment to grant its application's role (the
# owner role runs setup()).
DOCUMENTED_GRANTS = """
GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {r};
REVOKE INSERT, UPDATE, DELETE ON {s}.durable_audit, {s}.durable_audit_heads FROM {r};
GRANT EXECUTE ON FUNCTION {s}.durable_audit_append(jsonb), {s}.durable_audit_purge(text) TO {r};
"""
# A deployment that granted everything on every table of the schema.
TOO_MUCH = DOCUMENTED_GRANTS + "GRANT ALL ON ALL TABLES IN SCHEMA {s} TO {r};"


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture(params=["documented grants", "every table privilege"])
def app(request: pytest.FixtureRequest, pg_schema: tuple[str, str]) -> Iterator[dict[str, Any]]:
    """A schema set up by its owner, and a fresh non-owner role with the grants."""
    url, schema = pg_schema
    role = f"audit_app_{uuid.uuid4().hex[:10]}"
    with PostgresSaver.from_conn_string(url, schema=schema) as owner:
        owner.setup()
    ids = {"s": sql.Identifier(schema), "r": sql.Identifier(role)}
    grants = DOCUMENTED_GRANTS if request.param == "documented grants" else TOO_MUCH
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {r} LOGIN PASSWORD 'app'").format(**ids))
        for stmt in filter(str.strip, grants.split(";")):
            conn.execute(sql.SQL(stmt).format(**ids))
    try:
        yield {
            "owner_url": url,
            "url": make_conninfo(url, user=role, password="app"),
            "schema": schema,
            "role": role,
        }
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )
            conn.execute(sql.SQL("DROP OWNED BY {r}").format(**ids))
            conn.execute(sql.SQL("DROP ROLE {r}").format(**ids))


def _rows(url: str, schema: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        audit = conn.execute(
            sql.SQL("SELECT * FROM {} ORDER BY seq").format(sql.Identifier(schema, "durable_audit"))
        ).fetchall()
        heads = conn.execute(
            sql.SQL("SELECT * FROM {} ORDER BY thread_id").format(
                sql.Identifier(schema, "durable_audit_heads")
            )
        ).fetchall()
    return [*audit, *heads]


def _attacks(schema: str, thread: str, victim_seq: int) -> list[tuple[str, list[Any]]]:
    """Each attack from the issue: (what it does, its statements in one transaction)."""
    table = sql.Identifier(schema, "durable_audit")
    heads = sql.Identifier(schema, "durable_audit_heads")
    rewrite = sql.SQL(
        "INSERT INTO {t} (seq, at, thread_id, actor, action, outcome, pos, link)"
        " OVERRIDING SYSTEM VALUE"
        " SELECT seq, at, thread_id, 'mallory', action, outcome, pos, link FROM {t}"
        " WHERE seq = %(seq)s"
    ).format(t=table)
    return [
        (
            "SET LOCAL the purge setting, then DELETE a refused attempt",
            [
                sql.SQL("SET LOCAL langgraph_durable.audit_purge = {}").format(sql.Literal(thread)),
                sql.SQL("DELETE FROM {} WHERE actor = 'mallory'").format(table),
            ],
        ),
        (
            "SET LOCAL both settings, then DELETE the thread's entries",
            [
                sql.SQL("SET LOCAL langgraph_durable.audit_purge = {}").format(sql.Literal(thread)),
                sql.SQL("SET LOCAL langgraph_durable.audit_write = 'on'"),
                sql.SQL("DELETE FROM {}").format(table),
            ],
        ),
        (
            "rewrite the approval as someone else's, keeping its seq",
            [
                sql.SQL("SET LOCAL langgraph_durable.audit_write = 'on'"),
                rewrite,
            ],
        ),
        (
            "INSERT ... OVERRIDING SYSTEM VALUE with a seq of its own",
            [
                sql.SQL(
                    "INSERT INTO {} (seq, at, thread_id, actor, action, outcome)"
                    " OVERRIDING SYSTEM VALUE"
                    " VALUES (999999, now(), %(thread)s, 'mallory', 'approve', 'recorded')"
                ).format(table)
            ],
        ),
        (
            "UPDATE the approval's actor",
            [sql.SQL("UPDATE {} SET actor = 'mallory' WHERE seq = %(seq)s").format(table)],
        ),
        ("TRUNCATE the trail", [sql.SQL("TRUNCATE {}").format(table)]),
        (
            "a plain forged INSERT claiming a decision",
            [
                sql.SQL(
                    "INSERT INTO {} (at, thread_id, actor, action, outcome)"
                    " VALUES (now(), %(thread)s, 'mallory', 'approve', 'recorded')"
                ).format(table)
            ],
        ),
        (
            "move the chain's head",
            [sql.SQL("UPDATE {} SET pos = 0, base_pos = pos").format(heads)],
        ),
        ("delete the chain's head", [sql.SQL("DELETE FROM {}").format(heads)]),
        ("TRUNCATE the heads", [sql.SQL("TRUNCATE {}").format(heads)]),
    ]


def test_a_non_owner_role_approves_and_cannot_edit_the_trail(app: dict[str, Any]) -> None:
    url, schema = app["url"], app["schema"]
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        graph = review_graph(saver, open_to_all=False, approvers=("ops",))
        graph.invoke({"amount": 5}, cfg("t1"))
        with pytest.raises(NotAuthorized):
            approve(graph, cfg("t1"), by="mallory", roles=["sales"])
        approve(graph, cfg("t1"), by="olga", roles=["ops"])
        trail = audit_log(saver, thread_id="t1")
        assert [(e.actor, e.outcome) for e in trail] == [
            ("run", "waiting"),
            ("mallory", "not_authorized"),
            ("olga", "recorded"),
        ]
        assert verify_audit(saver, "t1").intact
    before = _rows(app["owner_url"], schema)
    victim = trail[-1].seq
    params = {"seq": victim, "thread": "t1"}
    with psycopg.connect(url) as conn:
        for what, stmts in _attacks(schema, "t1", victim):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as err, conn.transaction():
                for stmt in stmts:
                    conn.execute(stmt, params if "%(" in stmt.as_string(conn) else None)
            assert "append-only" in str(err.value) or "permission denied" in str(err.value), what
    assert _rows(app["owner_url"], schema) == before
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        report = verify_audit(saver, "t1")
        assert report.intact and report.entries == 3, report.summary()


def test_the_role_purges_only_the_thread_it_names(app: dict[str, Any]) -> None:
    url, schema = app["url"], app["schema"]
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        graph = review_graph(saver, open_to_all=False, approvers=("ops",))
        for t in ("keep", "gone"):
            graph.invoke({"amount": 5}, cfg(t))
            approve(graph, cfg(t), by="olga", roles=["ops"])
        assert purge_audit(saver, thread_id="gone") == 2
        assert audit_log(saver, thread_id="gone") == []
        assert [e.actor for e in audit_log(saver, thread_id="keep")] == ["run", "olga"]
        gone, keep = verify_audit(saver, "gone"), verify_audit(saver, "keep")
        assert gone.intact and gone.entries == 0 and gone.purged == 2, gone.summary()
        assert keep.intact and keep.entries == 2, keep.summary()
    # the purge function deletes what it is asked to, nothing more: called
    # directly for another thread it takes that thread's entries only
    with psycopg.connect(url, autocommit=True) as conn:
        purge = sql.SQL("SELECT {}(%s)").format(sql.Identifier(schema, "durable_audit_purge"))
        assert conn.execute(purge, ("nobody",)).fetchone() == (0,)
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        assert len(audit_log(saver, thread_id="keep")) == 2
