"""One source of truth for sync and async: flows are generators of typed requests.

A flow (``approve``, a sweep of one wait, ``decide``...) is written once as a
generator that yields :class:`Req` objects and receives their results; a thin
sync shell (:func:`drive`) or async shell (:func:`adrive`) performs each
request with the graph's and the saver's sync or async methods. This is the
pattern psycopg uses for its connection logic.

A request carries its result type: ``got = yield from GetDecisions(...)`` is a
``dict`` to mypy, because iterating a ``Req[T]`` yields the request itself and
returns what the driver sends back. Each request class performs itself
(:meth:`Req.run`, :meth:`Req.arun`), so a driver dispatches on the request's
type and never on a name.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Generic, TypeVar

from langgraph_durable.interrupts._saver_state import SaverView
from langgraph_durable.interrupts._store import Backend

T = TypeVar("T")


class Req(Generic[T]):
    """One I/O request of a flow, whose result is a ``T``.

    Subclasses are frozen dataclasses of the call's arguments and implement
    :meth:`run` and :meth:`arun`.
    """

    def run(self, env: Env) -> T:
        """Perform the request with the sync methods of ``env``."""
        raise NotImplementedError

    async def arun(self, env: Env) -> T:
        """Perform the request with the async methods of ``env``."""
        raise NotImplementedError

    def __iter__(self) -> Generator[Req[Any], Any, T]:
        # ``yield from request`` in a flow: the driver's answer, typed as T
        result: T = yield self
        return result


Flow = Generator[Req[Any], Any, T]


class Env:
    """What a flow's requests run against: a saver's backend and the graph (optional)."""

    def __init__(self, backend: Backend, graph: Any = None) -> None:
        self.backend = backend
        self.graph = graph
        # state reads: the graph's, or without one the saver's (the pending interrupts)
        self.states: Any = graph if graph is not None else SaverView(backend.saver)


def drive(flow: Flow[T], env: Env) -> T:
    """Run ``flow`` with the sync methods of ``env``."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            request = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            result: T = stop.value  # what the flow returned
            return result
        try:
            send, error = request.run(env), None
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
            result: T = stop.value  # what the flow returned
            return result
        try:
            send, error = await request.arun(env), None
        except Exception as exc:
            send, error = None, exc
