# Generated from checkpointers/redis/_connect_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""A client for a Redis URL, as ``from_conn_string`` opens it: plain or cluster.

Written once as async code; the sync module is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

import redis
import redis.cluster
from redis import exceptions as rx

from langgraph_durable.checkpointers.redis._base import opening_error


def connect(url: str, cluster: bool | None) -> redis.Redis | redis.cluster.RedisCluster:
    """A client for ``url``: a cluster client if ``cluster`` (``None``: ask the server).

    Raises:
        StorageUnavailableError: the server cannot be reached.
        StorageRefusedError: it refused the password or user.
    """
    try:
        if cluster is None:
            cluster = not url.startswith("unix") and _is_cluster(url)
        if cluster:
            client = redis.cluster.RedisCluster.from_url(url)
            return client
    except (rx.RedisError, rx.RedisClusterException) as exc:
        raise opening_error(exc, _probe(url, exc)) from exc
    return _plain_client(url)


def _plain_client(url: str) -> redis.Redis:
    """A plain client with a pool of its own.

    In asyncio a blocking pool of 100 connections: redis-py's asyncio pool
    fails at once ("Too many connections") when more calls are in flight (200
    concurrent graph runs on one saver hit that); a blocking one makes them
    wait for a free connection, 30 s at most.
    """
    return redis.Redis.from_url(url)


def _is_cluster(url: str) -> bool:
    probe = redis.Redis.from_url(url)
    try:
        return bool((probe.info("cluster")).get("cluster_enabled") == 1)
    finally:
        probe.close()


def _probe(url: str, exc: Exception) -> Exception | None:
    """What a plain client's PING meets, when a cluster client reached no node."""
    if isinstance(exc, rx.RedisError):
        return None
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except rx.RedisError as met:
        return met
    finally:
        client.close()
    return None
