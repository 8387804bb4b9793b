"""The official LangGraph conformance suite passes every capability: one node, a cluster, Valkey."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver


async def _run(url: str, prefix: str, kind: str) -> None:
    if kind == "async":

        async def factory() -> AsyncIterator[Any]:
            async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
                await saver.setup()
                yield saver

    else:

        async def factory() -> AsyncIterator[Any]:
            with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
                await asyncio.to_thread(saver.setup)
                yield saver

    registered = checkpointer_test(name=f"redis-{kind}")(factory)
    report = await validate(registered)
    detected = {name for name, r in report.results.items() if r.detected}
    assert detected == {c.value for c in ALL_CAPABILITIES}
    failures = {name: r.failures for name, r in report.results.items() if r.passed is False}
    assert failures == {}


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_conformance_single_node(redis_prefix: tuple[str, str], kind: str) -> None:
    await _run(*redis_prefix, kind)


@pytest.mark.cluster
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_conformance_cluster(cluster_prefix: tuple[str, str], kind: str) -> None:
    await _run(*cluster_prefix, kind)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_conformance_on_valkey(valkey_prefix: tuple[str, str], kind: str) -> None:
    info = redis.Redis.from_url(valkey_prefix[0]).info("server")
    assert info["server_name"] == "valkey", info
    await _run(*valkey_prefix, kind)
