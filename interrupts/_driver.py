"""One source of truth for sync and async: flows are generators of typed requests.

A flow (``approve``, a sweep of one wait, ``decide``...) is written once as a
generator that yields :class:`Req` objects and receives their results; a thin
async driver (:func:`._perform_async.adrive`) or its generated sync twin
(:func:`._perform.drive`) performs each request with the graph's and the
saver's async or sync methods. This is the pattern psycopg uses for its
connection logic.

A request carries its result type: ``got = yield from GetDecisions(...)`` is a
``dict`` to mypy, because iterating a ``Req[T]`` yields the request itself and
returns what the driver sends back. Requests are data (frozen dataclasses of a
call's arguments); :func:`._perform_async.aperform` dispatches on a request's
type, never on a name, and is the one place that says what each request does.

This module holds what both drivers share: :class:`Req`, :data:`Flow`,
:class:`Env`, and :func:`in_threads`, the sync driver's way of running several
flows at once (threads have no twin generated from ``asyncio.gather``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.interrupts._saver_state import SaverView
from langgraph_durable.interrupts._store import Backend
from langgraph_durable.interrupts._store_async import AsyncBackend

T = TypeVar("T")
X = TypeVar("X")


class Req(Generic[T]):
    """One I/O request of a flow, whose result is a ``T``.

    Subclasses are frozen dataclasses of the call's arguments;
    :func:`._perform_async.aperform` performs them.
    """

    def __iter__(self) -> Generator[Req[Any], Any, T]:
        # ``yield from request`` in a flow: the driver's answer, typed as T
        result: T = yield self
        return result


Flow = Generator[Req[Any], Any, T]


class Env:
    """What a flow's requests run against: a saver's backends and the graph (optional).

    ``env.backend`` serves the sync requests and ``env.abackend`` the async ones;
    each is built on first use, and both keep a foreign saver's decisions,
    claims and audit trail in the same in-process memory.
    """

    def __init__(self, saver: BaseCheckpointSaver[Any] | Backend, graph: Any = None) -> None:
        # a saver, or the sync backend of one
        self._backend: Backend | None = saver if isinstance(saver, Backend) else None
        self._abackend: AsyncBackend | None = None
        self.saver = saver.saver if isinstance(saver, Backend) else saver
        self.graph = graph
        # state reads: the graph's, or without one the saver's (the pending interrupts)
        self.states: Any = graph if graph is not None else SaverView(self.saver)

    @property
    def backend(self) -> Backend:
        """The saver seen by the sync requests."""
        if self._backend is None:
            self._backend = Backend(self.saver)
        return self._backend

    @property
    def abackend(self) -> AsyncBackend:
        """The saver seen by the async requests."""
        if self._abackend is None:
            self._abackend = AsyncBackend(self.saver)
        return self._abackend


def in_threads(call: Callable[[X], T], items: Iterable[X], workers: int) -> list[T]:
    """``call`` on each of ``items``, ``workers`` threads at a time; the results in order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(call, items))
