"""The official LangGraph conformance suite passes for both Postgres savers.

The sync saver runs through :class:`tests.contract.SyncAsAsync`, which calls
its sync methods in a worker thread, so the suite exercises the sync API.
Both also pass through a PgBouncer in transaction mode, with server-side
prepared statements off (``prepared_statements=False``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from tests.contract import SyncAsAsync


async def _check(registered) -> None:  # type: ignore[no-untyped-def]
    report = await validate(registered)
    detected = {name for name, r in report.results.items() if r.detected}
    # every capability of the contract is implemented, so every one is detected...
    assert detected == {c.value for c in ALL_CAPABILITIES}, report.results
    # ...and passes
    failures = {name: r.failures for name, r in report.results.items() if r.passed is not True}
    assert not failures, failures


async def test_async_saver_passes_every_conformance_capability(pg_schema) -> None:
    url, schema = pg_schema

    @checkpointer_test(name="AsyncPostgresSaver")
    async def factory() -> AsyncIterator[AsyncPostgresSaver]:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
            await saver.setup()
            yield saver

    await _check(factory)


async def test_async_saver_passes_every_capability_on_hash_partitions(pg_schema) -> None:
    url, schema = pg_schema

    @checkpointer_test(name="AsyncPostgresSaver, partitioned")
    async def factory() -> AsyncIterator[AsyncPostgresSaver]:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
            await saver.setup(partitions=4)
            yield saver

    await _check(factory)


async def test_sync_saver_passes_every_capability_on_hash_partitions(pg_schema) -> None:
    url, schema = pg_schema

    @checkpointer_test(name="PostgresSaver, partitioned")
    async def factory() -> AsyncIterator[SyncAsAsync]:
        with PostgresSaver.from_conn_string(url, schema=schema, pool_size=4) as saver:
            saver.setup(partitions=4)
            yield SyncAsAsync(saver)

    await _check(factory)


async def test_sync_saver_passes_every_conformance_capability(pg_schema) -> None:
    url, schema = pg_schema

    @checkpointer_test(name="PostgresSaver")
    async def factory() -> AsyncIterator[SyncAsAsync]:
        with ConnectionPool(url, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            saver = PostgresSaver(pool, schema=schema)
            saver.setup()
            yield SyncAsAsync(saver)

    await _check(factory)


@pytest.mark.parametrize("pool_size", [None, 4])
async def test_async_saver_passes_every_capability_through_pgbouncer(
    pg_bouncer_schema, pool_size
) -> None:
    url, schema = pg_bouncer_schema

    @checkpointer_test(name="AsyncPostgresSaver via PgBouncer")
    async def factory() -> AsyncIterator[AsyncPostgresSaver]:
        async with AsyncPostgresSaver.from_conn_string(
            url, schema=schema, pool_size=pool_size, prepared_statements=False
        ) as saver:
            await saver.setup()
            yield saver

    await _check(factory)


@pytest.mark.parametrize("pool_size", [None, 4])
async def test_sync_saver_passes_every_capability_through_pgbouncer(
    pg_bouncer_schema, pool_size
) -> None:
    url, schema = pg_bouncer_schema

    @checkpointer_test(name="PostgresSaver via PgBouncer")
    async def factory() -> AsyncIterator[SyncAsAsync]:
        with PostgresSaver.from_conn_string(
            url, schema=schema, pool_size=pool_size, prepared_statements=False
        ) as saver:
            saver.setup()
            yield SyncAsAsync(saver)

    await _check(factory)
