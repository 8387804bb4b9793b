"""The ``saver_factory`` / ``saver`` fixtures of the contract suite.

``SAVER_FACTORIES`` maps a backend id to a function of the pytest ``request``
that sets up isolated storage and returns an *opener*: a zero-argument-capable
async context manager factory (``opener(**saver_options)``) yielding a ready,
async-facing saver on that storage. Each call opens an independent instance
on the same storage, so tests can write with one and resume with another.
See ``tests/contract/__init__.py`` for how to add a backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests.contract import SyncAsAsync

Opener = Callable[..., AbstractAsyncContextManager[Any]]


def _pg_sync(request: pytest.FixtureRequest) -> Opener:
    url, schema = request.getfixturevalue("pg_set_up_schema")

    @asynccontextmanager
    async def open_saver(**options: Any) -> AsyncIterator[SyncAsAsync]:
        with ConnectionPool(url, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            saver = PostgresSaver(pool, schema=schema, **options)
            await asyncio.to_thread(saver.setup)
            yield SyncAsAsync(saver)

    return open_saver


PARTITIONS = 4
"""Hash partitions of the partitioned layout the suite also runs on."""


def _pg_on(
    fixture: str, *, sync: bool, partitions: int | None = None, **saver_options: Any
) -> Callable[[pytest.FixtureRequest], Opener]:
    """Opener factory: savers from a URL (pool of 4) on the area ``fixture`` gives."""
    setup_options = {} if partitions is None else {"partitions": partitions}

    def factory(request: pytest.FixtureRequest) -> Opener:
        url, schema = request.getfixturevalue(fixture)

        @asynccontextmanager
        async def open_sync(**options: Any) -> AsyncIterator[SyncAsAsync]:
            with PostgresSaver.from_conn_string(
                url, schema=schema, pool_size=4, **saver_options, **options
            ) as saver:
                await asyncio.to_thread(saver.setup, **setup_options)
                yield SyncAsAsync(saver)

        @asynccontextmanager
        async def open_async(**options: Any) -> AsyncIterator[AsyncPostgresSaver]:
            async with AsyncPostgresSaver.from_conn_string(
                url, schema=schema, pool_size=4, **saver_options, **options
            ) as saver:
                await saver.setup(**setup_options)
                yield saver

        return open_sync if sync else open_async

    return factory


def _redis_sync(request: pytest.FixtureRequest) -> Opener:
    url, prefix = request.getfixturevalue("redis_prefix")

    @asynccontextmanager
    async def open_saver(**options: Any) -> AsyncIterator[SyncAsAsync]:
        with RedisSaver.from_conn_string(url, prefix=prefix, **options) as saver:
            await asyncio.to_thread(saver.setup)
            yield SyncAsAsync(saver)

    return open_saver


def _redis_async_on(fixture: str) -> Callable[[pytest.FixtureRequest], Opener]:
    def factory(request: pytest.FixtureRequest) -> Opener:
        url, prefix = request.getfixturevalue(fixture)

        @asynccontextmanager
        async def open_saver(**options: Any) -> AsyncIterator[AsyncRedisSaver]:
            async with AsyncRedisSaver.from_conn_string(url, prefix=prefix, **options) as saver:
                await saver.setup()
                yield saver

        return open_saver

    return factory


SAVER_FACTORIES: dict[str, Callable[[pytest.FixtureRequest], Opener]] = {
    "postgres-sync": _pg_sync,
    "postgres-async": _pg_on("pg_set_up_schema", sync=False),
    # through a PgBouncer in transaction mode, prepared statements off
    "pgbouncer-sync": _pg_on("pg_bouncer_set_up_schema", sync=True, prepared_statements=False),
    "pgbouncer-async": _pg_on("pg_bouncer_set_up_schema", sync=False, prepared_statements=False),
    # the hash-partitioned layout (setup(partitions=N)); under the `partitioned` marker
    "postgres-partitioned-sync": _pg_on("pg_schema", sync=True, partitions=PARTITIONS),
    "postgres-partitioned-async": _pg_on("pg_schema", sync=False, partitions=PARTITIONS),
    "redis-sync": _redis_sync,
    "redis-async": _redis_async_on("redis_prefix"),
    # the whole suite on the test-started 3-master Redis Cluster too
    "redis-cluster-async": _redis_async_on("cluster_prefix"),
    # and on a Valkey server the tests start: the saver promises Valkey as well
    "valkey-async": _redis_async_on("valkey_prefix"),
}
_PARTITIONED = [pytest.mark.partitioned, pytest.mark.slow]
_MARKS = {
    "redis-cluster-async": [pytest.mark.cluster],
    "postgres-partitioned-sync": _PARTITIONED,
    "postgres-partitioned-async": _PARTITIONED,
}


@pytest.fixture(params=[pytest.param(k, marks=_MARKS.get(k, [])) for k in sorted(SAVER_FACTORIES)])
def saver_factory(request: pytest.FixtureRequest) -> Opener:
    """Opener of savers of one backend on one isolated storage area."""
    return SAVER_FACTORIES[request.param](request)


@pytest.fixture
async def saver(saver_factory: Opener) -> AsyncIterator[Any]:
    """A ready async-facing saver (sync savers wrapped in ``SyncAsAsync``)."""
    async with saver_factory() as s:
        yield s
