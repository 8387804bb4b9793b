"""A holder that is gone never blocks a run with a strategy; a live one is waited for.

The holder's lease is a real record: its owner id names an exited process on
this host (dead), a host elsewhere that last renewed 25 s into a 30 s lease
(silent: it missed its heartbeat), or one whose lease expired. A ``reject``
run takes any of them over at once and runs. A live holder that lets go while
an ``enqueue`` run waits lets that run in. And a real holder process,
SIGKILLed in the middle of its run, does not block the next run on this host:
it goes ahead at once instead of waiting out the 30 s lease.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph

from tests._backends import BACKENDS, area_fixture
from tests._lease_support import dead_holder_owner
from tests._multitask_support import Chat, async_saver, sync_saver
from tests._parts import part_of

TTL = timedelta(seconds=30)
T = "t"
CFG: dict[str, Any] = {"configurable": {"thread_id": T}}


def _holders() -> dict[str, tuple[str, timedelta]]:
    """Owner id and age of the last renewal of each gone holder."""
    return {
        "dead-pid": (dead_holder_owner(), timedelta(0)),
        "silent": ("elsewhere:7:run:silent", timedelta(seconds=25)),
        "expired": ("elsewhere:9:run:expired", timedelta(seconds=31)),
    }


def work_graph(saver: Any, calls: list[str], block: threading.Event | None = None) -> Any:
    def work(state: Chat) -> dict[str, Any]:
        calls.append("work")
        if block is not None:
            block.wait(60)
        return {"done": ["work"]}

    builder: StateGraph[Any] = StateGraph(Chat)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=saver)


def _where(backend: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    url, area = request.getfixturevalue(area_fixture(backend))
    return url, area


def _taken_over(record: Any, holder: str, token: int) -> None:
    assert record.owner != holder and record.token == token + 1, record
    assert (record.state, record.reason, record.recoveries) == ("released", "finished", 0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["dead-pid", "silent", "expired"])
def test_sync_reject_run_takes_over_a_gone_holder(
    backend: str, case: str, request: pytest.FixtureRequest
) -> None:
    holder, age = _holders()[case]
    url, area = _where(backend, request)
    with sync_saver(backend, url, area, multitask="reject") as saver:
        held = part_of(saver, "leases").acquire_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc) - age, ttl=TTL
        )
        calls: list[str] = []
        assert work_graph(saver, calls).invoke({}, CFG)["done"] == ["work"]
        assert calls == ["work"]
        _taken_over(part_of(saver, "leases").get_lease(thread_id=T), holder, held.token)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["dead-pid", "silent", "expired"])
async def test_async_reject_run_takes_over_a_gone_holder(
    backend: str, case: str, request: pytest.FixtureRequest
) -> None:
    holder, age = _holders()[case]
    url, area = _where(backend, request)
    async with async_saver(backend, url, area, multitask="reject") as saver:
        await saver.setup()
        held = await part_of(saver, "leases").aacquire_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc) - age, ttl=TTL
        )
        calls: list[str] = []
        assert (await work_graph(saver, calls).ainvoke({}, CFG))["done"] == ["work"]
        assert calls == ["work"]
        _taken_over(await part_of(saver, "leases").aget_lease(thread_id=T), holder, held.token)
        saver.arun_leases.close()


def _let_go_later(saver: Any, holder: str, after: float) -> threading.Thread:
    def release() -> None:
        time.sleep(after)
        part_of(saver, "leases").release_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc), reason="finished"
        )

    thread = threading.Thread(target=release)
    thread.start()
    return thread


@pytest.mark.parametrize("backend", BACKENDS)
def test_enqueue_run_starts_when_a_live_holder_lets_go(
    backend: str, request: pytest.FixtureRequest
) -> None:
    holder = "elsewhere:8:run:alive"
    url, area = _where(backend, request)
    with (
        sync_saver(backend, url, area, multitask="enqueue", multitask_timeout=30) as saver,
        sync_saver(backend, url, area) as other,
    ):
        held = part_of(saver, "leases").acquire_lease(
            thread_id=T, owner=holder, now=datetime.now(timezone.utc), ttl=TTL
        )
        calls: list[str] = []
        releaser = _let_go_later(other, holder, 0.5)
        started = time.monotonic()
        assert work_graph(saver, calls).invoke({}, CFG)["done"] == ["work"]
        waited = time.monotonic() - started
        releaser.join()
        assert waited >= 0.5 and calls == ["work"]
        record = part_of(saver, "leases").get_lease(thread_id=T)
        assert record.owner == saver.run_leases.owner and record.token == held.token + 1


def _killed_holder(backend: str, url: str, area: str, inside: Any) -> None:
    """Child: a run with a strategy that holds the thread until it is killed."""
    with sync_saver(backend, url, area, multitask="reject") as saver:
        block = threading.Event()

        class Signal(list[str]):
            def append(self, item: str) -> None:
                super().append(item)
                inside.set()

        # durability="sync": its input checkpoint is stored before the node runs
        work_graph(saver, Signal(), block).invoke({}, CFG, durability="sync")
    os._exit(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_holder_process_does_not_block_the_next_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = _where(backend, request)
    ctx = multiprocessing.get_context("fork")
    inside = ctx.Event()
    child = ctx.Process(target=_killed_holder, args=(backend, url, area, inside))
    child.start()
    try:
        assert inside.wait(60), "the holder never started its node"
        with sync_saver(backend, url, area, multitask="reject") as saver:
            record = part_of(saver, "leases").get_lease(thread_id=T)
            assert record.state == "running" and record.owner.split(":")[1] == str(child.pid)
            os.kill(child.pid, signal.SIGKILL)
            child.join(10)
            calls: list[str] = []
            started = time.monotonic()
            assert work_graph(saver, calls).invoke(None, CFG)["done"] == ["work"]
            assert time.monotonic() - started < TTL.total_seconds() / 3
            assert calls == ["work"]
            _taken_over(part_of(saver, "leases").get_lease(thread_id=T), record.owner, record.token)
    finally:
        if child.is_alive():
            child.kill()
