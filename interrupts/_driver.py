"""One source of truth for sync and async: flows are generators of operations.

A flow (``approve``, a sweep of one wait, ``decide``...) is written once as a
generator that yields :class:`Op` requests and receives their results; a thin
sync shell (:func:`drive`) or async shell (:func:`adrive`) performs each
operation with the graph's and the saver's sync or async methods. This is the
pattern psycopg uses for its connection logic.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langgraph_durable.checkpointers._multitask import REJECT, held_by_a_live_run, run_policy
from langgraph_durable.interrupts._saver_state import SaverView
from langgraph_durable.interrupts._store import Backend

T = TypeVar("T")


@dataclass(frozen=True)
class Op:
    """One I/O request of a flow: ``Env.<name>(**kwargs)`` or ``Env.a<name>(**kwargs)``."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)


Flow = Generator[Op, Any, T]


def op(name: str, **kwargs: Any) -> Op:
    """Build an :class:`Op`."""
    return Op(name, kwargs)


class Env:
    """Performs a flow's operations against a graph (optional) and a saver's backend."""

    def __init__(self, backend: Backend, graph: Any = None) -> None:
        self.backend = backend
        self.graph = graph
        self.states: Any = graph if graph is not None else SaverView(backend.saver)

    # state reads: the graph's, or without one the saver's (the pending interrupts)
    def get_state(self, config: dict[str, Any]) -> Any:
        return self.states.get_state(config)

    async def aget_state(self, config: dict[str, Any]) -> Any:
        return await self.states.aget_state(config)

    def recent_states(self, config: dict[str, Any], limit: int) -> list[Any]:
        return list(self.states.get_state_history(config, limit=limit))

    async def arecent_states(self, config: dict[str, Any], limit: int) -> list[Any]:
        return [s async for s in self.states.aget_state_history(config, limit=limit)]

    def invoke(self, input: Any, config: dict[str, Any], durability: str | None = None) -> Any:
        if durability is None:
            return self.graph.invoke(input, config)
        return self.graph.invoke(input, config, durability=durability)

    async def ainvoke(
        self, input: Any, config: dict[str, Any], durability: str | None = None
    ) -> Any:
        if durability is None:
            return await self.graph.ainvoke(input, config)
        return await self.graph.ainvoke(input, config, durability=durability)

    # whether a resume would be turned away now (a saver or run with multitask="reject")
    def thread_busy(self, config: dict[str, Any]) -> bool:
        leases, thread_id = self._rejecting(config, "run_leases")
        if thread_id is None:
            return False
        return held_by_a_live_run(leases.store.get_lease(thread_id=thread_id), leases.clock())

    async def athread_busy(self, config: dict[str, Any]) -> bool:
        leases, thread_id = self._rejecting(config, "arun_leases")
        if thread_id is None:
            return False
        record = await leases.store.aget_lease(thread_id=thread_id)
        return held_by_a_live_run(record, leases.clock())

    def _rejecting(self, config: dict[str, Any], name: str) -> tuple[Any, str | None]:
        """The graph's run leases, and the thread if a run of ``config`` rejects when busy."""
        leases = getattr(getattr(self.graph, "checkpointer", None), name, None)
        if leases is None:
            return None, None
        found = run_policy(config, leases.multitask, leases=True)
        if found is None or found[1].strategy != REJECT:
            return leases, None
        return leases, found[0]

    # several flows at once (the sweeper's resumes of one page)
    def run_all(self, flows: list[Flow[Any]], concurrency: int) -> list[Any]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return list(pool.map(lambda f: drive(f, self), flows))

    async def arun_all(self, flows: list[Flow[Any]], concurrency: int) -> list[Any]:
        import asyncio

        gate = asyncio.Semaphore(concurrency)

        async def one(flow: Flow[Any]) -> Any:
            async with gate:
                return await adrive(flow, self)

        return list(await asyncio.gather(*(one(f) for f in flows)))

    # storage
    def __getattr__(self, name: str) -> Any:
        # everything else is the backend's (record_decision, claim_due_waits, ...)
        return getattr(self.backend, name)


def drive(flow: Flow[T], env: Env) -> T:
    """Run ``flow`` with the sync methods of ``env``."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            request = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            send, error = getattr(env, request.name)(**request.kwargs), None
        except Exception as exc:
            send, error = None, exc


async def adrive(flow: Flow[T], env: Env) -> T:
    """Run ``flow`` with the async methods of ``env``."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            request = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            send, error = await getattr(env, "a" + request.name)(**request.kwargs), None
        except Exception as exc:
            send, error = None, exc
