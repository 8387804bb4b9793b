"""OpenTelemetry helpers shared by the savers and the interrupt helpers.

The savers and :mod:`langgraph_durable.interrupts` trace through one tracer and
one meter (instrumentation scope ``langgraph_durable``); this module is what the
interrupt helpers use of them. Every helper is a no-op without the ``otel`` extra.
"""

from langgraph_durable.checkpointers._otel import (
    IDLE,
    SCOPE,
    SETTINGS,
    TelemetrySettings,
    add_link,
    attach,
    configure_telemetry,
    current_context,
    current_span,
    current_traceparent,
    detach,
    meter,
    metrics_active,
    span,
    thread_attributes,
    tracing_active,
)

__all__ = [
    "IDLE",
    "SCOPE",
    "SETTINGS",
    "TelemetrySettings",
    "add_link",
    "attach",
    "configure_telemetry",
    "current_context",
    "current_span",
    "current_traceparent",
    "detach",
    "meter",
    "metrics_active",
    "span",
    "thread_attributes",
    "tracing_active",
]
