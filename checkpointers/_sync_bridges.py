"""Methods of one mode made from their twins of the other: sync from async, async from sync.

An async saver and its stores are called from synchronous code too: LangGraph's
sync ``get_state`` on a graph run with ``ainvoke``, or a sync node, which runs
in a worker thread and calls the helpers of the sync protocols
(``DecisionStore``, ``AuditLog``, ...). Each such method only runs its
``a``-twin on the saver's event loop and waits for the result
(:func:`sync_bridges`). A sync Redis saver offers the async methods the other
way round, each running its sync twin in a worker thread
(:func:`thread_bridges`). Both are made here once instead of written out per
method, store and backend.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

__all__ = ["SAVER_METHODS", "protocol_methods", "sync_bridges", "thread_bridges"]

S = TypeVar("S", bound="type[Any]")

SAVER_METHODS = (
    "get_tuple",
    "schema_version",
    "list",
    "put",
    "put_writes",
    "delete_thread",
    "delete_for_runs",
    "copy_thread",
    "prune",
    "get_delta_channel_history",
)
"""The checkpoint-saver methods our savers offer in both modes (by their sync names)."""


def protocol_methods(protocol: type) -> list[str]:
    """The public method names a protocol class declares itself (not inherited ones)."""
    return [
        name
        for name, member in vars(protocol).items()
        if callable(member) and not name.startswith("_")
    ]


def _names(members: tuple[type | str, ...]) -> Iterator[str]:
    for member in members:
        yield from [member] if isinstance(member, str) else protocol_methods(member)


def _bridge(name: str, twin: Callable[..., Any]) -> Callable[..., Any]:
    # the twin is looked up on the instance, so a subclass's override is the one run
    async_name = "a" + name

    @functools.wraps(twin)
    def bridged(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._runner.blocking(getattr(self, async_name)(*args, **kwargs))

    return _named(
        bridged, name, f"Sync :meth:`{async_name}` (from another thread than the saver's loop)."
    )


def _iterator_bridge(name: str, twin: Callable[..., Any]) -> Callable[..., Any]:
    # one item per trip to the loop: between two items the async iterator waits
    # at a yield (holding no connection or cursor), and stopping early closes it
    async_name = "a" + name

    @functools.wraps(twin)
    def bridged(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        runner = self._runner
        items: AsyncGenerator[Any, None] = getattr(self, async_name)(*args, **kwargs)
        while True:
            try:
                item = runner.blocking(_next(items))
            except StopAsyncIteration:
                return
            try:
                yield item
            except BaseException:  # the caller stopped early (or threw in)
                runner.blocking(_close(items))
                raise

    return _named(
        bridged, name, f"Sync :meth:`{async_name}` (from another thread than the saver's loop)."
    )


async def _next(items: AsyncGenerator[Any, None]) -> Any:
    return await anext(items)


async def _close(items: AsyncGenerator[Any, None]) -> None:
    await items.aclose()


def _named(bridged: Callable[..., Any], name: str, doc: str) -> Callable[..., Any]:
    bridged.__name__ = bridged.__qualname__ = name
    bridged.__doc__ = doc
    return bridged


def sync_bridges(*members: type | str) -> Callable[[S], S]:
    """Class decorator: a sync ``m`` beside each async ``am`` of an async saver or store.

    Args:
        *members: Sync protocols whose methods to offer (their names), or
            single method names. The class must define ``a<name>`` for each,
            and keep its runner in ``_runner``, whose ``blocking(coro)`` runs
            a coroutine on the saver's loop from another thread and returns
            its result. A method the class defines itself is left alone. An
            ``a<name>`` that is an async generator becomes a sync generator.
    """

    def decorate(cls: S) -> S:
        for name in _names(members):
            if name not in vars(cls):
                twin = getattr(cls, "a" + name)
                make = _iterator_bridge if inspect.isasyncgenfunction(twin) else _bridge
                setattr(cls, name, make(name, twin))
        return cls

    return decorate


def _thread_bridge(name: str, twin: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(twin)
    async def bridged(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self, name), *args, **kwargs)

    return _named(bridged, "a" + name, f"Async :meth:`{name}` (in a worker thread).")


def _thread_iterator_bridge(name: str, twin: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(twin)
    async def bridged(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        method = getattr(self, name)
        for item in await asyncio.to_thread(lambda: list(method(*args, **kwargs))):
            yield item

    return _named(bridged, "a" + name, f"Async :meth:`{name}` (read in a worker thread).")


def thread_bridges(*names: str) -> Callable[[S], S]:
    """Class decorator: an async ``am`` beside each sync ``m`` of a sync saver.

    Each runs ``m`` in a worker thread (``asyncio.to_thread``); a generator
    ``m`` is read there to its end, and its items are then yielded. A method
    the class defines itself is left alone.

    Args:
        *names: The sync methods' names.
    """

    def decorate(cls: S) -> S:
        for name in names:
            if "a" + name not in vars(cls):
                twin = getattr(cls, name)
                make = (
                    _thread_iterator_bridge if inspect.isgeneratorfunction(twin) else _thread_bridge
                )
                setattr(cls, "a" + name, make(name, twin))
        return cls

    return decorate
