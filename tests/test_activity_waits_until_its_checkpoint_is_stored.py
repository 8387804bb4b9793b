"""Under durability="async", an activity runs its side effect once its checkpoint is stored.

The checkpoint puts are slowed in a real way (tests/_slow_puts.py: a table lock
on PostgreSQL, ``CLIENT PAUSE WRITE`` on a Redis of the test's own) while the
step that calls the activity runs. The side effect records what a second saver
on the same storage reads of every checkpoint the task's key depends on (the
step's, and in a subgraph the parent's too), and when it ran.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import psycopg
import pytest
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_durable.checkpointers import PutFailed
from langgraph_durable.interrupts import CheckpointNotStored, InvalidInput, _activity_wait, activity
from langgraph_durable.interrupts._pregel import current_task
from tests._slow_puts import (
    ASYNC_KINDS,
    SYNC_KINDS,
    PgCheckpointsLock,
    SlowPuts,
    open_async,
    open_sync,
    own_redis_url_fixture,  # noqa: F401 - fixture
    storage,
)

pytestmark = pytest.mark.timeout(120)
SLOW_S = 0.8


class State(TypedDict, total=False):
    amount: int
    charge_id: str


def _recording_charge(**options: Any) -> tuple[list[str], Any]:
    """An activity whose side effect records its key; the keys so far and the activity."""
    calls: list[str] = []

    def charge(amount: int, *, idempotency_key: str) -> str:
        calls.append(idempotency_key)
        return "ch_" + idempotency_key[-8:]

    return calls, activity(charge, name="charge", **options)


def _config(thread: str, ns: str, cid: str) -> Any:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}}


def _graph(pay: Any, prep: Any, *, nested: bool) -> StateGraph[Any]:
    """prep -> pay; nested: both in a subgraph, the graph's one node."""
    inner = StateGraph(State)
    inner.add_node("prep", prep)
    inner.add_node("pay", pay)
    inner.add_edge(START, "prep")
    inner.add_edge("prep", "pay")
    inner.add_edge("pay", END)
    if not nested:
        return inner
    builder = StateGraph(State)
    builder.add_node("order", inner.compile())
    builder.add_edge(START, "order")
    builder.add_edge("order", END)
    return builder


class Probe:
    """The side effect's view: which checkpoints a second saver reads, and when it ran."""

    def __init__(self, reader: Any, thread: str) -> None:
        self.reader, self.thread = reader, thread
        self.seen: list[tuple[float, list[tuple[str, bool]]]] = []
        self.go = threading.Event()

    def look(self) -> None:
        # read from the task's config itself: the checkpoint of each graph up to this task's
        checkpoint_map = get_config()["configurable"]["checkpoint_map"]
        stored = [
            (ns, self.reader.get_tuple(_config(self.thread, ns, cid)) is not None)
            for ns, cid in checkpoint_map.items()
        ]
        self.seen.append((time.monotonic(), stored))

    def check(self, slow: SlowPuts, *, nested: bool) -> None:
        (when, stored) = self.seen[0]
        assert len(self.seen) == 1
        assert [ns == "" for ns, _ in stored] == ([True, False] if nested else [True])
        assert all(ok for _, ok in stored), stored
        assert when >= slow.until - 0.05, (when, slow.until)


