"""Fixtures of the Redis saver tests: savers on the shared server, a local cluster."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
from redis.cluster import RedisCluster

from checkpointers.redis import RedisSaver
from tests._redis_cluster import LocalCluster, start_cluster
from tests.redis._own_server import OwnRedis


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """A 3-master Redis Cluster started from the redis-server binary for this session."""
    cluster = start_cluster()
    yield cluster
    cluster.stop()


@pytest.fixture
def cluster_prefix(redis_cluster: LocalCluster) -> Iterator[tuple[str, str]]:
    """``(url, prefix)`` on the test cluster; the prefix's keys are deleted afterwards."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield redis_cluster.url, prefix
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        for node in client.get_primaries():
            for key in client.scan_iter(match=f"*{prefix}*", count=1000, target_nodes=node):
                client.delete(key)
    finally:
        client.close()


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
