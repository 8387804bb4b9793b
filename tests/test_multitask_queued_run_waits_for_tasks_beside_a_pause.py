"""A queued run waits for the task still running beside the one that paused.

The graph runs ``a`` and ``b`` in parallel: ``a`` pauses at once, ``b`` works
for a while longer. The pause is stored while ``b`` still runs, and a second
run (another saver, so another lease owner) that resumes the thread as soon as
it sees the pause must wait until the first run has returned: it then resumes
from a checkpoint that holds ``b``'s result, so ``b`` runs exactly once and
the second run's ``a`` starts only after ``b`` ended.
"""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from tests._backends import BACKENDS, area_fixture
from tests._multitask_support import async_saver, sync_saver

CFG: dict[str, Any] = {"configurable": {"thread_id": "t"}}
B_SECONDS = 0.8


class Fork(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def fork_graph(saver: Any, events: list[tuple[str, float]], seen: threading.Event) -> Any:
    """a pauses; b, beside it, runs until B_SECONDS after the test has ``seen`` the pause."""

    def a(state: Fork) -> dict[str, Any]:
        events.append(("a", time.monotonic()))
        return {"log": [f"a:{interrupt('approve?')}"]}

    def b(state: Fork) -> dict[str, Any]:
        events.append(("b started", time.monotonic()))
        seen.wait(30)
        time.sleep(B_SECONDS)
        events.append(("b ended", time.monotonic()))
        return {"log": ["b"]}

    builder: StateGraph[Any] = StateGraph(Fork)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", END)
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def _paused(tup: Any) -> bool:
    return tup is not None and any(w[1] == "__interrupt__" for w in tup.pending_writes or ())


def _check(events: list[tuple[str, float]], values: dict[str, Any]) -> None:
    names = [e[0] for e in events]
    assert names.count("b started") == 1, names  # b ran once, in the first run
    b_ended = next(t for n, t in events if n == "b ended")
    second_a = [t for n, t in events if n == "a"][1]
    assert second_a >= b_ended, "the queued run started while b was still running"
    assert sorted(values["log"]) == ["a:yes", "b"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_sync_queued_run_waits_for_the_running_sibling(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    events: list[tuple[str, float]] = []
    with (
        sync_saver(backend, url, area, multitask="enqueue") as first,
        sync_saver(backend, url, area, multitask="enqueue") as second,
    ):
        seen = threading.Event()
        run = threading.Thread(target=fork_graph(first, events, seen).invoke, args=({}, CFG))
        run.start()
        deadline = time.monotonic() + 30
        while not _paused(second.get_tuple(CFG)):
            assert time.monotonic() < deadline, "the first run never paused"
            time.sleep(0.005)
        seen.set()  # b goes on for B_SECONDS more
        graph = fork_graph(second, events, seen)
        graph.invoke(Command(resume="yes"), CFG)
        run.join(30)
        _check(events, graph.get_state(CFG).values)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_async_queued_run_waits_for_the_running_sibling(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    events: list[tuple[str, float]] = []
    async with (
        async_saver(backend, url, area, multitask="enqueue") as first,
        async_saver(backend, url, area, multitask="enqueue") as second,
    ):
        await first.setup()
        seen = threading.Event()
        run = asyncio.create_task(fork_graph(first, events, seen).ainvoke({}, CFG))
        deadline = time.monotonic() + 30
        while not _paused(await second.aget_tuple(CFG)):
            assert time.monotonic() < deadline, "the first run never paused"
            await asyncio.sleep(0.005)
        seen.set()  # b goes on for B_SECONDS more
        graph = fork_graph(second, events, seen)
        await graph.ainvoke(Command(resume="yes"), CFG)
        await run
        _check(events, (await graph.aget_state(CFG)).values)
        first.arun_leases.close()
        second.arun_leases.close()
