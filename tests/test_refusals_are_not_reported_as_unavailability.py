"""A server's refusal is StorageRefusedError with its code; only a lost server is unavailability.

A caller retrying on ``StorageUnavailableError`` must not retry forever on an
answer that does not change. A write the server refuses (a read-only session
on PostgreSQL, SQLSTATE 25006; a Redis user without the permission,
``NOPERM``) raises ``StorageRefusedError`` with the code and the operation,
never ``StorageUnavailableError``; a connection killed mid-session or a server
gone does raise ``StorageUnavailableError``. Both backends, sync and async.
What only one backend refuses (index-row limits, key sizes, a wrong password,
``WRONGTYPE``, a server out of memory) is in
``tests/postgres/test_pg_refusals_are_not_reported_as_unavailability.py`` and
``tests/redis/test_redis_refusals_are_not_reported_as_unavailability.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
import redis
import redis.asyncio as aredis
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.conninfo import make_conninfo

from langgraph_durable.checkpointers import StorageRefusedError, StorageUnavailableError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import POSTGRES, SAVER_KINDS
from tests.contract import SyncAsAsync
from tests.redis._own_server import OwnRedis

CONFIG: Any = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    """A redis-server of the test's own: its users change, and it is stopped."""
    own = OwnRedis(args=["--save", "", "--appendonly", "no"])
    own.start()
    yield own
    own.remove()


@asynccontextmanager
async def _pg_saver(kind: str, url: str, schema: str, **options: Any) -> AsyncIterator[Any]:
    if kind.endswith("-sync"):
        with PostgresSaver.from_conn_string(url, schema=schema, **options) as saver:
            yield SyncAsAsync(saver)
    else:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema, **options) as asaver:
            yield asaver


@asynccontextmanager
async def _redis_saver(kind: str, server: OwnRedis, **client: Any) -> AsyncIterator[Any]:
    """A saver whose client does not retry on its own: the saver answers after its attempts."""
    client["retry"] = None
    if kind == "redis-sync":
        saver = RedisSaver(redis.Redis(port=server.port, **client), prefix="p")
        try:
            yield SyncAsAsync(saver)
        finally:
            saver.client.close()
    else:
        asaver = AsyncRedisSaver(aredis.Redis(port=server.port, **client), prefix="p")
        try:
            yield asaver
        finally:
            await asaver.client.aclose()


async def _setup(saver: Any) -> None:
    if isinstance(saver, SyncAsAsync):
        await asyncio.to_thread(saver.inner.setup)
    else:
        await saver.setup()


@asynccontextmanager
async def _refusing_writes(kind: str, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A saver whose writes the server refuses, on storage that is set up."""
    if kind.startswith(POSTGRES):
        url, schema = request.getfixturevalue("pg_schema")
        async with _pg_saver(kind, url, schema) as saver:
            await _setup(saver)
        read_only = make_conninfo(url, options="-c default_transaction_read_only=on")
        async with _pg_saver(kind, read_only, schema) as saver:
            yield saver
        return
    server: OwnRedis = request.getfixturevalue("own_redis")
    admin = redis.Redis(port=server.port)
    admin.execute_command("ACL", "SETUSER", "limited", "on", ">pw", "~*", "+@all", "-evalsha")
    admin.close()
    async with _redis_saver(kind, server, username="limited", password="pw") as saver:
        yield saver


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_a_refused_write_is_storage_refused_with_its_code(
    kind: str, request: pytest.FixtureRequest
) -> None:
    async with _refusing_writes(kind, request) as saver:
        with pytest.raises(StorageRefusedError) as refused:
            await saver.aput(CONFIG, empty_checkpoint(), {}, {})
        if kind.startswith(POSTGRES):
            # a read-only session: reads still work
            assert await saver.aget_tuple(CONFIG) is None
    expected = "25006" if kind.startswith(POSTGRES) else "NOPERM"
    assert refused.value.code == expected and refused.value.operation == "put"
    assert not isinstance(refused.value, StorageUnavailableError)


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_a_lost_connection_or_server_is_unavailability(
    kind: str, request: pytest.FixtureRequest
) -> None:
    if kind.startswith(POSTGRES):
        url, schema = request.getfixturevalue("pg_schema")
        # one connection, not reopened: killing it loses the saver's only session
        async with _pg_saver(kind, url, schema, pool_size=None) as saver:
            await _setup(saver)
            conn = saver.inner.conn if isinstance(saver, SyncAsAsync) else saver.conn
            pid = conn.info.backend_pid
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            with pytest.raises(StorageUnavailableError) as lost:
                await saver.aput(CONFIG, empty_checkpoint(), {}, {})
    else:
        server: OwnRedis = request.getfixturevalue("own_redis")
        async with _redis_saver(kind, server) as saver:
            stored = await saver.aput(CONFIG, empty_checkpoint(), {}, {})
            assert stored["configurable"]["thread_id"] == "t1"
            server.stop()
            with pytest.raises(StorageUnavailableError) as lost:
                await saver.aput(CONFIG, empty_checkpoint(), {}, {})
    assert lost.value.operation == "put"
