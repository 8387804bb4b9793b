"""Postgres, pipeline mode: a statement's rows are its own, however early earlier answers arrive.

The shells send an operation's statements one after the other on the
caller's pipeline and read back only those that return rows. The server
sends what it has answered so far whenever it raises a notice (``CREATE
SCHEMA IF NOT EXISTS`` on a schema that exists does, as ``setup()`` runs it):
such an earlier answer that reaches the client while a later statement is
sent must never be read as that statement's rows (it made ``setup()`` fail
with "the last operation didn't produce records (command status: CREATE
SCHEMA)" under load). Here the operation waits for those answers to arrive
before it sends the statement it reads, so the old race happens every time.
Sync and async.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from langgraph_durable.checkpointers.postgres._runner import drive
from langgraph_durable.checkpointers.postgres._runner_async import adrive
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt

MODES = ["sync", "async"]
FIRSTS = ["a command", "a query"]


def _operation(conn: Any, schema: str, first: str) -> Op:
    """A statement, one that raises a notice, then the one whose rows are read."""
    create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
    query = create.as_string(conn)
    yield Stmt(query if first == "a command" else "SELECT 'not these rows'")
    yield Stmt(query)  # the schema exists: a notice, and the server sends what it has
    # until the answers so far are here (the race, made certain)
    select.select([conn.pgconn.socket], [], [], 30)
    rows = yield Stmt("SELECT 'these rows'", fetch=True)
    return rows


@pytest.mark.parametrize("first", FIRSTS)
@pytest.mark.parametrize("mode", MODES)
async def test_rows_are_read_from_their_own_statement(
    pg_schema: tuple[str, str], mode: str, first: str
) -> None:
    url, schema = pg_schema
    if mode == "sync":
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn, conn.pipeline():
            for _ in range(3):
                assert drive(conn, _operation(conn, schema, first)) == [("these rows",)]
        return
    async with (
        await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row) as aconn,
        aconn.pipeline(),
    ):
        for _ in range(3):
            assert await adrive(aconn, _operation(aconn, schema, first)) == [("these rows",)]
