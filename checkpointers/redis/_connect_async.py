"""A client for a Redis URL, as ``from_conn_string`` opens it: plain or cluster.

Written once as async code; the sync module is generated from it by
``tools/async_to_sync.py``.
"""

from __future__ import annotations

import redis.asyncio
import redis.asyncio.cluster
from redis import exceptions as rx

from langgraph_durable.checkpointers.redis._base import opening_error


async def aconnect(
    url: str, cluster: bool | None
) -> redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster:
    """A client for ``url``: a cluster client if ``cluster`` (``None``: ask the server).

    Raises:
        StorageUnavailableError: the server cannot be reached.
        StorageRefusedError: it refused the password or user.
    """
    try:
        if cluster is None:
            cluster = not url.startswith("unix") and await _is_cluster(url)
        if cluster:
            client = redis.asyncio.cluster.RedisCluster.from_url(url)
            await _initialize(client)  # async-only
            return client
    except (rx.RedisError, rx.RedisClusterException) as exc:
        raise opening_error(exc, await _probe(url, exc)) from exc
    return _plain_client(url)


async def _initialize(client: redis.asyncio.cluster.RedisCluster) -> None:  # async-only
    # connects, as the sync cluster client does when it is made
    try:
        await client.initialize()
    except BaseException:
        await client.aclose()
        raise


def _plain_client(url: str) -> redis.asyncio.Redis:
    """A plain client with a pool of its own.

    In asyncio a blocking pool of 100 connections: redis-py's asyncio pool
    fails at once ("Too many connections") when more calls are in flight (200
    concurrent graph runs on one saver hit that); a blocking one makes them
    wait for a free connection, 30 s at most.
    """
    # sync-only: return redis.Redis.from_url(url)
    limits = {"max_connections": 100, "timeout": 30.0}  # async-only
    pool = redis.asyncio.BlockingConnectionPool.from_url(url, **limits)  # async-only
    return redis.asyncio.Redis.from_pool(pool)  # async-only


async def _is_cluster(url: str) -> bool:
    probe = redis.asyncio.Redis.from_url(url)
    try:
        return bool((await probe.info("cluster")).get("cluster_enabled") == 1)
    finally:
        await probe.aclose()


async def _probe(url: str, exc: Exception) -> Exception | None:
    """What a plain client's PING meets, when a cluster client reached no node."""
    if isinstance(exc, rx.RedisError):
        return None
    client = redis.asyncio.Redis.from_url(url)
    try:
        await client.ping()
    except rx.RedisError as met:
        return met
    finally:
        await client.aclose()
    return None
