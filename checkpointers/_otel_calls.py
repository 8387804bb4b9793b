"""What one observed saver call records: its span, its stats and the two histograms.

The class decorators that observe the savers' methods are in
:mod:`langgraph_durable.checkpointers._otel_saver_async` (and its generated sync
sibling :mod:`langgraph_durable.checkpointers._otel_saver`).

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

import time
from contextvars import ContextVar
from typing import Any

from langgraph_durable.checkpointers import _otel
from langgraph_durable.checkpointers._otel import metrics_active, thread_attributes, tracing_active

__all__ = [
    "Observed",
    "OpStats",
    "note_bytes",
    "note_chain",
    "observing",
    "rows",
    "upgrade_span",
    "upgraded",
]


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


def rows(op: str, args: tuple[Any, ...], result: Any) -> int:
    """The rows a call of ``op`` stored or returned, for its span."""
    if op == "put":
        return 1 + len(args[3]) if len(args) > 3 else 1  # the checkpoint and its new blobs
    if op == "put_writes":
        return len(args[1]) if len(args) > 1 else 0
    if op == "get_tuple":
        return 0 if result is None else 1
    return 0


class Observed:
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
        """End the call once: its span (with ``rows`` and ``error``) and its histograms."""
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


def observing() -> bool:
    """Whether a configured SDK records saver calls (otherwise a call is left alone)."""
    return _otel.SETTINGS.enabled and (tracing_active() or metrics_active())


def upgrade_span(system: str, kwargs: dict[str, Any]) -> Any:
    """The ``migration.upgrade`` span of one claimed batch (``kwargs`` of the call)."""
    attrs = {
        "db.system": system,
        "langgraph_durable.migration.below_version": int(kwargs.get("below") or 0),
        "langgraph_durable.migration.batch_size": int(kwargs.get("limit") or 0),
    }
    return _otel.span("migration.upgrade", attrs, kind="client")


def upgraded(current: Any, outcome: Any) -> None:
    """Note on the batch's span what it upgraded and what it passed over."""
    items = getattr(outcome, "items", None) or []
    current.set_attribute("langgraph_durable.rows", len(items))
    current.set_attribute("langgraph_durable.migration.skipped", int(outcome.skipped or 0))
