"""langgraph-durable's savers as parameters of LangGraph's own checkpointer fixtures.

Copied into ``libs/langgraph/tests/`` of a LangGraph checkout by ``run.py``, which
appends one import to that folder's ``conftest.py``: the ``sync_checkpointer`` and
``async_checkpointer`` fixtures below then replace LangGraph's, with its own
parameters kept and ours added beside them, the way its
``tests/conftest_checkpointer.py`` adds langgraph-checkpoint-postgres. Each of our
savers is built as a user builds it and treated as LangGraph treats the official
one: a database (Postgres) or key prefix (Redis) of its own per test, ``setup()``,
then ``_apply_strict_msgpack`` (which swaps in a strict serializer when
``LANGGRAPH_STRICT_MSGPACK`` is true).

Servers: ``POSTGRES_URL`` / ``REDIS_URL``, else the local defaults; LangGraph's
own Postgres fixtures (its stores, the official savers) use the same server.
LangGraph's fixtures are reached through pytest's fixture definitions
(``_get_wrapped_function``, pytest >= 8.4), so their parameters stay its own.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import redis
import tests.conftest_checkpointer as official_checkpointers
import tests.conftest_store as official_stores
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from tests.conftest_checkpointer import _apply_strict_msgpack

import tests.conftest as official
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver

POSTGRES_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# LangGraph's own fixtures (its stores, which some of these tests take beside
# the checkpointer, and the official savers) point at its docker compose
# server (localhost:5442): they use this machine's server instead
_SERVER = urlunsplit(urlsplit(POSTGRES_URL)._replace(path="/", query="", fragment=""))
official_stores.DEFAULT_POSTGRES_URI = _SERVER
official_checkpointers.DEFAULT_POSTGRES_URI = _SERVER

SYNC = ("durable_postgres", "durable_postgres_pool", "durable_redis")
ASYNC = ("durable_postgres_aio", "durable_postgres_aio_pool", "durable_redis_aio")


def _with_dbname(url: str, dbname: str) -> str:
    return psycopg.conninfo.make_conninfo(url, dbname=dbname)


@contextmanager
def _database() -> Iterator[str]:
    name = f"lgsuite_{secrets.token_hex(8)}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_dbname(POSTGRES_URL, name)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def _prefix() -> Iterator[str]:
    prefix = f"lgsuite{secrets.token_hex(6)}"
    try:
        yield prefix
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        try:
            keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
            for i in range(0, len(keys), 500):
                client.delete(*keys[i : i + 500])
        finally:
            client.close()


@contextmanager
def _sync_saver(name: str) -> Iterator[BaseCheckpointSaver[Any]]:
    if name == "durable_redis":
        with _prefix() as prefix, RedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
            saver.setup()
            _apply_strict_msgpack(saver)
            yield saver
        return
    with _database() as url:
        if name == "durable_postgres":
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
                _apply_strict_msgpack(saver)
                yield saver
        else:
            with ConnectionPool(url, max_size=10, kwargs={"autocommit": True}) as pool:
                saver = PostgresSaver(pool)
                saver.setup()
                _apply_strict_msgpack(saver)
                yield saver


@asynccontextmanager
async def _async_saver(name: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    if name == "durable_redis_aio":
        with _prefix() as prefix:
            async with AsyncRedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
                await saver.setup()
                _apply_strict_msgpack(saver)
                yield saver
        return
    with _database() as url:
        if name == "durable_postgres_aio":
            async with AsyncPostgresSaver.from_conn_string(url) as saver:
                await saver.setup()
                _apply_strict_msgpack(saver)
                yield saver
        else:
            async with AsyncConnectionPool(url, max_size=10, kwargs={"autocommit": True}) as pool:
                saver = AsyncPostgresSaver(pool)
                await saver.setup()
                _apply_strict_msgpack(saver)
                yield saver


def _params(fixture: Any) -> list[str]:
    """The parameters LangGraph's own fixture declares (kept, ours added)."""
    marker = getattr(fixture, "_fixture_function_marker", None)
    params = getattr(marker, "params", None)
    if params is None:
        raise RuntimeError("cannot read the parameters of LangGraph's checkpointer fixture")
    return list(params)


_official_sync = official.sync_checkpointer
_official_async = official.async_checkpointer
_official_sync_fn = _official_sync._get_wrapped_function()
_official_async_fn = _official_async._get_wrapped_function()


@pytest.fixture(scope="function", params=[*_params(_official_sync), *SYNC])
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver[Any]]:
    """LangGraph's ``sync_checkpointer`` with langgraph-durable's sync savers beside it."""
    if request.param in SYNC:
        with _sync_saver(request.param) as saver:
            yield saver
    else:
        yield from _official_sync_fn(request)


@pytest.fixture(scope="function", params=[*_params(_official_async), *ASYNC])
async def async_checkpointer(
    request: pytest.FixtureRequest,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's ``async_checkpointer`` with langgraph-durable's async savers beside it."""
    if request.param in ASYNC:
        async with _async_saver(request.param) as saver:
            yield saver
    else:
        async for saver in _official_async_fn(request):
            yield saver
