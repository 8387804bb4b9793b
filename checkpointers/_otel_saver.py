"""The savers' spans and operation metrics: one class decorator around their public methods.

Each of ``put``, ``put_writes``, ``get_tuple``, ``list`` and ``delete_thread``
(and their async twins) becomes a ``checkpoint.<op>`` span of kind client with
``db.system``, the thread and namespace, the bytes the call serialized, the
rows (checkpoints, blobs or writes) it stored or returned and, on reads, the
longest delta chain it rebuilt; its latency and bytes also go to two
histograms by operation and backend. Nothing is built unless a configured SDK
records it: otherwise a call costs two looks at the global providers.

Bytes and chain lengths are counted where the savers encode
(:func:`~langgraph_durable.checkpointers._serde.dumps_exact`) and rebuild
(:class:`~langgraph_durable.checkpointers._delta_read.ChainReader`), through a
context variable that only an observed call sets.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from langgraph_durable.checkpointers import _otel
from langgraph_durable.checkpointers._otel import metrics_active, thread_attributes, tracing_active

__all__ = [
    "OpStats",
    "async_traced_migrations",
    "async_traced_saver",
    "note_bytes",
    "note_chain",
    "sync_traced_migrations",
    "sync_traced_saver",
]

S = TypeVar("S", bound="type[Any]")


class OpStats:
    """What one observed saver call serialized and rebuilt."""

    __slots__ = ("bytes", "chain")

    def __init__(self) -> None:
        self.bytes = 0
        self.chain = 0


_STATS: ContextVar[OpStats | None] = ContextVar("langgraph_durable_op_stats", default=None)


def note_bytes(n: int) -> None:
    """Count ``n`` serialized bytes toward the observed call, if any."""
    stats = _STATS.get()
    if stats is not None:
        stats.bytes += n


def note_chain(n: int) -> None:
    """Note a delta chain of ``n`` stored rows read by the observed call, if any."""
    stats = _STATS.get()
    if stats is not None and n > stats.chain:
        stats.chain = n


class _Instruments:
    """The two saver histograms, made on first use (after the application set its SDK)."""

    duration: Any = None
    size: Any = None

    @classmethod
    def record(cls, op: str, system: str, seconds: float, stats: OpStats) -> None:
        if cls.duration is None:
            m = _otel.meter()
            cls.duration = m.create_histogram(
                "langgraph_durable.saver.duration",
                unit="s",
                description="Latency of a checkpoint saver operation",
            )
            cls.size = m.create_histogram(
                "langgraph_durable.saver.bytes",
                unit="By",
                description="Bytes a checkpoint saver operation serialized",
            )
        attrs = {"operation": op, "db.system": system}
        cls.duration.record(seconds, attrs)
        if stats.bytes:
            cls.size.record(stats.bytes, attrs)


def _config_attrs(config: Any) -> dict[str, Any]:
    conf = (config or {}).get("configurable") or {} if isinstance(config, dict) else {}
    return thread_attributes(conf.get("thread_id"), conf.get("checkpoint_ns", ""))


def _start_attrs(op: str, system: str, args: tuple[Any, ...]) -> dict[str, Any]:
    attrs = {"db.system": system, "db.operation.name": op}
    first = args[0] if args else None
    if op == "delete_thread":
        attrs.update(thread_attributes(first))
    else:
        attrs.update(_config_attrs(first))
    return attrs


def _rows(op: str, args: tuple[Any, ...], result: Any) -> int:
    if op == "put":
        return 1 + len(args[3]) if len(args) > 3 else 1  # the checkpoint and its new blobs
    if op == "put_writes":
        return len(args[1]) if len(args) > 1 else 0
    if op == "get_tuple":
        return 0 if result is None else 1
    return 0


class _Observed:
    """One observed call: its span (if tracing) and its stats, ended once."""

    def __init__(self, op: str, system: str, args: tuple[Any, ...], *, current: bool) -> None:
        self.op, self.system, self.stats = op, system, OpStats()
        self.started = time.perf_counter()
        self.span: Any = None
        self.scope: Any = None
        if tracing_active():
            self.span = _otel.start_client_span(f"checkpoint.{op}", _start_attrs(op, system, args))
            if current:
                self.scope = _otel.use_span(self.span)
                self.scope.__enter__()
        self.token = _STATS.set(self.stats) if current else None

    def end(self, rows: int, error: BaseException | None = None) -> None:
        if self.token is not None:
            _STATS.reset(self.token)
        if self.span is not None:
            if self.stats.bytes:
                self.span.set_attribute("langgraph_durable.bytes_written", self.stats.bytes)
            self.span.set_attribute("langgraph_durable.rows", rows)
            if self.stats.chain:
                self.span.set_attribute("langgraph_durable.delta_chain_length", self.stats.chain)
            if error is not None:
                _otel.mark_error(self.span, error)
            if self.scope is not None:
                self.scope.__exit__(None, None, None)
            self.span.end()
        if metrics_active():
            elapsed = time.perf_counter() - self.started
            _Instruments.record(self.op, self.system, elapsed, self.stats)


def _observing() -> bool:
    return _otel.SETTINGS.enabled and (tracing_active() or metrics_active())


def _sync_call(op: str, system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def observed(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _observing():
            return fn(self, *args, **kwargs)
        call = _Observed(op, system, args, current=True)
        try:
            result = fn(self, *args, **kwargs)
        except BaseException as exc:
            call.end(0, exc)
            raise
        call.end(_rows(op, args, result))
        return result

    return observed


def _async_call(op: str, system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def observed(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _observing():
            return await fn(self, *args, **kwargs)
        call = _Observed(op, system, args, current=True)
        try:
            result = await fn(self, *args, **kwargs)
        except BaseException as exc:
            call.end(0, exc)
            raise
        call.end(_rows(op, args, result))
        return result

    return observed


def _sync_list(system: str, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    # a listing is read lazily, page by page: its span is not made current
    # (the consumer runs between pages) and ends when iteration stops
    @functools.wraps(fn)
    def observed(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        if not _observing():
            yield from fn(self, *args, **kwargs)
            return
        call, rows = _Observed("list", system, args, current=False), 0
        try:
            for item in fn(self, *args, **kwargs):
                rows += 1
                yield item
        except BaseException as exc:
            call.end(rows, None if isinstance(exc, GeneratorExit) else exc)
            raise
        call.end(rows)

    return observed


def _async_list(
    system: str, fn: Callable[..., AsyncIterator[Any]]
) -> Callable[..., AsyncIterator[Any]]:
    @functools.wraps(fn)
    async def observed(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        if not _observing():
            async for item in fn(self, *args, **kwargs):
                yield item
            return
        call, rows = _Observed("list", system, args, current=False), 0
        try:
            async for item in fn(self, *args, **kwargs):
                rows += 1
                yield item
        except BaseException as exc:
            call.end(rows, None if isinstance(exc, GeneratorExit) else exc)
            raise
        call.end(rows)

    return observed


_OPS = ("put", "put_writes", "get_tuple", "delete_thread")


def _upgrade_span(system: str, kwargs: dict[str, Any]) -> Any:
    attrs = {
        "db.system": system,
        "langgraph_durable.migration.below_version": int(kwargs.get("below") or 0),
        "langgraph_durable.migration.batch_size": int(kwargs.get("limit") or 0),
    }
    return _otel.span("migration.upgrade", attrs, kind="client")


def _upgraded(current: Any, outcome: Any) -> None:
    items = getattr(outcome, "items", None) or []
    current.set_attribute("langgraph_durable.rows", len(items))
    current.set_attribute("langgraph_durable.migration.skipped", int(outcome.skipped or 0))


def _sync_upgrade(system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    # one span per claimed batch of upgrade_all: what it upgraded, what it passed over
    @functools.wraps(fn)
    def observed(self: Any, **kwargs: Any) -> Any:
        if not tracing_active():
            return fn(self, **kwargs)
        with _upgrade_span(system, kwargs) as current:
            outcome = fn(self, **kwargs)
            _upgraded(current, outcome)
            return outcome

    return observed


def _async_upgrade(system: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def observed(self: Any, **kwargs: Any) -> Any:
        if not tracing_active():
            return await fn(self, **kwargs)
        with _upgrade_span(system, kwargs) as current:
            outcome = await fn(self, **kwargs)
            _upgraded(current, outcome)
            return outcome

    return observed


def sync_traced_saver(system: str) -> Callable[[S], S]:
    """Class decorator: ``checkpoint.*`` spans and histograms around a sync saver's methods.

    Args:
        system: The ``db.system`` attribute (``"postgresql"``, ``"redis"``).
    """

    def decorate(cls: S) -> S:
        for op in _OPS:
            setattr(cls, op, _sync_call(op, system, getattr(cls, op)))
        cls.list = _sync_list(system, cls.list)
        # a saver that is its own migration store (one that holds a store
        # decorates the store's class with sync_traced_migrations instead)
        if hasattr(cls, "migration_upgrade_batch"):
            cls.migration_upgrade_batch = _sync_upgrade(system, cls.migration_upgrade_batch)
        return cls

    return decorate


def async_traced_saver(system: str) -> Callable[[S], S]:
    """Class decorator: the same spans around an async saver's ``a*`` methods."""

    def decorate(cls: S) -> S:
        for op in _OPS:
            setattr(cls, "a" + op, _async_call(op, system, getattr(cls, "a" + op)))
        cls.alist = _async_list(system, cls.alist)
        if hasattr(cls, "amigration_upgrade_batch"):  # see sync_traced_saver
            cls.amigration_upgrade_batch = _async_upgrade(system, cls.amigration_upgrade_batch)
        return cls

    return decorate


def sync_traced_migrations(system: str) -> Callable[[S], S]:
    """Class decorator: a ``migration.upgrade`` span per batch of a sync migration store.

    Args:
        system: The ``db.system`` attribute (``"postgresql"``, ``"redis"``).
    """

    def decorate(cls: S) -> S:
        cls.migration_upgrade_batch = _sync_upgrade(system, cls.migration_upgrade_batch)
        return cls

    return decorate


def async_traced_migrations(system: str) -> Callable[[S], S]:
    """Class decorator: the same span around an async migration store's batches."""

    def decorate(cls: S) -> S:
        cls.amigration_upgrade_batch = _async_upgrade(system, cls.amigration_upgrade_batch)
        return cls

    return decorate