@pytest.mark.parametrize("nested", [False, True], ids=["graph", "subgraph"])
@pytest.mark.parametrize("kind", SYNC_KINDS)
def test_sync_activity_waits_for_its_checkpoint(
    kind: str, nested: bool, request: pytest.FixtureRequest, own_redis_url: str
) -> None:
    url, area = storage(kind, request, own_redis_url)
    with open_sync(kind, url, area) as saver, open_sync(kind, url, area) as reader:
        probe = Probe(reader, f"t-{kind}")

        def charge(amount: int, *, idempotency_key: str) -> dict[str, str]:
            probe.look()
            return {"id": "ch_" + idempotency_key[-8:]}

        charged = activity(charge, name="charge")

        def prep(state: State) -> State:
            probe.go.wait(30)
            return {}

        def pay(state: State) -> State:
            return {"charge_id": charged(state["amount"])["id"]}

        graph = _graph(pay, prep, nested=nested).compile(checkpointer=saver)
        slow = SlowPuts(kind, url, area, SLOW_S)
        config: Any = {"configurable": {"thread_id": probe.thread}}
        runner = threading.Thread(target=graph.invoke, args=({"amount": 5}, config))
        runner.start()
        time.sleep(0.2)  # the run read its thread and waits in prep
        slow.start()
        probe.go.set()
        runner.join(60)
        probe.check(slow, nested=nested)
        assert graph.get_state(config).values["charge_id"].startswith("ch_")


@pytest.mark.parametrize("nested", [False, True], ids=["graph", "subgraph"])
@pytest.mark.parametrize("kind", ASYNC_KINDS)
def test_async_activity_waits_for_its_checkpoint(
    kind: str, nested: bool, request: pytest.FixtureRequest, own_redis_url: str
) -> None:
    url, area = storage(kind, request, own_redis_url)
    sync_kind = kind.replace("async", "sync")

    async def main() -> None:
        async with open_async(kind, url, area) as saver:
            with open_sync(sync_kind, url, area) as reader:
                probe = Probe(reader, f"t-{kind}")

                async def charge(amount: int, *, idempotency_key: str) -> dict[str, str]:
                    await asyncio.to_thread(probe.look)
                    return {"id": "ch_" + idempotency_key[-8:]}

                charged = activity(charge, name="charge")

                async def prep(state: State) -> State:
                    await asyncio.to_thread(probe.go.wait, 30)
                    return {}

                async def pay(state: State) -> State:
                    return {"charge_id": (await charged(state["amount"]))["id"]}

                graph = _graph(pay, prep, nested=nested).compile(checkpointer=saver)
                slow = SlowPuts(kind, url, area, SLOW_S)
                config: Any = {"configurable": {"thread_id": probe.thread}}
                run = asyncio.create_task(graph.ainvoke({"amount": 5}, config))
                await asyncio.sleep(0.2)
                await asyncio.to_thread(slow.start)
                probe.go.set()
                await run
                probe.check(slow, nested=nested)

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["postgres-sync", "redis-sync"])
def test_a_checkpoint_not_stored_in_time_refuses_the_call(
    kind: str, request: pytest.FixtureRequest, own_redis_url: str
) -> None:
    url, area = storage(kind, request, own_redis_url)
    calls, charged = _recording_charge(stored_timeout=0.3)
    go = threading.Event()

    def prep(state: State) -> State:
        go.wait(30)
        return {}

    def pay(state: State) -> State:
        return {"charge_id": charged(state["amount"])}

    with open_sync(kind, url, area) as saver:
        graph = _graph(pay, prep, nested=False).compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "t-late"}}
        outcome: list[BaseException] = []

        def run() -> None:
            try:
                graph.invoke({"amount": 5}, config)
            except BaseException as exc:
                outcome.append(exc)

        runner = threading.Thread(target=run)
        runner.start()
        time.sleep(0.2)
        SlowPuts(kind, url, area, 1.5).start()
        go.set()
        runner.join(60)

        (err,) = outcome
        assert isinstance(err, CheckpointNotStored), repr(err)
        assert calls == []
        assert (err.thread_id, err.checkpoint_ns, err.activity) == ("t-late", "", "charge")
        assert "not stored after 0.3 s" in err.reason
        for part in (err.checkpoint_id, "t-late", "charge"):
            assert part in str(err)
        # nothing was recorded: the step, run again from that checkpoint, calls with its key
        assert saver.get_tuple(_config("t-late", "", err.checkpoint_id)) is not None
        final = graph.invoke(None, config)
        assert len(calls) == 1
        assert final["charge_id"] == "ch_" + calls[0][-8:]


