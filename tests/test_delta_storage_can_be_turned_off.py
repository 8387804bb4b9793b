"""The ``deltas=`` option turns delta storage off and on per saver.

On both backends, sync and async: ``deltas=False`` stores every version of a
growing list whole; a saver with ``deltas=True`` on the same storage extends
the thread with deltas, and a ``deltas=False`` saver still reads those exactly
(and writes whole again). A ``DeltaPolicy`` tunes it (``max_depth`` bounds the
chains), and anything else is refused with an error naming the option.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from redis import asyncio as aredis

from langgraph_durable.checkpointers import DeltaPolicy, InvalidConfigError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.checkpointers.redis._keys import Keys
from tests._backends import POSTGRES, SAVER_KINDS
from tests._growing import growing_graph


def _graph(saver: Any) -> Any:
    return growing_graph(saver, payload=300)


CONFIG: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": 999}
Opener = Callable[..., AbstractAsyncContextManager[Any]]


class Backend:
    """Opens savers of one kind on one storage area and inspects the stored kinds."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.is_async = kind.endswith("async")
        if kind.startswith(POSTGRES):
            self.url, self.schema = request.getfixturevalue("pg_schema")
        else:
            self.url, self.prefix = request.getfixturevalue("redis_prefix")

    @asynccontextmanager
    async def open(self, **options: Any) -> AsyncIterator[Any]:
        if self.kind == "postgres-sync":
            with PostgresSaver.from_conn_string(self.url, schema=self.schema, **options) as s:
                s.setup()
                yield s
        elif self.kind == "postgres-async":
            async with AsyncPostgresSaver.from_conn_string(
                self.url, schema=self.schema, **options
            ) as s:
                await s.setup()
                yield s
        elif self.kind == "redis-sync":
            with RedisSaver.from_conn_string(self.url, prefix=self.prefix, **options) as s:
                s.setup()
                yield s
        else:
            async with AsyncRedisSaver.from_conn_string(
                self.url, prefix=self.prefix, **options
            ) as s:
                await s.setup()
                yield s

    async def run(self, saver: Any, target: int) -> list[Any]:
        """Grow the thread to ``target`` messages; every state of its history."""
        graph = _graph(saver)
        if self.is_async:
            await graph.ainvoke({"target": target}, CONFIG)
            return [s async for s in graph.aget_state_history(CONFIG)]
        graph.invoke({"target": target}, CONFIG)
        return list(graph.get_state_history(CONFIG))

    def kinds(self) -> list[str]:
        """Stored kind of every version of ``messages``, oldest first ("delta" or not)."""
        if self.kind.startswith(POSTGRES):
            with psycopg.connect(self.url) as conn:
                rows = conn.execute(
                    sql.SQL(
                        "SELECT type FROM {}.checkpoint_blobs WHERE channel = 'messages' "
                        "ORDER BY version"
                    ).format(sql.Identifier(self.schema))
                ).fetchall()
            return [r[0] for r in rows]
        client = redis.Redis.from_url(self.url)
        try:
            blobs = client.hgetall(Keys(self.prefix).thread("t")[4])
        finally:
            client.close()
        return [
            "delta" if v.startswith((b"delta\x00", b"delta2\x00")) else "whole"
            for k, v in sorted(blobs.items())
            if b"\x00messages\x00" in k
        ]


def _check(history: list[Any], target: int) -> None:
    """Every checkpoint holds m0.. in order, the latest all ``target`` of them."""
    lengths = []
    for snap in history:
        ids = [m.id for m in snap.values.get("messages", [])]
        assert ids == [f"m{i}" for i in range(len(ids))]
        lengths.append(len(ids))
    assert lengths[0] == target
    assert lengths == sorted(lengths, reverse=True)


@pytest.fixture(params=SAVER_KINDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return Backend(request.param, request)


async def test_deltas_off_then_on_then_off_again(backend: Backend) -> None:
    async with backend.open(deltas=False) as saver:
        history = await backend.run(saver, 30)
    _check(history, 30)
    kinds = backend.kinds()
    assert len(kinds) == 30 and "delta" not in kinds

    async with backend.open() as saver:  # the default: deltas on
        history = await backend.run(saver, 60)
    _check(history, 60)
    added = backend.kinds()[30:]
    assert added.count("delta") >= 25, added

    async with backend.open(deltas=False) as saver:
        history = await backend.run(saver, 75)  # reads the deltas, writes whole
    _check(history, 75)
    assert "delta" not in backend.kinds()[60:]


async def test_a_policy_bounds_the_chains(backend: Backend) -> None:
    async with backend.open(deltas=DeltaPolicy(max_depth=3)) as saver:
        _check(await backend.run(saver, 40), 40)
    kinds = backend.kinds()
    run = longest = 0
    for kind in kinds:
        run = run + 1 if kind == "delta" else 0
        longest = max(longest, run)
    assert longest == 3, kinds


@pytest.mark.parametrize(
    "bad", ["yes", 1, None, DeltaPolicy], ids=["str", "int", "none", "the-class"]
)
async def test_anything_else_is_refused_naming_the_option(bad: Any) -> None:
    url = "postgresql://127.0.0.1:1/none"  # never connected: constructors do no I/O
    savers = [
        lambda: PostgresSaver(ConnectionPool(url, open=False), deltas=bad),
        lambda: AsyncPostgresSaver(AsyncConnectionPool(url, open=False), deltas=bad),
        lambda: RedisSaver(redis.Redis.from_url("redis://127.0.0.1:1"), deltas=bad),
        lambda: AsyncRedisSaver(aredis.Redis.from_url("redis://127.0.0.1:1"), deltas=bad),
    ]
    for make in savers:
        with pytest.raises(InvalidConfigError) as err:
            make()
        assert err.value.field == "deltas"
        assert repr(bad) in str(err.value)


@pytest.mark.parametrize(
    "options",
    [{"ratio": 0}, {"ratio": -1.0}, {"max_depth": -1}, {"min_size": "big"}, {"row_cost": True}],
)
def test_a_policy_with_a_bad_field_is_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidConfigError) as err:
        DeltaPolicy(**options)
    assert err.value.field == f"deltas.{next(iter(options))}"
