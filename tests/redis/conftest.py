"""Fixtures of the Redis saver tests (the cluster ones are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from langgraph_durable.checkpointers.redis import RedisSaver
from tests.redis._own_server import OwnRedis


@pytest.fixture
def sync_saver(redis_prefix: tuple[str, str]) -> Iterator[RedisSaver]:
    """A set-up sync saver on the shared server under the test's own prefix."""
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        yield saver


@pytest.fixture
def raw(redis_prefix: tuple[str, str]) -> Iterator[redis.Redis]:
    """A plain client on the shared server, to inspect or damage keys."""
    client = redis.Redis.from_url(redis_prefix[0])
    yield client
    client.close()


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    """A redis-server of the test's own (AOF on), on a free port."""
    server = OwnRedis(args=["--appendonly", "yes", "--appendfsync", "always", "--save", ""])
    server.start()
    yield server
    server.remove()
