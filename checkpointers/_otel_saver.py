# Generated from checkpointers/_otel_saver_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""The savers' spans and operation metrics: one class decorator around their public methods.

Written once as async code; the sync savers' decorators are generated from it
by ``tools/async_to_sync.py``. Each of ``put``, ``put_writes``, ``get_tuple``,
``list`` and ``delete_thread`` becomes a ``checkpoint.<op>`` span of kind
client with ``db.system``, the thread and namespace, the bytes the call
serialized, the rows (checkpoints, blobs or writes) it stored or returned and,
on reads, the longest delta chain it rebuilt; its latency and bytes also go to
two histograms by operation and backend. Nothing is built unless a configured
SDK records it: otherwise a call costs two looks at the global providers.

Bytes and chain lengths are counted where the savers encode
(:func:`~langgraph_durable.checkpointers._serde.dumps_exact`) and rebuild
(:class:`~langgraph_durable.checkpointers._delta_read.ChainReader`), through a
context variable that only an observed call sets
(:mod:`langgraph_durable.checkpointers._otel_calls`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from langgraph_durable.checkpointers._otel import tracing_active
from langgraph_durable.checkpointers._otel_calls import (
    Observed,
    observing,
    rows,
    upgrade_span,
    upgraded,
)

__all__ = ["sync_traced_migrations", "sync_traced_saver"]

S = TypeVar("S", bound="type[Any]")

# the saver's method and the operation its span names
_OPS = (
    ("put", "put"),
    ("put_writes", "put_writes"),
    ("get_tuple", "get_tuple"),
    ("delete_thread", "delete_thread"),
)


def _call(op: str, system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def observed(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not observing():
            return fn(self, *args, **kwargs)
        call = Observed(op, system, args, current=True)
        try:
            result = fn(self, *args, **kwargs)
        except BaseException as exc:
            call.end(0, exc)
            raise
        call.end(rows(op, args, result))
        return result

    return observed


def _list(system: str, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    # a listing is read lazily, page by page: its span is not made current
    # (the consumer runs between pages) and ends when iteration stops
    @functools.wraps(fn)
    def observed(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        if not observing():
            for item in fn(self, *args, **kwargs):
                yield item
            return
        call, count = Observed("list", system, args, current=False), 0
        try:
            for item in fn(self, *args, **kwargs):
                count += 1
                yield item
        except BaseException as exc:
            call.end(count, None if isinstance(exc, GeneratorExit) else exc)
            raise
        call.end(count)

    return observed


def _upgrade(system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    # one span per claimed batch of upgrade_all: what it upgraded, what it passed over
    @functools.wraps(fn)
    def observed(self: Any, **kwargs: Any) -> Any:
        if not tracing_active():
            return fn(self, **kwargs)
        with upgrade_span(system, kwargs) as current:
            outcome = fn(self, **kwargs)
            upgraded(current, outcome)
            return outcome

    return observed


def sync_traced_saver(system: str) -> Callable[[S], S]:
    """Class decorator: ``checkpoint.*`` spans and histograms around a saver's methods.

    Args:
        system: The ``db.system`` attribute (``"postgresql"``, ``"redis"``).
    """

    def decorate(cls: S) -> S:
        for method, op in _OPS:
            setattr(cls, method, _call(op, system, getattr(cls, method)))
        cls.list = _list(system, cls.list)
        # a saver that is its own migration store (one that holds a store
        # decorates the store's class instead)
        if hasattr(cls, "migration_upgrade_batch"):
            sync_traced_migrations(system)(cls)
        return cls

    return decorate


def sync_traced_migrations(system: str) -> Callable[[S], S]:
    """Class decorator: a ``migration.upgrade`` span per batch of a migration store.

    Args:
        system: The ``db.system`` attribute (``"postgresql"``, ``"redis"``).
    """

    def decorate(cls: S) -> S:
        cls.migration_upgrade_batch = _upgrade(system, cls.migration_upgrade_batch)
        return cls

    return decorate
