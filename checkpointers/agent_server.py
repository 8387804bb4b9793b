"""Checkpointer factories for LangGraph Agent Server (``langgraph.json``).

The server (``langgraph dev``, ``langgraph up``, a LangSmith deployment) takes a
custom checkpointer as an import path to an async context manager that yields
a saver; it enters it once per event loop and exits it at shutdown::

    {
      "graphs": {"agent": "./agent.py:graph"},
      "checkpointer": {"path": "langgraph_durable.checkpointers.agent_server:postgres"}
    }

Each factory is configured by environment variables (the server's ``env``
file or the process environment):

``LANGGRAPH_DURABLE_POSTGRES_URL`` / ``LANGGRAPH_DURABLE_REDIS_URL``
    The storage URL (required). Our query parameters work as on the command
    line: ``?schema=NAME`` and ``?prepared_statements=false`` (behind PgBouncer
    in transaction mode) on Postgres, ``?prefix=NAME`` on Redis.
``LANGGRAPH_DURABLE_POOL_SIZE``
    Connections of the Postgres pool (default 10): the server runs several
    runs at once.
``LANGGRAPH_DURABLE_SETUP``
    ``true`` (default) runs ``setup()`` when the server starts (idempotent,
    safe from several replicas at once); ``false`` leaves it to a deploy step
    (``langgraph-durable setup``).

Importing this module imports neither driver: a factory imports its own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._url_options import (
    backend_of,
    parse_bool,
    split_saver_options,
)

POSTGRES_URL_ENV = "LANGGRAPH_DURABLE_POSTGRES_URL"
REDIS_URL_ENV = "LANGGRAPH_DURABLE_REDIS_URL"
POOL_SIZE_ENV = "LANGGRAPH_DURABLE_POOL_SIZE"
SETUP_ENV = "LANGGRAPH_DURABLE_SETUP"
DEFAULT_POOL_SIZE = 10


def _url(env: str, backend: str) -> tuple[str, dict[str, Any]]:
    url = os.environ.get(env, "").strip()
    if not url:
        raise InvalidConfigError(field=env, reason="not set: the storage URL of the saver")
    if backend_of(url) != backend:
        # only the scheme: the rest may hold a password
        got = f"{url.split('://', 1)[0][:20]}://" if "://" in url else "a keyword DSN"
        raise InvalidConfigError(field=env, reason=f"expected a {backend} URL, got {got}")
    try:
        return split_saver_options(url, backend)
    except InvalidConfigError as exc:
        if exc.field != "url":
            raise
        raise InvalidConfigError(field=env, reason=exc.reason) from None


def _setup_wanted() -> bool:
    return parse_bool(SETUP_ENV, os.environ.get(SETUP_ENV, "true"))


def _pool_size() -> int:
    raw = os.environ.get(POOL_SIZE_ENV, str(DEFAULT_POOL_SIZE))
    try:
        size = int(raw)
    except ValueError:
        size = 0
    if size < 1:
        raise InvalidConfigError(field=POOL_SIZE_ENV, reason=f"{raw!r}: expected an integer >= 1")
    return size


@asynccontextmanager
async def postgres() -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on ``$LANGGRAPH_DURABLE_POSTGRES_URL`` with a pool.

    Yields:
        The saver, set up unless ``LANGGRAPH_DURABLE_SETUP=false``; its pool
        closes when the server exits the context.

    Raises:
        InvalidConfigError: a variable is missing or malformed (named in the error).
    """
    url, options = _url(POSTGRES_URL_ENV, "postgres")
    pool_size, setup = _pool_size(), _setup_wanted()
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(url, pool_size=pool_size, **options) as saver:
        if setup:
            await saver.setup()
        yield saver


@asynccontextmanager
async def redis() -> AsyncIterator[Any]:
    """An ``AsyncRedisSaver`` on ``$LANGGRAPH_DURABLE_REDIS_URL``.

    Yields:
        The saver, set up unless ``LANGGRAPH_DURABLE_SETUP=false``; its client
        closes when the server exits the context.

    Raises:
        InvalidConfigError: a variable is missing or malformed (named in the error).
    """
    url, options = _url(REDIS_URL_ENV, "redis")
    setup = _setup_wanted()
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver

    async with AsyncRedisSaver.from_conn_string(url, **options) as saver:
        if setup:
            await saver.setup()
        yield saver


__all__ = ["postgres", "redis"]
