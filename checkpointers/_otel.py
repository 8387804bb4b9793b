"""OpenTelemetry for the whole library: one tracer, one meter, the settings, traceparents.

Everything here works without OpenTelemetry installed (the ``otel`` extra adds
``opentelemetry-api``): then every helper is a no-op. With the API installed
but no SDK configured, a call costs one look at the global providers; the
attributes of a span are only built when a configured SDK records it.

The instrumentation scope, ``langgraph_durable``, is part of the contract:
filter on it in a collector or a view.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:  # the otel extra: the API only, never the SDK
    from opentelemetry import context as _context
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace

    # the API's own stand-in until an SDK is set, and where the set one is kept:
    # no public name for either
    from opentelemetry.metrics import _internal as _metrics_globals
    from opentelemetry.metrics._internal import _ProxyMeterProvider
except ImportError:  # pragma: no cover - exercised by installs without the extra
    # None stands for a missing module: every use checks for it first
    _trace = None  # type: ignore[assignment]
    _context = None  # type: ignore[assignment]
    _metrics = None  # type: ignore[assignment]
    _ProxyMeterProvider = None  # type: ignore[assignment,misc]
    _metrics_globals = None  # type: ignore[assignment]

__all__ = [
    "IDLE",
    "SCOPE",
    "TelemetrySettings",
    "add_link",
    "configure_telemetry",
    "current_traceparent",
    "link_to",
    "mark_error",
    "meter",
    "metrics_active",
    "span",
    "start_client_span",
    "thread_attributes",
    "tracer",
    "tracing_active",
    "use_span",
]

SCOPE = "langgraph_durable"
"""The instrumentation scope of every span and metric the library emits."""

_THREAD_IDS_ENV = "LANGGRAPH_DURABLE_OTEL_THREAD_IDS"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class TelemetrySettings:
    """What the library emits (see :func:`configure_telemetry`).

    Attributes:
        enabled: ``False`` emits nothing at all, whatever SDK is configured.
        thread_ids: ``False`` leaves ``langgraph.thread_id`` out of every span.
    """

    enabled: bool = True
    thread_ids: bool = True


SETTINGS = TelemetrySettings(thread_ids=_env_flag(_THREAD_IDS_ENV))


def configure_telemetry(*, enabled: bool | None = None, thread_ids: bool | None = None) -> None:
    """Turn the library's spans and metrics on or off, and thread ids in attributes.

    Args:
        enabled: ``False`` emits nothing (the overhead is one attribute read
            per call); ``True`` (the default) emits to whatever OpenTelemetry
            SDK the application configured, and nothing when none is.
        thread_ids: ``False`` leaves thread ids out of span attributes (they
            may be personal data); the environment variable
            ``LANGGRAPH_DURABLE_OTEL_THREAD_IDS=0`` sets it at import.

    Raises:
        TypeError: a setting is not a bool.
    """
    for name, value in (("enabled", enabled), ("thread_ids", thread_ids)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"configure_telemetry: {name} must be a bool, got {value!r}")
    if enabled is not None:
        SETTINGS.enabled = enabled
    if thread_ids is not None:
        SETTINGS.thread_ids = thread_ids


# The API's getters look the provider up in the environment on every call until
# one is set (a few microseconds under load, on every saver call): its module
# global says "none set yet" for the price of an attribute read. A provider named
# by environment variable is only loaded by the getter, so then the getter is used.
_TRACE_GLOBALS: Any = _trace
_METER_GLOBALS: Any = _metrics_globals
_TRACE_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
_METER_FROM_ENV = "OTEL_PYTHON_METER_PROVIDER" in os.environ


def tracing_active() -> bool:
    """Whether spans would be recorded: enabled, the API installed and an SDK configured."""
    if not SETTINGS.enabled or _trace is None:
        return False
    if getattr(_TRACE_GLOBALS, "_TRACER_PROVIDER", 0) is None and not _TRACE_FROM_ENV:
        return False
    provider = _trace.get_tracer_provider()
    return not isinstance(provider, (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider))


def metrics_active() -> bool:
    """Whether metrics would be recorded: enabled, the API installed and an SDK configured."""
    if not SETTINGS.enabled or _metrics is None:
        return False
    if getattr(_METER_GLOBALS, "_METER_PROVIDER", 0) is None and not _METER_FROM_ENV:
        return False
    provider = _metrics.get_meter_provider()
    return not isinstance(provider, (_ProxyMeterProvider, _metrics.NoOpMeterProvider))


def tracer() -> Any:
    """The library's tracer (resolved by the API's proxy, so it follows a later SDK setup)."""
    assert _trace is not None
    return _trace.get_tracer(SCOPE)


def meter() -> Any:
    """The library's meter (likewise a proxy until an SDK is set)."""
    assert _metrics is not None
    return _metrics.get_meter(SCOPE)


