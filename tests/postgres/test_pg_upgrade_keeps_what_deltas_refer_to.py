"""Postgres upgrade_all keeps every delta readable when it rewrites pending writes.

A growing message list is stored as deltas that refer to the pending writes
holding the new items. An upgrade that renames a node (the writes' task ids
change) or upgrades the written channel's value (the writes' bytes change)
rewrites those writes; every checkpoint of the history must still read back
exactly what is expected, after ``upgrade_all`` (sync and async, in small
batches) and lazily on read, and the thread goes on afterwards.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from psycopg import sql

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.migrations import StateMigrations, aupgrade_all, upgrade_all
from tests._growing import growing_graph


def _graph(saver: Any, node: str = "append") -> Any:
    return growing_graph(saver, node=node)


def _tag(messages: list[Any]) -> list[Any]:
    return [m.model_copy(update={"content": "v1:" + m.content}) for m in messages]


def _migrations(kind: str) -> StateMigrations:
    m = StateMigrations(version=1)
    if kind in ("value", "both"):

        @m.upgrade(from_version=0)
        def tag(values: dict[str, Any]) -> dict[str, Any]:
            if "messages" in values:
                values["messages"] = _tag(values["messages"])
            return values

    if kind in ("rename", "both"):
        m.rename_node(from_version=0, old="append", new="add")
    return m


def _expected(kind: str, values: dict[str, Any] | None) -> Any:
    if values is None or kind == "rename":
        return values
    return _tag(values)


CONFIG: dict[str, Any] = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}


def _history(saver: Any) -> dict[str, Any]:
    return {
        t.config["configurable"]["checkpoint_id"]: t.checkpoint["channel_values"].get("messages")
        for t in saver.list(CONFIG)
    }


def _pending(saver: Any) -> dict[str, list[tuple[str, Any]]]:
    return {
        t.config["configurable"]["checkpoint_id"]: sorted(
            (ch, repr(v)) for _, ch, v in t.pending_writes or ()
        )
        for t in saver.list(CONFIG)
    }


def _write_refs(url: str, schema: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.checkpoint_blobs WHERE writes_of IS NOT NULL").format(
                sql.Identifier(schema)
            )
        ).fetchone()
    assert row is not None
    return int(row[0])


def _write_thread(url: str, schema: str) -> dict[str, Any]:
    with PostgresSaver.from_conn_string(url, schema=schema) as s:
        s.setup()
        _graph(s).invoke({"target": 40}, CONFIG)
        before = _history(s)
    # the case under test: deltas that refer to the pending writes exist
    assert _write_refs(url, schema) > 20
    return before


def _check_after(url: str, schema: str, m: StateMigrations, kind: str, before: dict) -> None:
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=m) as s:
        after = _history(s)
        assert after == {cid: _expected(kind, v) for cid, v in before.items()}
        # the thread goes on under the (new) node name
        graph = _graph(s, "add" if kind in ("rename", "both") else "append")
        graph.invoke({"target": 45}, CONFIG)
        final = graph.get_state(CONFIG).values["messages"]
        assert [x.id for x in final] == [f"m{i}" for i in range(45)]
        assert final[:40] == _expected(kind, before[max(before)])


@pytest.mark.parametrize("kind", ["rename", "value", "both"])
def test_upgrade_all_keeps_every_checkpoint_readable(pg_schema: tuple[str, str], kind: str) -> None:
    url, schema = pg_schema
    before = _write_thread(url, schema)
    m = _migrations(kind)
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=m) as s:
        # small batches: some checkpoints are read while their parent's
        # writes are already rewritten and their own value is not yet
        refs = _write_refs(url, schema)
        result = upgrade_all(s, m, all_history=True, batch_size=7)
        assert result.upgraded == len(before) and not result.failures
    # renamed writes keep their bytes: the deltas are re-pointed to them and
    # stay deltas; upgraded writes do not: the deltas become whole values
    assert _write_refs(url, schema) == (refs if kind == "rename" else 0)
    _check_after(url, schema, m, kind, before)


@pytest.mark.parametrize("kind", ["rename", "value", "both"])
def test_async_upgrade_all_keeps_every_checkpoint_readable(
    pg_schema: tuple[str, str], kind: str
) -> None:
    url, schema = pg_schema
    before = _write_thread(url, schema)
    m = _migrations(kind)

    async def main() -> None:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema, migrations=m) as s:
            result = await aupgrade_all(s, m, all_history=True, batch_size=5)
            assert result.upgraded == len(before) and not result.failures

    asyncio.run(main())
    _check_after(url, schema, m, kind, before)


@pytest.mark.parametrize("kind", ["rename", "value", "both"])
def test_latest_upgraded_then_history_upgraded_lazily_on_read(
    pg_schema: tuple[str, str], kind: str
) -> None:
    url, schema = pg_schema
    before = _write_thread(url, schema)
    m = _migrations(kind)
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=m) as s:
        lazy = _history(s)  # nothing rewritten: every read upgrades on the fly
        assert lazy == {cid: _expected(kind, v) for cid, v in before.items()}
        pending_lazy = _pending(s)
        result = upgrade_all(s, m)  # the latest checkpoint only
        assert result.upgraded == 1 and not result.failures
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=m) as s:
        assert _history(s) == lazy
        assert _pending(s) == pending_lazy
    _check_after(url, schema, m, kind, before)
