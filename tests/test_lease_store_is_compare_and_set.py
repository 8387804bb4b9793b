"""The lease store of both savers: every change is a compare-and-set; orphans are indexed."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver
from langgraph_durable.interrupts import RecoveryWorker
from tests._backends import BACKENDS, POSTGRES
from tests._lease_support import (
    builder,
    expected_final,
    leasing_saver,
    settings,
    spawn,
    where_of,
)
from tests._parts import part_of

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
TTL = timedelta(seconds=30)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lease_operations_are_compare_and_set(backend: str, request: pytest.FixtureRequest) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(30, 10)) as s:
        leases = part_of(s, "leases")
        a = leases.acquire_lease(thread_id="t", owner="A", now=T0, ttl=TTL)
        assert (a.state, a.owner, a.token) == ("running", "A", 1)
        assert leases.acquire_lease(thread_id="t", owner="B", now=T0, ttl=TTL) is None
        assert leases.acquire_lease(thread_id="t", owner="A", now=T0, ttl=TTL).token == 1
        assert (
            leases.renew_leases(
                owner="A", thread_ids=["t"], now=T0, ttl=TTL, progress={"t": (T0, "half way")}
            )
            == []
        )
        assert leases.get_lease(thread_id="t").progress == "half way"
        assert leases.renew_leases(owner="B", thread_ids=["t"], now=T0, ttl=TTL) == ["t"]
        assert leases.release_lease(thread_id="t", owner="B", now=T0, reason="finished") is False
        # a refused release leaves the holder's lease indexed (found once it expires)
        assert leases.lease_counts(now=T0 + TTL + timedelta(seconds=1)).orphaned == 1
        leases.record_lease_error(thread_id="t", owner="A", error="ValueError: x")
        assert leases.release_lease(thread_id="t", owner="A", now=T0, reason="finished") is True
        released = leases.get_lease(thread_id="t")
        assert (released.state, released.reason, released.last_error) == (
            "released",
            "finished",
            "ValueError: x",
        )
        assert leases.acquire_lease(thread_id="t", owner="B", now=T0, ttl=TTL).token == 2

        # an expired running lease is an orphan: found through the index, claimed once
        later = T0 + timedelta(minutes=5)
        leases.acquire_lease(thread_id="live", owner="C", now=later, ttl=TTL)
        leases.acquire_lease(thread_id="done", owner="C", now=T0, ttl=TTL)
        leases.release_lease(thread_id="done", owner="C", now=T0, reason="finished")
        found = leases.find_expired_leases(now=later, limit=10)
        assert [r.thread_id for r in found] == ["t"]
        assert leases.lease_counts(now=later) == type(leases.lease_counts(now=later))(1, 1, 0)
        assert (
            leases.claim_expired_lease(thread_id="t", token=1, owner="W", now=later, ttl=TTL)
            is None
        )  # stale token
        wins: list[Any] = []
        barrier = threading.Barrier(8)

        def claim(i: int) -> None:
            barrier.wait()
            got = leases.claim_expired_lease(
                thread_id="t", token=2, owner=f"W{i}", now=later, ttl=TTL
            )
            if got is not None:
                wins.append(got)

        workers = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert len(wins) == 1
        assert (wins[0].token, wins[0].attempts, wins[0].recoveries) == (3, 1, 1)
        assert leases.find_expired_leases(now=later, limit=10) == []

        # parked only if still expired at the same token
        much_later = later + timedelta(minutes=5)
        assert leases.park_lease(thread_id="t", token=2, now=much_later, reason="x") is None
        parked = leases.park_lease(thread_id="t", token=3, now=much_later, reason="poison")
        assert (parked.state, parked.reason) == ("parked", "poison")
        assert [r.thread_id for r in leases.list_leases(state="parked", limit=10)] == ["t"]
        assert leases.lease_counts(now=much_later).parked == 1
        assert leases.find_expired_leases(now=much_later, limit=10)[0].thread_id == "live"
        assert leases.unpark_lease(thread_id="t") is True
        assert (
            leases.get_lease(thread_id="t").state,
            leases.get_lease(thread_id="t").attempts,
        ) == (
            "released",
            0,
        )

        s.delete_thread("t")
        assert leases.get_lease(thread_id="t") is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_async_saver_leases_its_runs_and_recovers_orphans(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    lease = settings(1, 0.25)
    # an orphan left by a SIGKILLed sync process
    with leasing_saver(backend, where, lease) as sync_saver:
        graph = builder().compile(checkpointer=sync_saver)
        child = spawn(
            "run",
            {"backend": backend, "where": where, "lease": 1, "beat": 0.25, "threads": ["orphan"]},
            LEASE_TEST_HANG_AT="4",
        )
        deadline = time.monotonic() + 60
        while graph.get_state({"configurable": {"thread_id": "orphan"}}).values.get("n", 0) < 3:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()

    if backend == POSTGRES:
        cm: Any = AsyncPostgresSaver.from_conn_string(
            where["url"], schema=where["schema"], leases=lease
        )
    else:
        cm = AsyncRedisSaver.from_conn_string(where["url"], prefix=where["prefix"], leases=lease)
    async with cm as saver:
        await saver.setup()
        agraph = builder().compile(checkpointer=saver)
        # a run of its own: leased while running, released when finished
        out = await agraph.ainvoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "a"}})
        assert out == expected_final()
        assert (await part_of(saver, "leases").aget_lease(thread_id="a")).reason == "finished"

        worker = RecoveryWorker(agraph)
        recovered: list[str] = []
        deadline = time.monotonic() + 30
        while not recovered:
            assert time.monotonic() < deadline
            recovered += (await worker.arun_once()).recovered
            await asyncio.sleep(0.1)
        assert recovered == ["orphan"]
        state = await agraph.aget_state({"configurable": {"thread_id": "orphan"}})
        assert state.values == expected_final()
        assert state.metadata["durable_recoveries"] == 1
        record = await part_of(saver, "leases").aget_lease(thread_id="orphan")
        assert (record.state, record.recoveries) == ("released", 1)
        saver.arun_leases.close()


def test_redis_released_records_expire_with_the_thread(
    redis_prefix: tuple[str, str],
) -> None:
    import redis as redis_py

    from langgraph_durable.checkpointers.redis import RedisSaver
    from langgraph_durable.checkpointers.redis._lease_commands import RedisLeaseKeys

    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix, ttl=60) as saver:
        saver.setup()
        client = redis_py.Redis.from_url(url)
        key = RedisLeaseKeys(prefix).record("t")
        part_of(saver, "leases").acquire_lease(thread_id="t", owner="A", now=T0, ttl=TTL)
        assert client.pttl(key) == -1, "a running record never expires"
        part_of(saver, "leases").release_lease(thread_id="t", owner="A", now=T0, reason="finished")
        assert 0 < client.pttl(key) <= 120_000
        part_of(saver, "leases").acquire_lease(thread_id="t", owner="B", now=T0, ttl=TTL)
        assert client.pttl(key) == -1
        client.close()