def test_a_failed_put_wakes_the_waiting_activity_with_its_failure(
    request: pytest.FixtureRequest,
) -> None:
    url, area = storage("postgres-sync", request, "")
    calls, charged = _recording_charge(stored_timeout=60)

    def pay(state: State) -> State:
        return {"charge_id": charged(state["amount"])}

    with open_sync("postgres-sync", url, area) as saver:
        builder = StateGraph(State)
        builder.add_node("pay", pay)
        builder.add_edge(START, "pay")
        graph = builder.compile(checkpointer=saver)
        lock = PgCheckpointsLock(url, area)
        lock.take()

        def cancel_the_put() -> None:
            while not lock.blocked_pids():
                time.sleep(0.02)
            with psycopg.connect(url, autocommit=True) as conn:
                for pid in lock.blocked_pids():
                    conn.execute("SELECT pg_cancel_backend(%s)", (pid,))

        canceller = threading.Thread(target=cancel_the_put)
        canceller.start()
        started = time.monotonic()
        try:
            with pytest.raises(CheckpointNotStored) as refused:
                graph.invoke({"amount": 5}, {"configurable": {"thread_id": "t-fail"}})
        finally:
            lock.release()
            canceller.join(10)
        # woken by the failure (the put of the run's first checkpoint, which the
        # step's checkpoint would have followed), not by the 60 s bound
        assert time.monotonic() - started < 20
        assert calls == []
        assert "canceling statement due to user request" in refused.value.reason
        assert isinstance(refused.value.__cause__, PutFailed)


@pytest.mark.parametrize("durability", [None, "async", "sync", "exit"])
def test_the_task_context_knows_the_runs_durability(
    durability: str | None, request: pytest.FixtureRequest
) -> None:
    url, area = storage("postgres-sync", request, "")
    seen: list[str] = []

    def pay(state: State) -> State:
        ctx = current_task()
        assert ctx is not None
        seen.append(ctx.durability)
        return {}

    with open_sync("postgres-sync", url, area) as saver:
        graph = _graph(pay, lambda state: {}, nested=True).compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": f"t-{durability}"}}
        graph.invoke({"amount": 1}, config, durability=durability)  # type: ignore[arg-type]
    assert seen == [durability or "async"]  # LangGraph's default, in a subgraph too


def test_under_exit_durability_nothing_is_waited_for_and_a_warning_says_so_once(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    url, area = storage("postgres-sync", request, "")
    calls, charged = _recording_charge()

    def pay(state: State) -> State:
        return {"charge_id": charged(state["amount"]) + "+" + charged(state["amount"])}

    monkey = pytest.MonkeyPatch()
    monkey.setattr(_activity_wait, "_warned_exit", False)
    caplog.set_level(logging.WARNING, logger="langgraph_durable.interrupts.activity")
    try:
        with open_sync("postgres-sync", url, area) as saver:
            graph = _graph(pay, lambda state: {}, nested=False).compile(checkpointer=saver)
            for thread in ("t-exit-1", "t-exit-2"):
                config: Any = {"configurable": {"thread_id": thread}}
                final = graph.invoke({"amount": 1}, config, durability="exit")
                assert final["charge_id"] == "+".join("ch_" + k[-8:] for k in calls[-2:])
    finally:
        monkey.undo()
    assert len(calls) == 4 and len(set(calls)) == 4
    warnings = [r for r in caplog.records if 'durability="exit"' in r.getMessage()]
    assert len(warnings) == 1
    assert "exactly-once" in warnings[0].getMessage()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "30", True, None])
def test_a_stored_timeout_that_is_not_a_positive_number_is_refused(bad: object) -> None:
    def charge(amount: int) -> int:
        return amount

    with pytest.raises(InvalidInput, match="stored_timeout") as refused:
        activity(charge, stored_timeout=bad)  # type: ignore[arg-type]
    assert refused.value.parameter == "stored_timeout"
    assert repr(bad) in str(refused.value)
    assert activity(charge, stored_timeout=2).stored_timeout == 2.0
