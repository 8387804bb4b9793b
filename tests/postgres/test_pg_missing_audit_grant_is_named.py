"""Postgres: a role without EXECUTE on an audit function gets an error naming the grant.

The audit grants of docs/guides/authorization.md give the application's role ``EXECUTE`` on
``durable_audit_append(jsonb)`` and ``durable_audit_purge(text)``. A role
without one of them is refused by the database; the saver raises
``MissingGrantError`` (a ``StorageRefusedError``) whose message names the
``GRANT`` to run, never psycopg's ``InsufficientPrivilege``, and the refused
call leaves the thread, its decision and its trail as they were. Sync and async.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from langgraph_durable.checkpointers import MissingGrantError, StorageRefusedError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.interrupts import aapprove, approve, apurge_audit, audit_log, purge_audit
from tests._approval_graphs import review_graph

GRANTS = """
GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {r};
REVOKE INSERT, UPDATE, DELETE ON {s}.durable_audit, {s}.durable_audit_heads FROM {r};
GRANT EXECUTE ON FUNCTION {s}.{f} TO {r};
"""
PURGE = "durable_audit_purge(text)"
APPEND = "durable_audit_append(jsonb)"
MODES = ["sync", "async"]


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _area(pg_schema: tuple[str, str], granted: str) -> Iterator[dict[str, str]]:
    """A schema set up by its owner, with thread ``t1`` waiting for review, and a
    fresh non-owner role granted everything those docs say but ``EXECUTE`` on
    the other audit function."""
    url, schema = pg_schema
    role = f"audit_nogrant_{uuid.uuid4().hex[:10]}"
    with PostgresSaver.from_conn_string(url, schema=schema) as owner:
        owner.setup()
        review_graph(owner, open_to_all=False, approvers=("ops",)).invoke({"amount": 5}, cfg("t1"))
    ids = {"s": sql.Identifier(schema), "r": sql.Identifier(role), "f": sql.SQL(granted)}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {r} LOGIN PASSWORD 'app'").format(**ids))
        for stmt in filter(str.strip, GRANTS.split(";")):
            conn.execute(sql.SQL(stmt).format(**ids))
    try:
        yield {"owner_url": url, "url": make_conninfo(url, user=role, password="app"), "s": schema}
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )
            conn.execute(sql.SQL("DROP OWNED BY {r}").format(**ids))
            conn.execute(sql.SQL("DROP ROLE {r}").format(**ids))


@pytest.fixture
def no_purge(pg_schema: tuple[str, str]) -> Iterator[dict[str, str]]:
    """The role may append, not purge."""
    yield from _area(pg_schema, APPEND)


@pytest.fixture
def no_append(pg_schema: tuple[str, str]) -> Iterator[dict[str, str]]:
    """The role may purge, not append."""
    yield from _area(pg_schema, PURGE)


def _stored(area: dict[str, str]) -> tuple[Any, list[Any]]:
    """The thread's latest checkpoint id and its trail, read by the owner."""
    with PostgresSaver.from_conn_string(area["owner_url"], schema=area["s"]) as owner:
        latest = owner.get_tuple(cfg("t1"))
        trail = [(e.seq, e.actor, e.outcome) for e in audit_log(owner, thread_id="t1")]
    return (latest.checkpoint["id"] if latest else None), trail


def _assert_names_the_grant(err: MissingGrantError, schema: str, function: str) -> None:
    assert isinstance(err, StorageRefusedError) and err.code == "42501"
    assert err.grant == f'GRANT EXECUTE ON FUNCTION "{schema}".{function} TO <role>'
    assert err.grant in str(err) and "permission denied" in str(err)
    assert not isinstance(err.__cause__, MissingGrantError)  # the driver's error stays the cause


@pytest.mark.parametrize("mode", MODES)
async def test_a_purge_without_the_grant_names_it_and_deletes_nothing(
    no_purge: dict[str, str], mode: str
) -> None:
    before = _stored(no_purge)
    assert before[0] is not None and before[1]
    with pytest.raises(MissingGrantError) as err:
        if mode == "sync":
            with PostgresSaver.from_conn_string(no_purge["url"], schema=no_purge["s"]) as saver:
                purge_audit(saver, thread_id="t1")
        else:
            async with AsyncPostgresSaver.from_conn_string(
                no_purge["url"], schema=no_purge["s"]
            ) as asaver:
                await apurge_audit(asaver, thread_id="t1")
    _assert_names_the_grant(err.value, no_purge["s"], PURGE)
    assert err.value.operation == "purge_audit"
    assert _stored(no_purge) == before  # the thread and its trail are still there


@pytest.mark.parametrize("mode", MODES)
async def test_a_decision_without_the_append_grant_names_it_and_records_nothing(
    no_append: dict[str, str], mode: str
) -> None:
    before = _stored(no_append)
    with pytest.raises(MissingGrantError) as err:
        if mode == "sync":
            with PostgresSaver.from_conn_string(no_append["url"], schema=no_append["s"]) as saver:
                graph = review_graph(saver, open_to_all=False, approvers=("ops",))
                approve(graph, cfg("t1"), by="olga", roles=["ops"])
        else:
            async with AsyncPostgresSaver.from_conn_string(
                no_append["url"], schema=no_append["s"]
            ) as asaver:
                agraph = review_graph(asaver, open_to_all=False, approvers=("ops",))
                await aapprove(agraph, cfg("t1"), by="olga", roles=["ops"])
    _assert_names_the_grant(err.value, no_append["s"], APPEND)
    assert _stored(no_append) == before
    # the owner can still decide: nothing was recorded by the refused call
    with PostgresSaver.from_conn_string(no_append["owner_url"], schema=no_append["s"]) as owner:
        graph = review_graph(owner, open_to_all=False, approvers=("ops",))
        assert approve(graph, cfg("t1"), by="olga", roles=["ops"])["by"] == "olga"
