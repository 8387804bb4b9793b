"""The savers the compensation/activity tests run on, and a way to open them by name.

``memory`` and ``langgraph-postgres`` (the official saver, which knows nothing of
activity results) exercise the fallback path; ``postgres`` and ``redis`` (ours)
exercise native activity storage. Subprocess workers open the same saver by
name with :func:`open_saver`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests._backends import BACKENDS

NATIVE = list(BACKENDS)
DURABLE = ["langgraph-postgres", *NATIVE]
IN_PROCESS = ["memory", *DURABLE]


def _with_search_path(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def open_saver(kind: str, url: str, area: str) -> Iterator[Any]:
    """A set-up saver of ``kind`` on the server at ``url``, isolated in ``area``.

    ``area`` is a PostgreSQL schema or a Redis key prefix.
    """
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "langgraph-postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(_with_search_path(url, area)) as saver:
            saver.setup()
            yield saver
    elif kind == "postgres":
        from langgraph_durable.checkpointers.postgres import PostgresSaver as OurPostgresSaver

        with OurPostgresSaver.from_conn_string(url, schema=area) as ours:
            ours.setup()
            yield ours
    elif kind == "redis":
        from langgraph_durable.checkpointers.redis import RedisSaver

        with RedisSaver.from_conn_string(url, prefix=area) as rsaver:
            rsaver.setup()
            yield rsaver
    else:
        raise AssertionError(f"unknown saver kind {kind!r}")


def saver_area(kind: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """``(url, area)`` for ``kind``, from the isolation fixtures."""
    if kind == "langgraph-postgres":
        # a database of its own: the official setup() runs CREATE INDEX
        # CONCURRENTLY, which waits for every older transaction in the database
        return request.getfixturevalue("pg_database"), "public"
    if kind in ("memory", "postgres"):
        url, schema = request.getfixturevalue("pg_schema")
        return url, schema
    url, prefix = request.getfixturevalue("redis_prefix")
    return url, prefix


@pytest.fixture(params=IN_PROCESS, name="saga_saver")
def saga_saver_fixture(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A set-up saver of each kind, isolated for this test."""
    kind = request.param
    if kind == "memory":
        yield InMemorySaver()
        return
    url, area = saver_area(kind, request)
    with open_saver(kind, url, area) as saver:
        yield saver
