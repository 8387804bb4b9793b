"""Activities under LangGraph's default durability="async" where the wait must not stall.

Each case runs a graph whose checkpoints are stored quickly by a real saver: an
activity calls its side effect once, well inside its ``stored_timeout``.
"""

from __future__ import annotations

import asyncio
import gc
import operator
import os
import threading
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from langgraph_durable.checkpointers import PutFailed
from langgraph_durable.checkpointers._puts_in_flight import PutsInFlight
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import CheckpointNotStored, _activity_wait, activity
from langgraph_durable.interrupts._pregel import current_task

pytestmark = pytest.mark.timeout(60)
BOUND_S = 3.0


class State(TypedDict, total=False):
    x: int
    out: Annotated[list[str], operator.add]


def _recording() -> tuple[list[str], Any]:
    """An activity whose side effect records its key; the keys so far and the activity."""
    calls: list[str] = []

    def charge(i: int, *, idempotency_key: str) -> str:
        calls.append(idempotency_key)
        return f"ch_{i}"

    return calls, activity(charge, name="charge", stored_timeout=BOUND_S)


def _thread() -> Any:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


@pytest.fixture(params=["langgraph-memory", "ours-postgres"])
def saver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A saver of LangGraph's (read to learn what is stored) or ours (tells in process)."""
    if request.param == "langgraph-memory":
        yield InMemorySaver()
        return
    url, schema = request.getfixturevalue("pg_schema")
    with PostgresSaver.from_conn_string(url, schema=schema) as ours:
        ours.setup()
        yield ours


def test_an_activity_in_a_functional_task_does_not_wait_for_its_callers_namespace(
    saver: Any,
) -> None:
    """A ``@task``'s checkpoint map also names its caller's namespace, under the root's id."""
    calls, charge = _recording()

    @task
    def pay(i: int) -> str:
        return str(charge(i))

    @entrypoint(checkpointer=saver)
    def order(x: int) -> str:
        return pay(x).result()

    started = time.monotonic()
    assert order.invoke(1, _thread()) == "ch_1"
    assert len(calls) == 1
    assert time.monotonic() - started < BOUND_S / 2


def test_an_activity_in_a_task_called_from_a_graph_node_runs(saver: Any) -> None:
    calls, charge = _recording()

    @task
    def pay(i: int) -> str:
        return str(charge(i))

    builder = StateGraph(State)
    builder.add_node("node", lambda s: {"out": [pay(1).result()]})
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    started = time.monotonic()
    assert builder.compile(checkpointer=saver).invoke({"x": 0}, _thread())["out"] == ["ch_1"]
    assert len(calls) == 1
    assert time.monotonic() - started < BOUND_S / 2


def test_failed_puts_do_not_keep_their_checkpoints_alive(redis_prefix: tuple[str, str]) -> None:
    """What a failed put raised is kept as text: its traceback holds the whole checkpoint."""

    class Big(TypedDict, total=False):
        blob: str
        bad: Any

    builder = StateGraph(Big)
    # a 200 kB state and a value the serde refuses: the put of this step raises
    builder.add_node(
        "a", lambda s: {"blob": "x" * 200_000 + uuid.uuid4().hex, "bad": threading.Lock()}
    )
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    url, prefix = redis_prefix
    runs = 40
    with RedisSaver.from_conn_string(url, prefix=prefix) as rsaver:
        rsaver.setup()
        graph = builder.compile(checkpointer=rsaver)
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            failed = 0
            for _ in range(runs):
                try:
                    graph.invoke({"blob": ""}, _thread())
                except Exception:  # the put's UnstorableValueError
                    failed += 1
            gc.collect()
            retained = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert failed == runs
    assert retained < 5_000_000, f"{retained / 1e6:.1f} MB kept after {runs} failed puts"


def test_a_failed_put_is_told_by_its_text_and_the_oldest_failures_are_forgotten() -> None:
    puts = PutsInFlight()
    puts.settle(("t-0", "", "0001"), ValueError("x" * 10_000))
    with pytest.raises(PutFailed) as failed:
        puts.wait_put("t-0", "", "0002", 0)  # LangGraph never sends a put after a failed one
    assert failed.value.reason.startswith("ValueError: xxx")
    assert len(failed.value.reason) <= 500
    assert failed.value.__cause__ is None
    for n in range(1, 5000):
        puts.settle((f"t-{n}", "", "0001"), ValueError("refused"))
    assert puts.wait_put("t-0", "", "0002", 0) is False
    with pytest.raises(PutFailed, match="refused"):
        puts.wait_put("t-4999", "", "0002", 0)


def _subgraph_order(charge: Any, *, checkpointer: Any, how: str) -> StateGraph[State]:
    """A graph whose node ``order`` runs a subgraph (as the node, or invoked in it) that pays."""
    inner = StateGraph(State)
    inner.add_node("prep", lambda s: {"x": 1})
    inner.add_node("pay", lambda s: {"out": [charge(s["x"])]})
    inner.add_edge(START, "prep")
    inner.add_edge("prep", "pay")
    inner.add_edge("pay", END)
    sub = inner.compile(checkpointer=checkpointer)
    builder = StateGraph(State)
    builder.add_node("order", sub if how == "as a node" else lambda s: sub.invoke(s))
    builder.add_edge(START, "order")
    builder.add_edge("order", END)
    return builder


