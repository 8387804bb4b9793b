"""Every way LangGraph starts a run of a held thread is turned away before it runs or writes.

A live run on another host holds the thread's lease (its record is fresh, so
it is alive as far as this host can tell). With ``multitask="reject"`` each of
LangGraph's entry points (``invoke`` with input, with ``None`` and with
``Command(resume=...)``, ``stream``, a replay from an older checkpoint, their
async twins, and ``ainvoke`` on the sync Redis saver) raises ``ThreadBusy`` naming the
thread and the holder: no node ran and storage is exactly as before. Reading
the thread (``get_state``, its history) and ``update_state`` are not runs and
work as usual. The strategy is also chosen per run through the config, and a
bad value is refused, naming the key, with nothing written. Once the holder
is gone the thread resumes, subgraph included (a subgraph's reads never wait
for the run they belong to).
"""

from __future__ import annotations

import asyncio
import operator
import time
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers import InvalidConfigError, ThreadBusy
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from tests._backends import BACKENDS, POSTGRES, area_fixture
from tests._multitask_support import async_saver, sync_saver
from tests._parts import part_of

HOLDER = "elsewhere:8:run:alive"
TTL = timedelta(seconds=30)
T = "t"
CFG: dict[str, Any] = {"configurable": {"thread_id": T}}


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def chat(saver: Any, calls: list[str]) -> Any:
    """count -> ask (pauses) -> sub (a subgraph) -> end; ``calls`` records every node run."""

    def inner(state: State) -> dict[str, Any]:
        calls.append("inner")
        return {"log": ["inner"]}

    sub_builder: StateGraph[Any] = StateGraph(State)
    sub_builder.add_node("inner", inner)
    sub_builder.add_edge(START, "inner")
    sub_builder.add_edge("inner", END)

    def count(state: State) -> dict[str, Any]:
        calls.append("count")
        return {"log": ["count"]}

    def ask(state: State) -> dict[str, Any]:
        calls.append("ask")
        return {"log": [f"answer:{interrupt('go?')}"]}

    builder: StateGraph[Any] = StateGraph(State)
    builder.add_node("count", count)
    builder.add_node("ask", ask)
    builder.add_node("sub", sub_builder.compile())
    builder.add_edge(START, "count")
    builder.add_edge("count", "ask")
    builder.add_edge("ask", "sub")
    builder.add_edge("sub", END)
    return builder.compile(checkpointer=saver)