def thread_attributes(thread_id: Any, checkpoint_ns: Any = None) -> dict[str, Any]:
    """``langgraph.thread_id`` (unless turned off) and ``langgraph.checkpoint_ns``."""
    attrs: dict[str, Any] = {}
    if thread_id is not None and SETTINGS.thread_ids:
        attrs["langgraph.thread_id"] = str(thread_id)
    if checkpoint_ns is not None:
        attrs["langgraph.checkpoint_ns"] = str(checkpoint_ns)
    return attrs


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span, or ``None`` when none is recording."""
    if _trace is None:
        return None
    ctx = _trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def _span_context(traceparent: Any) -> Any:
    """The remote span context a stored ``traceparent`` names, or ``None`` if malformed."""
    if _trace is None or not isinstance(traceparent, str):
        return None
    parts = traceparent.split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    try:
        trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3], 16)
    except ValueError:
        return None
    ctx = _trace.SpanContext(
        trace_id, span_id, is_remote=True, trace_flags=_trace.TraceFlags(flags & 0xFF)
    )
    return ctx if ctx.is_valid else None


def link_to(traceparent: Any, **attributes: Any) -> Any:
    """A span link to a stored ``traceparent``; ``None`` for a missing or malformed one."""
    ctx = _span_context(traceparent)
    return None if ctx is None else _trace.Link(ctx, attributes or None)


class _Idle:
    """What :func:`span` yields when nothing records: every call is dropped."""

    def set_attribute(self, key: str, value: Any) -> None:
        """Dropped."""

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Dropped."""

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        """Dropped."""

    def add_link(self, context: Any, attributes: Mapping[str, Any] | None = None) -> None:
        """Dropped."""

    def update_name(self, name: str) -> None:
        """Dropped."""

    def is_recording(self) -> bool:
        """Never."""
        return False


IDLE = _Idle()


@contextlib.contextmanager
def span(
    name: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    links: Sequence[Any] = (),
    kind: str = "internal",
    quiet: tuple[type[BaseException], ...] = (),
) -> Iterator[Any]:
    """A current span named ``name`` when tracing is active, else an idle stand-in.

    An exception leaving the block is recorded on the span (status error) and
    propagates unchanged; one of the ``quiet`` types (LangGraph's control
    flow, such as the interrupt that pauses a run) ends the span as it is.
    """
    if not tracing_active():
        yield IDLE
        return
    span_kind = _trace.SpanKind.CLIENT if kind == "client" else _trace.SpanKind.INTERNAL
    with tracer().start_as_current_span(
        name,
        kind=span_kind,
        attributes=dict(attributes or {}),
        links=[link for link in links if link is not None],
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if not isinstance(exc, quiet):
                mark_error(current, exc)
            raise


def add_link(target: Any, traceparent: Any, **attributes: Any) -> None:
    """Link the recording span ``target`` to a stored ``traceparent`` (if well formed)."""
    if not target.is_recording():
        return
    ctx = _span_context(traceparent)
    if ctx is not None:
        target.add_link(ctx, attributes or None)


def start_client_span(name: str, attributes: Mapping[str, Any]) -> Any:
    """Start (not make current) a client span of the library's tracer; tracing must be active."""
    return tracer().start_span(name, kind=_trace.SpanKind.CLIENT, attributes=dict(attributes))


def use_span(target: Any) -> Any:
    """A context manager making ``target`` current without ending it on exit."""
    return _trace.use_span(target, end_on_exit=False)


def mark_error(target: Any, error: BaseException) -> None:
    """Record ``error`` on ``target`` and set its status to error."""
    target.record_exception(error)
    target.set_status(_trace.Status(_trace.StatusCode.ERROR, str(error)))


def attach(ctx: Any) -> Any:
    """Make ``ctx`` the current context; returns the token for :func:`detach`."""
    return _context.attach(ctx)


def detach(token: Any) -> None:
    """Restore the context :func:`attach` replaced."""
    _context.detach(token)


def current_context() -> Any:
    """The current OpenTelemetry context."""
    return _context.get_current()


def current_span() -> Any:
    """The current span (a non-recording one when there is none)."""
    return _trace.get_current_span()
