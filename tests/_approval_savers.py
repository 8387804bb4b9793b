"""The savers the approval tests run on: every backend, one fixture.

``InMemorySaver`` exercises the fallback path (scan + in-process compare-and-set);
the Postgres and Redis savers exercise the indexed fast paths in storage.
``approval_saver`` is sync-facing (``graph.invoke``), ``async_approval_saver``
async-facing (``graph.ainvoke``). ``pgbouncer`` is the Postgres saver through a
PgBouncer in transaction mode (prepared statements off).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests._backends import POSTGRES, REDIS

# the savers approvals are tested on: the backends, Postgres through PgBouncer, and memory
APPROVAL_SAVERS = ["memory", POSTGRES, "pgbouncer", REDIS]
_ON_POSTGRES = (POSTGRES, "pgbouncer")


def saver_url(request: pytest.FixtureRequest, backend: str) -> tuple[str, dict[str, Any]]:
    """``(url, options)`` of an isolated storage area of ``backend`` for this test."""
    if backend == "postgres":
        url, schema = request.getfixturevalue("pg_set_up_schema")
        return url, {"schema": schema}
    if backend == "pgbouncer":
        url, schema = request.getfixturevalue("pg_bouncer_set_up_schema")
        return url, {"schema": schema, "prepared_statements": False}
    if backend == "redis":
        url, prefix = request.getfixturevalue("redis_prefix")
        return url, {"prefix": prefix}
    raise AssertionError(backend)


def open_sync(backend: str, url: str, options: dict[str, Any]) -> Any:
    """Context manager of a set-up sync saver (a pool, so threads may share it)."""
    from contextlib import contextmanager

    @contextmanager
    def cm() -> Iterator[Any]:
        if backend in _ON_POSTGRES:
            from langgraph_durable.checkpointers.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(url, pool_size=12, **options) as saver:
                saver.setup()
                yield saver
        else:
            from langgraph_durable.checkpointers.redis import RedisSaver

            with RedisSaver.from_conn_string(url, **options) as saver:
                saver.setup()
                yield saver

    return cm()


@pytest.fixture(params=APPROVAL_SAVERS)
def approval_saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A set-up sync saver of each backend, isolated for this test."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        yield saver


@pytest.fixture(params=APPROVAL_SAVERS)
async def async_approval_saver(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A set-up async saver of each backend, isolated for this test."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    url, options = saver_url(request, request.param)
    if request.param in _ON_POSTGRES:
        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url, pool_size=4, **options) as saver:
            await saver.setup()
            yield saver
    else:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(url, **options) as saver:
            await saver.setup()
            yield saver