@pytest.mark.parametrize("how", ["as a node", "invoked in a node"])
def test_an_activity_in_a_subgraph_without_a_checkpointer_runs(saver: Any, how: str) -> None:
    """``compile(checkpointer=False)``: the subgraph stores no checkpoint of its own,
    yet its tasks' checkpoint map names one."""
    calls, charge = _recording()
    graph = _subgraph_order(charge, checkpointer=False, how=how).compile(checkpointer=saver)
    started = time.monotonic()
    assert graph.invoke({"x": 0}, _thread())["out"] == ["ch_1"]
    assert len(calls) == 1
    assert time.monotonic() - started < BOUND_S / 2


def test_an_activity_in_a_checkpointed_subgraph_waits_for_its_levels_checkpoint(
    saver: Any,
) -> None:
    """The subgraph's own checkpoint is waited for: it is stored when the side effect runs."""
    seen: list[Any] = []

    def charge(i: int, *, idempotency_key: str) -> str:
        ctx = current_task()
        assert ctx is not None and ctx.thread_id is not None
        assert ctx.checkpoints[0][0] == ""
        assert len(ctx.checkpoints) == 2
        seen.extend(
            saver.get_tuple(
                {
                    "configurable": {
                        "thread_id": ctx.thread_id,
                        "checkpoint_ns": ns,
                        "checkpoint_id": cid,
                    }
                }
            )
            for ns, cid in ctx.checkpoints
        )
        return f"ch_{i}"

    pay = activity(charge, name="charge", stored_timeout=BOUND_S)
    graph = _subgraph_order(pay, checkpointer=None, how="as a node").compile(checkpointer=saver)
    assert graph.invoke({"x": 0}, _thread())["out"] == ["ch_1"]
    assert len(seen) == 2 and all(found is not None for found in seen)


def _fan_out(work: Any, branches: int) -> StateGraph[State]:
    builder = StateGraph(State)
    builder.add_node("prep", lambda s: {"x": 1})
    builder.add_node("work", work)
    builder.add_edge(START, "prep")
    builder.add_conditional_edges(
        "prep", lambda s: [Send("work", {"x": i}) for i in range(branches)]
    )
    builder.add_edge("work", END)
    return builder


async def _run_on_langgraphs_async_postgres(
    pg_database: str, builder: StateGraph[State], took: list[float] | None = None
) -> Any:
    """The graph's run on LangGraph's async Postgres saver; ``took`` gets the run's seconds."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(pg_database) as official:
        await official.setup()
        started = time.monotonic()
        out = await builder.compile(checkpointer=official).ainvoke({"x": 0}, _thread())
        if took is not None:
            took.append(time.monotonic() - started)
        return out


def test_sync_nodes_filling_the_loops_executor_are_refused_with_what_happened(
    pg_database: str,
) -> None:
    """LangGraph's async Postgres saver prepares its puts in the loop's default executor
    (``asyncio.to_thread``), where an async graph runs its sync nodes: one more waiting
    branch than that executor has workers leaves the put no thread until the bound."""
    calls, charge = _recording()
    branches = min(32, (os.cpu_count() or 1) + 4) + 1
    graph = _fan_out(lambda s: {"out": [charge(s["x"])]}, branches)
    with pytest.raises(CheckpointNotStored) as refused:
        asyncio.run(_run_on_langgraphs_async_postgres(pg_database, graph))
    assert "sync node waited in the event loop's default executor" in refused.value.reason
    assert "AsyncPostgresSaver" in refused.value.reason
    assert 'use an async node, or durability="sync"' in refused.value.reason
    assert len(calls) < branches


def test_async_nodes_of_as_many_branches_wait_without_a_worker(pg_database: str) -> None:
    calls: list[str] = []

    async def charge(i: int, *, idempotency_key: str) -> str:
        calls.append(idempotency_key)
        return f"ch_{i}"

    pay = activity(charge, name="charge", stored_timeout=BOUND_S)

    async def work(s: State) -> State:
        return {"out": [await pay(s["x"])]}

    branches = min(32, (os.cpu_count() or 1) + 4) + 1
    took: list[float] = []  # the run's own time (the saver's setup is not the activity's wait)
    done = asyncio.run(
        _run_on_langgraphs_async_postgres(pg_database, _fan_out(work, branches), took)
    )
    assert sorted(done["out"]) == sorted(f"ch_{i}" for i in range(branches))
    assert len(set(calls)) == branches
    assert took[0] < BOUND_S / 2


def test_reads_that_hang_on_one_saver_do_not_hold_up_reads_of_another(pg_database: str) -> None:
    """A read past its bound keeps its thread: each saver is read on threads of its own."""
    from langgraph.checkpoint.postgres import PostgresSaver as LangGraphPostgresSaver

    memory = InMemorySaver()
    done = _subgraph_order(lambda i: f"ch_{i}", checkpointer=None, how="as a node")
    thread = _thread()
    done.compile(checkpointer=memory).invoke({"x": 0}, thread)
    with LangGraphPostgresSaver.from_conn_string(pg_database) as hanging:
        hanging.setup()
        with psycopg.connect(pg_database) as lock:
            lock.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
            for _ in range(_activity_wait._READERS_PER_SAVER + 1):
                assert _activity_wait._read_within(hanging, thread, 0.05) is None
            started = time.monotonic()
            found = _activity_wait._read_within(memory, thread, BOUND_S)
            elapsed = time.monotonic() - started
            lock.rollback()
    assert found is not None
    assert elapsed < BOUND_S / 2
