"""Postgres: a saver on a schema where ``setup()`` never ran says so, and what to run.

A read raises ``LayoutVersionError`` (``found`` is ``None``) whose message
says plainly that the storage is not set up, names the schema and the
database, and gives both ways out (``saver.setup()``, ``langgraph-durable
setup --url``) with the URL parameter that names the schema; it never reads
as a layout version. Sync and async; a schema that exists and holds nothing,
and one that does not exist.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

from langgraph_durable.checkpointers import LayoutVersionError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver

CONFIG: dict[str, dict[str, str]] = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}


def _database(url: str) -> str:
    with psycopg.connect(url) as conn:
        return conn.info.dbname


def _assert_says_not_set_up(error: LayoutVersionError, schema: str, database: str) -> None:
    message = str(error)
    assert error.found is None
    assert message.startswith(
        f'storage is not set up for schema "{schema}" of database "{database}": '
    )
    assert "call saver.setup() once" in message
    assert f'`langgraph-durable setup --url "postgresql://...?schema={schema}"`' in message
    assert "layout version" not in message and "None" not in message


@pytest.mark.parametrize("exists", [True, False], ids=["empty-schema", "no-such-schema"])
async def test_reads_say_the_storage_is_not_set_up(
    pg_schema: tuple[str, str], exists: bool
) -> None:
    url, schema = pg_schema
    if not exists:
        schema = f"nothing_{uuid.uuid4().hex[:12]}"
    database = _database(url)

    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        with pytest.raises(LayoutVersionError) as caught:
            saver.get_tuple(CONFIG)
        _assert_says_not_set_up(caught.value, schema, database)

    async with AsyncPostgresSaver.from_conn_string(url, schema=schema, pool_size=None) as asaver:
        with pytest.raises(LayoutVersionError) as acaught:
            await asaver.aget_tuple(CONFIG)
        _assert_says_not_set_up(acaught.value, schema, database)
