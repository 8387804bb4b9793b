"""`worker` recovers and reports on Postgres, Redis with ?prefix= and a Redis Cluster;
`unpark` (and `unpark_thread`) gives a parked thread another chance."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from click.testing import CliRunner

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver
from langgraph_durable.interrupts import NotParked, aunpark_thread, thread_state, unpark_thread
from langgraph_durable.interrupts.cli import main
from tests._backends import BACKENDS, POSTGRES, REDIS
from tests._lease_support import builder, expected_final, leasing_saver, settings
from tests._parts import part_of
from tests._servers import url_with

DEAD = "elsewhere:1:run:dead"


def _area(kind: str, request: pytest.FixtureRequest) -> tuple[str, dict[str, str], str]:
    """``(backend, where, url for the CLI)`` of an isolated storage area."""
    if kind == POSTGRES:
        url, schema = request.getfixturevalue("pg_schema")
        sep = "&" if "?" in url else "?"
        return POSTGRES, {"url": url, "schema": schema}, f"{url}{sep}schema={schema}"
    fixture = "cluster_prefix" if kind == "cluster" else "redis_prefix"
    url, prefix = request.getfixturevalue(fixture)
    return "redis", {"url": url, "prefix": prefix}, url_with(url, "prefix", prefix)


def _half_run(saver: Any, thread_id: str) -> None:
    """A thread stopped after step 2 of 20, whose (dead) run still holds an expired lease."""
    graph = builder().compile(checkpointer=saver, interrupt_after=["step"])
    config = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"n": 0, "trace": []}, config)
    graph.invoke(None, config)
    saver.run_leases.release(thread_id, "ended")  # the run ended at the breakpoint
    past = datetime.now(timezone.utc) - timedelta(minutes=5)
    record = part_of(saver, "leases").acquire_lease(
        thread_id=thread_id, owner=DEAD, now=past, ttl=timedelta(seconds=30)
    )
    assert record is not None and record.is_orphaned(datetime.now(timezone.utc))


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "kind", [POSTGRES, REDIS, pytest.param("cluster", marks=pytest.mark.cluster)]
)
def test_worker_recovers_parks_and_unpark_requeues(
    kind: str, request: pytest.FixtureRequest
) -> None:
    backend, where, url = _area(kind, request)
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        _half_run(saver, "orphan")
        _half_run(saver, "poison")
        poison = part_of(saver, "leases").get_lease(thread_id="poison")
        now = datetime.now(timezone.utc)
        assert (
            part_of(saver, "leases").park_lease(
                thread_id="poison",
                token=poison.token,
                now=now,
                reason="died 3 times after recovery",
            )
            is not None
        )
        assert thread_state(saver, "orphan").state == "orphaned"
        assert thread_state(saver, "poison").state == "parked"

        out = _cli("status", "--url", url)
        assert out.exit_code == 0, out.output
        assert "runs: 0 running, 1 orphaned, 1 parked" in out.output
        assert f"  orphan: orphaned (lease owner {DEAD}, " in out.output
        assert f"  poison: parked (lease owner {DEAD}, " in out.output

        out = _cli("worker", "--url", url, "--graph", "tests._lease_support:CLI_GRAPH", "--once")
        assert out.exit_code == 0, out.output
        assert "waiting=0 overdue=0 running=0 orphaned=0 recovered=1 parked=1" in out.output
        assert thread_state(saver, "orphan").state == "finished"
        assert thread_state(saver, "poison").state == "parked"

        out = _cli("unpark", "poison", "--url", url)
        assert out.exit_code == 0, out.output
        assert "unparked poison: the next worker pass resumes it" in out.output
        record = part_of(saver, "leases").get_lease(thread_id="poison")
        assert (record.state, record.attempts, record.reason) == ("running", 0, "unparked")
        assert thread_state(saver, "poison").state == "orphaned"
        with pytest.raises(NotParked, match="'poison' is not parked \\(it is orphaned\\)"):
            unpark_thread(saver, "poison")

        out = _cli("worker", "--url", url, "--graph", "tests._lease_support:CLI_GRAPH", "--once")
        assert out.exit_code == 0, out.output
        assert "running=0 orphaned=0 recovered=1 parked=0" in out.output
        graph = builder().compile(checkpointer=saver)
        for t in ("orphan", "poison"):
            assert graph.get_state({"configurable": {"thread_id": t}}).values == (expected_final())
        assert part_of(saver, "leases").get_lease(thread_id="poison").recoveries == 1

        out = _cli("unpark", "poison", "--url", url)
        assert out.exit_code != 0
        assert isinstance(out.exception, NotParked)
        assert "thread 'poison' is not parked (it is finished)" in str(out.exception)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unpark_thread_releases_a_parked_thread_that_had_ended(
    backend: str, request: pytest.FixtureRequest
) -> None:
    _, where, _ = _area(backend, request)
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        graph = builder().compile(checkpointer=saver)
        graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "done"}})
        past = datetime.now(timezone.utc) - timedelta(minutes=5)
        record = part_of(saver, "leases").acquire_lease(
            thread_id="done", owner=DEAD, now=past, ttl=timedelta(seconds=30)
        )
        part_of(saver, "leases").park_lease(
            thread_id="done", token=record.token, now=datetime.now(timezone.utc), reason="poison"
        )
        assert unpark_thread(saver, "done") == "released"
        record = part_of(saver, "leases").get_lease(thread_id="done")
        assert (record.state, record.reason) == ("released", "unparked")
        assert thread_state(saver, "done").state == "finished"
        with pytest.raises(NotParked, match="'nope' is not parked \\(it is unknown\\)"):
            unpark_thread(saver, "nope")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_aunpark_thread_on_async_savers(backend: str, request: pytest.FixtureRequest) -> None:
    _, where, _ = _area(backend, request)
    if backend == POSTGRES:
        cm: Any = AsyncPostgresSaver.from_conn_string(
            where["url"], schema=where["schema"], leases=settings(30, 10)
        )
    else:
        cm = AsyncRedisSaver.from_conn_string(
            where["url"], prefix=where["prefix"], leases=settings(30, 10)
        )
    async with cm as saver:
        await saver.setup()
        graph = builder().compile(checkpointer=saver, interrupt_after=["step"])
        await graph.ainvoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "p"}})
        await saver.arun_leases.release("p", "ended")
        past = datetime.now(timezone.utc) - timedelta(minutes=5)
        record = await part_of(saver, "leases").aacquire_lease(
            thread_id="p", owner=DEAD, now=past, ttl=timedelta(seconds=30)
        )
        await part_of(saver, "leases").apark_lease(
            thread_id="p", token=record.token, now=datetime.now(timezone.utc), reason="poison"
        )
        assert await aunpark_thread(saver, "p") == "queued"
        record = await part_of(saver, "leases").aget_lease(thread_id="p")
        assert (record.state, record.attempts, record.reason) == ("running", 0, "unparked")
        assert record.is_orphaned(datetime.now(timezone.utc))
        # the thread's state as thread_state names it, as unpark_thread does: its
        # lease record says running, but the lease expired (the next pass resumes it)
        with pytest.raises(NotParked, match="'p' is not parked \\(it is orphaned\\)"):
            await aunpark_thread(saver, "p")
        with pytest.raises(NotParked, match="'nope' is not parked \\(it is unknown\\)"):
            await aunpark_thread(saver, "nope")
        saver.arun_leases.close()
