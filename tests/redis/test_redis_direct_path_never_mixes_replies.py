"""The savers' direct path (connections held out of the pool) recovers and never mixes replies.

A call cancelled mid-flight leaves its replies unread on its connection: that
connection must never serve another call. Connections the server closed
while the saver held them are replaced on the next call; a server that stops
answering fails the waiting calls after the client's socket timeout.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import StorageUnavailableError
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests.redis._own_server import OwnRedis


def _cp(saver: Any, tag: str, size: int) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = {"tag": tag, "blob": uuid.uuid4().hex * (size // 32)}
    cp["channel_versions"] = {
        "tag": saver.get_next_version(None, None),
        "blob": saver.get_next_version(None, None),
    }
    return cp


def _kill_named(raw: redis.Redis, name: str) -> int:
    ids = [c["id"] for c in raw.client_list() if c.get("name") == name]
    for cid in ids:
        raw.client_kill_filter(_id=cid)
    return len(ids)


async def test_cancelled_calls_never_hand_their_replies_to_others(
    redis_prefix: tuple[str, str],
) -> None:
    url, prefix = redis_prefix
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()
        configs = {}
        for tag in ("a", "b", "c"):
            config = {"configurable": {"thread_id": f"t-{tag}-{uuid.uuid4()}", "checkpoint_ns": ""}}
            cp = _cp(saver, tag, 200_000)
            configs[tag] = await saver.aput(config, cp, {"tag": tag}, cp["channel_versions"])
        # cancel reads at every stage: before the write, mid-reply, after
        for delay in [0, 0, 0.0002, 0.0005, 0.001, 0.002] * 5:
            tasks = [asyncio.ensure_future(saver.aget_tuple(c)) for c in configs.values()]
            await asyncio.sleep(delay)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            got = await asyncio.gather(*(saver.aget_tuple(c) for c in configs.values()))
            for tag, tup in zip(configs, got, strict=True):
                assert tup is not None
                assert tup.checkpoint["channel_values"]["tag"] == tag
                assert tup.metadata["tag"] == tag


async def test_async_saver_replaces_connections_the_server_closed(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    name = f"lgd-test-{uuid.uuid4().hex[:8]}"
    base = f"t-{uuid.uuid4()}"
    configs = [
        {"configurable": {"thread_id": f"{base}-{i}", "checkpoint_ns": ""}} for i in range(8)
    ]
    async with AsyncRedisSaver.from_conn_string(
        f"{url}?client_name={name}", prefix=prefix
    ) as saver:
        await saver.setup()
        for round_ in range(3):
            # several calls at once (on the connection the saver holds)
            cps = [_cp(saver, f"{round_}-{i}", 1000) for i in range(8)]
            await asyncio.gather(
                *(
                    saver.aput(c, cp, {"i": i}, cp["channel_versions"])
                    for i, (c, cp) in enumerate(zip(configs, cps, strict=True))
                )
            )
            assert _kill_named(raw, name) >= 1
            got = await asyncio.gather(*(saver.aget_tuple(c) for c in configs))
            assert [t.metadata["i"] for t in got if t is not None] == list(range(8))
            assert [t.checkpoint["channel_values"]["tag"] for t in got if t is not None] == [
                f"{round_}-{i}" for i in range(8)
            ]


def test_sync_saver_replaces_connections_the_server_closed(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    name = f"lgd-test-{uuid.uuid4().hex[:8]}"
    with RedisSaver.from_conn_string(f"{url}?client_name={name}", prefix=prefix) as saver:
        saver.setup()
        base = f"t-{uuid.uuid4()}"
        for round_ in range(3):
            for i in range(3):
                cp = _cp(saver, f"{round_}-{i}", 1000)
                saver.put(
                    {"configurable": {"thread_id": f"{base}-{i}", "checkpoint_ns": ""}},
                    cp,
                    {"i": i},
                    cp["channel_versions"],
                )
            assert _kill_named(raw, name) >= 1
            for i in range(3):
                tup = saver.get_tuple({"configurable": {"thread_id": f"{base}-{i}"}})
                assert tup is not None
                assert tup.checkpoint["channel_values"]["tag"] == f"{round_}-{i}"


async def test_a_server_that_stops_answering_fails_the_call_then_recovers(
    own_redis: OwnRedis,
) -> None:
    # replies later than the client's socket_timeout: the shared connection
    # is dropped and the calls fail (after the saver's retries), not hang
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4()}", "checkpoint_ns": ""}}
    async with AsyncRedisSaver.from_conn_string(
        f"{own_redis.url}?socket_timeout=0.2", prefix="p"
    ) as saver:
        await saver.setup()
        cp = _cp(saver, "x", 100)
        config = await saver.aput(config, cp, {"i": 1}, cp["channel_versions"])
        pauser = redis.Redis.from_url(own_redis.url)
        pauser.execute_command("CLIENT", "PAUSE", 4000, "ALL")
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(StorageUnavailableError):
            await saver.aget_tuple(config)
        assert loop.time() - t0 < 3.5
        pauser.execute_command("CLIENT", "UNPAUSE")
        pauser.close()
        tup = await saver.aget_tuple(config)
        assert tup is not None and tup.metadata["i"] == 1


async def test_an_empty_batch_answers_at_once(redis_prefix: tuple[str, str]) -> None:
    # a core step may have nothing to send (an upgrade batch with nothing to
    # rewrite): it waited for a reply that never comes until the socket timeout
    url, prefix = redis_prefix
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()
        assert await asyncio.wait_for(saver._runner.execute([]), timeout=1) == []
    with RedisSaver.from_conn_string(url, prefix=prefix) as sync_saver:
        sync_saver.setup()
        assert sync_saver._runner.execute([]) == []


async def test_a_call_on_a_connection_that_died_fails_at_once(
    redis_prefix: tuple[str, str],
) -> None:
    # a caller that got the shared connection just before it died must not wait forever
    # (the watchdog stops watching a dead connection): its call fails and the shell retries
    url, prefix = redis_prefix
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()
        lane = saver._runner.lane
        await lane.execute([("GET", f"{prefix}:x")])
        mux = lane._mux
        mux.kill()
        await asyncio.wait_for(mux.task, timeout=5)  # its reader has failed every waiting call
        with pytest.raises(redis.ConnectionError):
            await asyncio.wait_for(mux.send(b"*1\r\n$4\r\nPING\r\n", 1), timeout=1)
        assert await saver._runner.execute([("GET", f"{prefix}:x")]) == [None]
