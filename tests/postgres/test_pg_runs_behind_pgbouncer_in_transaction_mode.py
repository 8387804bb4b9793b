"""The Postgres savers run behind a real PgBouncer in transaction mode.

A pooler in transaction mode hands each transaction whichever server
connection is free, so nothing may live in a session: not a prepared
statement (``prepared_statements=False`` turns them off), not a session
advisory lock or a ``SET``. The savers keep none (the setup lock is
transaction-scoped, ``search_path`` and the audit-purge setting are
transaction-local). The contract, conformance and approval suites also run
through the session's bouncer (backends ``pg-bouncer-*`` and ``pgbouncer``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.types import Command
from psycopg import sql

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.migrations.postgres import latest_version
from tests._pause_graph import pause_graph
from tests._pgbouncer import OwnPgBouncer
from tests._servers import url_with


@pytest.fixture
def one_server_connection(pg_server_url: str, pg_schema) -> Iterator[tuple[str, str]]:
    """``(url, schema)`` through a bouncer of its own with ONE server connection for all clients."""
    bouncer = OwnPgBouncer(pg_server_url, pool_size=1).start()
    try:
        url, schema = pg_schema
        yield bouncer.url_for(url), schema
    finally:
        bouncer.stop()


def test_the_bouncer_pools_transactions_not_sessions(pg_bouncer_schema) -> None:
    """What the other tests rely on: clients share server connections, sessions do not last."""
    url, _ = pg_bouncer_schema
    clients = [psycopg.connect(url, autocommit=True, prepare_threshold=None) for _ in range(8)]
    try:
        pids = {c.execute("SELECT pg_backend_pid()").fetchone()[0] for c in clients}
        assert len(pids) <= 4  # the session bouncer's pool size
    finally:
        for c in clients:
            c.close()


@pytest.mark.parametrize("pool_size", [None, 3])
def test_two_sync_savers_share_one_server_connection(one_server_connection, pool_size) -> None:
    url, schema = one_server_connection
    options: dict[str, Any] = {"schema": schema, "pool_size": pool_size}
    with (
        PostgresSaver.from_conn_string(url, prepared_statements=False, **options) as a,
        PostgresSaver.from_conn_string(url, prepared_statements=False, **options) as b,
    ):
        a.setup()
        b.setup()
        ga, gb = pause_graph(a), pause_graph(b)
        for i in range(3):  # each saver's statements land on the other's server session
            ca = {"configurable": {"thread_id": f"a{i}"}}
            cb = {"configurable": {"thread_id": f"b{i}"}}
            assert ga.invoke({"items": ["s"]}, ca)["__interrupt__"][0].value == "ship it?"
            assert gb.invoke({"items": ["s"]}, cb)["__interrupt__"][0].value == "ship it?"
            # a resumes b's thread and b resumes a's
            assert gb.invoke(Command(resume="b"), ca)["items"] == ["s", "worked", "answered:b"]
            assert ga.invoke(Command(resume="a"), cb)["items"] == ["s", "worked", "answered:a"]


@pytest.mark.parametrize("pool_size", [None, 3])
async def test_two_async_savers_share_one_server_connection(
    one_server_connection, pool_size
) -> None:
    url, schema = one_server_connection
    options: dict[str, Any] = {"schema": schema, "pool_size": pool_size}
    async with (
        AsyncPostgresSaver.from_conn_string(url, prepared_statements=False, **options) as a,
        AsyncPostgresSaver.from_conn_string(url, prepared_statements=False, **options) as b,
    ):
        await a.setup()
        await b.setup()
        ga, gb = pause_graph(a), pause_graph(b)

        async def run(i: int) -> None:
            ca = {"configurable": {"thread_id": f"a{i}"}}
            cb = {"configurable": {"thread_id": f"b{i}"}}
            await asyncio.gather(ga.ainvoke({"items": ["s"]}, ca), gb.ainvoke({"items": ["s"]}, cb))
            done = await asyncio.gather(
                gb.ainvoke(Command(resume="b"), ca), ga.ainvoke(Command(resume="a"), cb)
            )
            assert [d["items"][-1] for d in done] == ["answered:b", "answered:a"]

        await asyncio.gather(*(run(i) for i in range(3)))


def test_concurrent_setups_through_the_bouncer_apply_each_step_once(pg_bouncer_schema) -> None:
    """The setup lock is transaction-scoped, so it holds under transaction pooling."""
    url, schema = pg_bouncer_schema
    fresh = f"{schema}_fresh"  # a schema no setup() has touched yet
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def setup() -> None:
        try:
            with PostgresSaver.from_conn_string(
                url, schema=fresh, prepared_statements=False
            ) as saver:
                start.wait()
                saver.setup()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=setup) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        with psycopg.connect(url, autocommit=True, prepare_threshold=None) as conn:
            versions = conn.execute(
                sql.SQL("SELECT version FROM {}.langgraph_durable_layout ORDER BY 1").format(
                    sql.Identifier(fresh)
                )
            ).fetchall()
        assert [v for (v,) in versions] == list(range(1, latest_version() + 1))
    finally:
        with psycopg.connect(url, autocommit=True, prepare_threshold=None) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(fresh)))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_takes_prepared_statements_off_the_url(one_server_connection) -> None:
    url, schema = one_server_connection
    target = url_with(url_with(url, "schema", schema), "prepared_statements", "false")
    assert _cli("setup", "--url", target).returncode == 0
    with PostgresSaver.from_conn_string(url, schema=schema, prepared_statements=False) as saver:
        graph = pause_graph(saver)
        graph.invoke({"items": ["s"]}, {"configurable": {"thread_id": "cli"}})
    for command in (["status"], ["inspect", "cli"]):
        out = _cli(*command, "--url", target)
        assert out.returncode == 0, out.stderr
    assert "cli" in out.stdout


def test_a_bad_prepared_statements_value_is_one_line(pg_schema) -> None:
    url, schema = pg_schema
    bad = url_with(url_with(url, "schema", schema), "prepared_statements", "maybe")
    out = _cli("status", "--url", bad)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "prepared_statements='maybe'" in lines[0] and "true or false" in lines[0]


def test_prepared_statements_must_be_a_bool(pg_schema) -> None:
    url, schema = pg_schema
    with (
        pytest.raises(Exception, match="prepared_statements"),
        PostgresSaver.from_conn_string(url, schema=schema, prepared_statements="no"),  # type: ignore[arg-type]
    ):
        pass
