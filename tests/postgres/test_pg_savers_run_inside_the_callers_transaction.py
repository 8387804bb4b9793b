"""Postgres: in the caller's transaction, the savers run inside it and commit nothing.

A caller that wraps its work in ``with conn.transaction():`` (autocommit or
not, in pipeline mode too), or a non-autocommit connection already in a
transaction (``INTRANS``),
gets every saver call done in that transaction: a graph pauses and resumes,
reads see the transaction's own writes, a call the server refuses raises the
library's error and leaves the transaction usable (a savepoint of its own is
rolled back), and what the savers wrote becomes visible to others only when
the caller commits, and is gone if the caller rolls back. Sync and async.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from langgraph.types import Command
from psycopg import sql
from psycopg.conninfo import make_conninfo

from langgraph_durable.checkpointers import StorageRefusedError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from tests._pause_graph import pause_graph

MODES = ["sync", "async"]
# (autocommit, how the caller's transaction is open)
HOW = [(True, "block"), (False, "block"), (False, "implicit"), (True, "pipeline")]
CONFIG: Any = {"configurable": {"thread_id": "t1"}}


class _Caller:
    """The caller's own connection and transaction, sync or async alike."""

    def __init__(self, conn: Any, mode: str) -> None:
        self.conn, self.mode = conn, mode

    async def run(self, call: Any, *args: Any) -> Any:
        result = call(*args)
        return await result if self.mode == "async" else result

    async def execute(self, query: Any, params: Any = None) -> Any:
        cur = await self.run(self.conn.execute, query, params)
        return await self.run(cur.fetchall) if cur.description else None


@asynccontextmanager
async def _in_transaction(url: str, mode: str, autocommit: bool, how: str) -> AsyncIterator[Any]:
    """``(caller, transaction or None)`` inside the caller's open transaction."""
    if mode == "sync":
        with psycopg.connect(url, autocommit=autocommit) as conn:
            if how == "pipeline":
                with conn.pipeline(), conn.transaction() as tx:
                    yield _Caller(conn, mode), tx
            elif how == "block":
                with conn.transaction() as tx:
                    yield _Caller(conn, mode), tx
            else:
                conn.execute("SELECT 1")  # a non-autocommit connection is now INTRANS
                yield _Caller(conn, mode), None
        return
    async with await psycopg.AsyncConnection.connect(url, autocommit=autocommit) as aconn:
        if how == "pipeline":
            async with aconn.pipeline(), aconn.transaction() as atx:
                yield _Caller(aconn, mode), atx
        elif how == "block":
            async with aconn.transaction() as atx:
                yield _Caller(aconn, mode), atx
        else:
            await aconn.execute("SELECT 1")
            yield _Caller(aconn, mode), None


def _saver(caller: _Caller, schema: str) -> Any:
    cls = PostgresSaver if caller.mode == "sync" else AsyncPostgresSaver
    return cls(caller.conn, schema=schema)


async def _invoke(caller: _Caller, graph: Any, value: Any) -> Any:
    if caller.mode == "sync":
        return graph.invoke(value, CONFIG)
    return await graph.ainvoke(value, CONFIG)


async def _work(caller: _Caller, schema: str) -> None:
    """Pause and resume a graph, and have one call refused, in the caller's transaction."""
    saver = _saver(caller, schema)
    await caller.execute("INSERT INTO callers_own (note) VALUES ('before')")
    graph = pause_graph(saver)
    paused = await _invoke(caller, graph, {"items": ["start"]})
    assert paused["__interrupt__"][0].value == "ship it?"
    # the server refuses a write (a check the test added): the library's error,
    # and the caller's transaction goes on
    tup = await caller.run(saver.aget_tuple if caller.mode == "async" else saver.get_tuple, CONFIG)
    put_writes = saver.aput_writes if caller.mode == "async" else saver.put_writes
    with pytest.raises(StorageRefusedError) as refused:
        await caller.run(put_writes, tup.config, [("bad", 1)], "task-x")
    assert refused.value.code == "23514"
    done = await _invoke(caller, graph, Command(resume="yes"))
    assert done["items"] == ["start", "worked", "answered:yes"]
    await caller.execute("INSERT INTO callers_own (note) VALUES ('after')")
    assert caller.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE  # still open


def _stored(url: str, schema: str) -> tuple[list[Any], int]:
    """What another session sees: the caller's notes and the thread's checkpoints."""
    with psycopg.connect(url, autocommit=True) as other:
        notes = other.execute(
            sql.SQL("SELECT note FROM {} ORDER BY id").format(sql.Identifier(schema, "callers_own"))
        ).fetchall()
        (count,) = other.execute(
            sql.SQL("SELECT count(*) FROM {} WHERE thread_id = 't1'").format(
                sql.Identifier(schema, "checkpoints")
            )
        ).fetchone() or (0,)
    return [n for (n,) in notes], int(count)


@pytest.fixture
def area(pg_schema: tuple[str, str]) -> tuple[str, str]:
    """A set-up schema with a table of the caller's own and a check the savers trip."""
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as owner:
        owner.setup()
    with psycopg.connect(url, autocommit=True) as conn:
        s = sql.Identifier(schema)
        conn.execute(
            sql.SQL("CREATE TABLE {}.callers_own (id serial PRIMARY KEY, note text)").format(s)
        )
        conn.execute(
            sql.SQL("ALTER TABLE {}.checkpoint_writes ADD CHECK (channel <> 'bad')").format(s)
        )
    return url, schema


def _url_with_path(url: str, schema: str) -> str:
    """``url`` whose sessions find the caller's table unqualified (``search_path``)."""
    return make_conninfo(url, options=f"-c search_path={schema}")


@pytest.mark.parametrize(("autocommit", "how"), HOW)
@pytest.mark.parametrize("mode", MODES)
async def test_the_callers_commit_stores_the_savers_writes_with_its_own(
    area: tuple[str, str], mode: str, autocommit: bool, how: str
) -> None:
    url, schema = area
    async with _in_transaction(_url_with_path(url, schema), mode, autocommit, how) as (caller, _):
        await _work(caller, schema)
        # nothing is committed before the caller commits
        assert _stored(url, schema) == ([], 0)
        if how == "implicit":
            await caller.run(caller.conn.commit)
    notes, checkpoints = _stored(url, schema)
    assert notes == ["before", "after"] and checkpoints >= 4
    with PostgresSaver.from_conn_string(url, schema=schema) as other:
        state = pause_graph(other).get_state(CONFIG)
        assert state.values["items"] == ["start", "worked", "answered:yes"] and not state.next


@pytest.mark.parametrize(("autocommit", "how"), HOW)
@pytest.mark.parametrize("mode", MODES)
async def test_the_callers_rollback_takes_the_savers_writes_with_it(
    area: tuple[str, str], mode: str, autocommit: bool, how: str
) -> None:
    url, schema = area
    async with _in_transaction(_url_with_path(url, schema), mode, autocommit, how) as (
        caller,
        tx,
    ):
        await _work(caller, schema)
        if tx is not None:
            raise psycopg.Rollback(tx)
        await caller.run(caller.conn.rollback)
    assert _stored(url, schema) == ([], 0)