def _where(backend: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    url, area = request.getfixturevalue(area_fixture(backend))
    return url, area


def _stored(saver: Any) -> list[Any]:
    """Every checkpoint of the thread (all namespaces) with its pending writes."""
    return [
        (
            t.config["configurable"]["checkpoint_ns"],
            t.config["configurable"]["checkpoint_id"],
            sorted((w[0], w[1]) for w in t.pending_writes or ()),
        )
        for t in saver.list({"configurable": {"thread_id": T}})
    ]


def _hold(saver: Any) -> None:
    """The holder takes the thread once the paused run gave it back (at once, or nearly)."""
    deadline = time.monotonic() + 5
    while not part_of(saver, "leases").acquire_lease(
        thread_id=T, owner=HOLDER, now=datetime.now(timezone.utc), ttl=TTL
    ):
        assert time.monotonic() < deadline, "the paused run kept the thread's lease"
        time.sleep(0.01)


def _let_go(saver: Any) -> None:
    assert part_of(saver, "leases").release_lease(
        thread_id=T, owner=HOLDER, now=datetime.now(timezone.utc), reason="finished"
    )


def _busy(exc: pytest.ExceptionInfo[ThreadBusy], strategy: str = "reject") -> None:
    assert (exc.value.thread_id, exc.value.owner, exc.value.strategy) == (T, HOLDER, strategy)
    assert exc.value.since is not None
    assert T in str(exc.value) and HOLDER in str(exc.value)


def _sync_entry_points(graph: Any, first_id: str, backend: str) -> dict[str, Any]:
    replay = {"configurable": {"thread_id": T, "checkpoint_id": first_id}}
    starts = {
        "invoke input": lambda: graph.invoke({"log": ["again"]}, CFG),
        "invoke None": lambda: graph.invoke(None, CFG),
        "invoke resume": lambda: graph.invoke(Command(resume="yes"), CFG),
        "stream resume": lambda: list(graph.stream(Command(resume="yes"), CFG)),
        "stream updates": lambda: list(graph.stream(None, CFG, stream_mode="updates")),
        "replay": lambda: graph.invoke(None, replay),
    }
    if backend == "redis":  # the sync Redis saver also has the async methods
        starts["ainvoke resume"] = lambda: asyncio.run(graph.ainvoke(Command(resume="yes"), CFG))
    return starts


@pytest.mark.parametrize("backend", BACKENDS)
def test_sync_entry_points_of_a_held_thread_raise_thread_busy(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = _where(backend, request)
    with sync_saver(backend, url, area, multitask="reject") as saver:
        calls: list[str] = []
        graph = chat(saver, calls)
        graph.invoke({"log": []}, CFG)  # free: runs, pauses at ask
        assert calls == ["count", "ask"]
        first_id = list(saver.list(CFG))[-1].config["configurable"]["checkpoint_id"]
        _hold(saver)
        before, calls[:] = _stored(saver), []
        for name, start in _sync_entry_points(graph, first_id, backend).items():
            with pytest.raises(ThreadBusy) as exc:
                start()
            _busy(exc)
            assert calls == [], f"{name} ran {calls}"
            assert _stored(saver) == before, f"{name} wrote something"
        # reads and update_state are not runs
        assert graph.get_state(CFG).next == ("ask",)
        assert len(list(graph.get_state_history(CFG))) == len([s for s in before if s[0] == ""])
        graph.update_state(CFG, {"log": ["edited"]})
        assert graph.get_state(CFG).values["log"][-1] == "edited"
        assert part_of(saver, "leases").get_lease(thread_id=T).owner == HOLDER
        _let_go(saver)
        graph.invoke(Command(resume="yes"), CFG)
        assert calls == ["ask", "inner"]
        assert graph.get_state(CFG).values["log"][-2:] == ["answer:yes", "inner"]
        lease = part_of(saver, "leases").get_lease(thread_id=T)
        assert (lease.state, lease.reason) == ("released", "finished")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_async_entry_points_of_a_held_thread_raise_thread_busy(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = _where(backend, request)
    async with async_saver(backend, url, area, multitask="reject") as saver:
        await saver.setup()
        calls: list[str] = []
        graph = chat(saver, calls)
        await graph.ainvoke({"log": []}, CFG)
        tuples = [t async for t in saver.alist(CFG)]
        first_id = tuples[-1].config["configurable"]["checkpoint_id"]
        deadline = time.monotonic() + 5
        while not await part_of(saver, "leases").aacquire_lease(
            thread_id=T, owner=HOLDER, now=datetime.now(timezone.utc), ttl=TTL
        ):
            assert time.monotonic() < deadline, "the paused run kept the thread's lease"
            await asyncio.sleep(0.01)
        before = [
            (t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"])
            async for t in saver.alist({"configurable": {"thread_id": T}})
        ]
        calls[:] = []
        replay = {"configurable": {"thread_id": T, "checkpoint_id": first_id}}
        starts = {
            "ainvoke input": lambda: graph.ainvoke({"log": ["again"]}, CFG),
            "ainvoke None": lambda: graph.ainvoke(None, CFG),
            "ainvoke resume": lambda: graph.ainvoke(Command(resume="yes"), CFG),
            "astream resume": lambda: _drain(graph.astream(Command(resume="yes"), CFG)),
            "replay": lambda: graph.ainvoke(None, replay),
        }
        for name, start in starts.items():
            with pytest.raises(ThreadBusy) as exc:
                await start()
            _busy(exc)
            assert calls == [], f"{name} ran {calls}"
            after = [
                (
                    t.config["configurable"]["checkpoint_ns"],
                    t.config["configurable"]["checkpoint_id"],
                )
                async for t in saver.alist({"configurable": {"thread_id": T}})
            ]
            assert after == before, f"{name} wrote something"
        assert (await graph.aget_state(CFG)).next == ("ask",)
        await part_of(saver, "leases").arelease_lease(
            thread_id=T, owner=HOLDER, now=datetime.now(timezone.utc), reason="finished"
        )
        await graph.ainvoke(Command(resume="yes"), CFG)
        assert calls == ["ask", "inner"]
        saver.arun_leases.close()


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_strategy_is_chosen_per_run(backend: str, request: pytest.FixtureRequest) -> None:
    url, area = _where(backend, request)
    with sync_saver(backend, url, area) as saver:  # no strategy on the saver
        calls: list[str] = []
        graph = chat(saver, calls)
        graph.invoke({"log": []}, CFG)
        _hold(saver)
        before, calls[:] = _stored(saver), []
        reject = {"configurable": {"thread_id": T, "durable_multitask": "reject"}}
        with pytest.raises(ThreadBusy) as exc:
            graph.invoke(Command(resume="yes"), reject)
        _busy(exc)
        enqueue = {
            "configurable": {
                "thread_id": T,
                "durable_multitask": "enqueue",
                "durable_multitask_timeout": 0.3,
            }
        }
        with pytest.raises(ThreadBusy) as exc:
            graph.invoke(Command(resume="yes"), enqueue)
        _busy(exc, "enqueue")
        assert exc.value.waited >= 0.3
        assert calls == [] and _stored(saver) == before
    with sync_saver(backend, url, area, multitask="reject") as saver:
        graph = chat(saver, calls)
        # "none" for this run: it runs beside the holder, as without a strategy
        graph.invoke(
            Command(resume="yes"), {"configurable": {"thread_id": T, "durable_multitask": "none"}}
        )
        assert calls == ["ask", "inner"]
        assert part_of(saver, "leases").get_lease(thread_id=T).owner == HOLDER


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_strategies_are_refused_naming_the_option(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = _where(backend, request)
    saver_cls: Any = PostgresSaver if backend == POSTGRES else RedisSaver
    bad_options: list[tuple[dict[str, Any], str]] = [
        ({"multitask": "rollback"}, "multitask"),
        ({"multitask": "interrupt"}, "multitask"),
        ({"multitask": "sometimes"}, "multitask"),
        ({"multitask": "reject", "leases": False}, "multitask"),
        ({"multitask": "enqueue", "multitask_timeout": 0}, "multitask_timeout"),
        ({"multitask": "enqueue", "multitask_timeout": "soon"}, "multitask_timeout"),
        ({"multitask": "enqueue", "multitask_timeout": timedelta(seconds=-1)}, "multitask_timeout"),
    ]
    extra = {"schema": area} if backend == POSTGRES else {"prefix": area}
    with sync_saver(backend, url, area) as saver:
        client = saver.conn if backend == POSTGRES else saver.client
        for options, field in bad_options:
            with pytest.raises(InvalidConfigError) as exc:
                saver_cls(client, **extra, **options)
            assert exc.value.field == field, options
        calls: list[str] = []
        graph = chat(saver, calls)
        graph.invoke({"log": []}, CFG)
        before, calls[:] = _stored(saver), []
        bad_runs = [
            ({"durable_multitask": "rollback"}, "configurable.durable_multitask"),
            ({"durable_multitask": 1}, "configurable.durable_multitask"),
            (
                {"durable_multitask": "enqueue", "durable_multitask_timeout": -5},
                "configurable.durable_multitask_timeout",
            ),
        ]
        for conf, field in bad_runs:
            with pytest.raises(InvalidConfigError) as exc:
                graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": T, **conf}})
            assert exc.value.field == field
            assert calls == [] and _stored(saver) == before
    with sync_saver(backend, url, area, leases=False) as saver:
        graph = chat(saver, calls)
        with pytest.raises(InvalidConfigError) as exc:
            graph.invoke(
                Command(resume="yes"),
                {"configurable": {"thread_id": T, "durable_multitask": "enqueue"}},
            )
        assert exc.value.field == "configurable.durable_multitask"
        assert "leases" in exc.value.reason
        assert calls == [] and _stored(saver) == before
