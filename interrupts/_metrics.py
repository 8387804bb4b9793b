"""The worker's gauges, and the Prometheus scrape endpoint.

Gauges that need a query (approvals waiting and overdue, the sweeper's lag,
runs running, orphaned and parked) are computed by the worker once per pass
from the savers' indexes (the wait index and the lease index: their cost does
not grow with the number of finished threads) and set through the
OpenTelemetry metrics API; ``status`` reads the same numbers the same way.

``langgraph-durable worker --metrics-port N`` (and the approval service's
``/metrics``) expose every metric of the process in Prometheus' text format
through OpenTelemetry's Prometheus reader. That needs ``opentelemetry-sdk``
and ``opentelemetry-exporter-prometheus`` (the ``prometheus`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph_durable.checkpointers import telemetry as _otel
from langgraph_durable.checkpointers.telemetry import metrics_active
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._errors import InvalidInput

__all__ = [
    "GAUGES",
    "LEVEL_GAUGES",
    "Health",
    "enable_prometheus",
    "measure",
    "metrics_app",
    "publish",
]

GAUGES: Mapping[str, tuple[str, str]] = {
    "langgraph_durable.approvals.waiting": ("{approval}", "Approvals waiting for a decision"),
    "langgraph_durable.approvals.overdue": (
        "{approval}",
        "Approvals past their deadline and not resolved yet",
    ),
    "langgraph_durable.sweeper.lag": (
        "s",
        "Now minus the oldest deadline that is due and not resolved (0 when none is)",
    ),
    "langgraph_durable.runs.running": ("{run}", "Runs holding a live lease"),
    "langgraph_durable.runs.orphaned": ("{run}", "Runs whose lease expired: recovery resumes them"),
    "langgraph_durable.runs.parked": ("{run}", "Threads parked after repeated failed recoveries"),
}
"""The worker's gauges: name -> (unit, description)."""

LEVEL_GAUGES: Mapping[str, tuple[str, str]] = {
    "langgraph_durable.approvals.waiting_by_level": (
        "{approval}",
        "Approvals waiting for a decision, by escalation level",
    ),
    "langgraph_durable.approvals.overdue_by_level": (
        "{approval}",
        "Approvals past their deadline, by escalation level",
    ),
}
"""Gauges with one series per escalation level (attribute :data:`LEVEL_ATTRIBUTE`)."""

LEVEL_ATTRIBUTE = "langgraph_durable.escalation_level"

_INSTALL = "pip install 'langgraph-durable[prometheus]'"


@dataclass(frozen=True)
class Health:
    """What one worker pass measured.

    Attributes:
        waiting: Approvals (and batches) waiting.
        overdue: Those past their deadline.
        lag: Seconds the oldest overdue one is past its deadline (0.0 if none).
        running: Runs holding a live lease.
        orphaned: Runs whose lease expired.
        parked: Parked threads.
        by_level: ``{escalation level: (waiting, overdue)}`` of the approvals waiting.
        at: When it was measured (UTC).
    """

    waiting: int
    overdue: int
    lag: float
    running: int
    orphaned: int
    parked: int
    at: datetime
    by_level: Mapping[int, tuple[int, int]] = field(default_factory=dict)


def measure(saver: Any, *, clock: Clock | None = None) -> Health:
    """The numbers ``status`` shows, read from the wait and lease indexes."""
    from langgraph_durable.interrupts._inbox import approvals_by_level
    from langgraph_durable.interrupts._inbox_calls import approval_health
    from langgraph_durable.interrupts._thread_states import run_health

    approvals = approval_health(saver, clock=clock)
    runs = run_health(saver, clock=clock)
    age = approvals.oldest_overdue_age
    return Health(
        waiting=approvals.waiting,
        overdue=approvals.overdue,
        lag=0.0 if age is None else max(0.0, age.total_seconds()),
        running=runs.running,
        orphaned=runs.orphaned,
        parked=runs.parked,
        at=approvals.checked_at,
        by_level=approvals_by_level(saver, clock=clock),
    )


class _Gauges:
    made: dict[str, Any] = {}  # noqa: RUF012 - one set per process, made on first use
    levels: set[int] = set()  # noqa: RUF012 - levels published before: set to 0 when gone

    @classmethod
    def get(cls, name: str) -> Any:
        gauge = cls.made.get(name)
        if gauge is None:
            unit, description = {**GAUGES, **LEVEL_GAUGES}[name]
            gauge = cls.made[name] = _otel.meter().create_gauge(
                name, unit=unit, description=description
            )
        return gauge


def publish(health: Health) -> None:
    """Set the worker's gauges to ``health`` (nothing when no SDK records metrics)."""
    if not metrics_active():
        return
    values = {
        "langgraph_durable.approvals.waiting": health.waiting,
        "langgraph_durable.approvals.overdue": health.overdue,
        "langgraph_durable.sweeper.lag": health.lag,
        "langgraph_durable.runs.running": health.running,
        "langgraph_durable.runs.orphaned": health.orphaned,
        "langgraph_durable.runs.parked": health.parked,
    }
    for name, value in values.items():
        _Gauges.get(name).set(value)
    waiting = _Gauges.get("langgraph_durable.approvals.waiting_by_level")
    overdue = _Gauges.get("langgraph_durable.approvals.overdue_by_level")
    # a level nobody waits at any more reads 0, not its last count
    for level in _Gauges.levels | set(health.by_level):
        counts = health.by_level.get(level, (0, 0))
        waiting.set(counts[0], {LEVEL_ATTRIBUTE: level})
        overdue.set(counts[1], {LEVEL_ATTRIBUTE: level})
    _Gauges.levels |= set(health.by_level)


def enable_prometheus() -> None:
    """Make this process's metrics readable in Prometheus' format.

    Without an SDK configured yet, this installs one whose only reader is
    OpenTelemetry's Prometheus reader; an application that configured its own
    meter provider keeps it (give it a ``PrometheusMetricReader`` to scrape it).

    Raises:
        InvalidInput: the OpenTelemetry SDK or its Prometheus exporter is not installed.
    """
    try:
        from opentelemetry import metrics
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
    except ImportError as exc:
        raise InvalidInput(
            parameter="metrics",
            reason=f"the Prometheus format needs the OpenTelemetry SDK and its Prometheus "
            f"exporter ({exc.name} is missing): {_INSTALL}",
        ) from None
    if not metrics_active() and _otel.SETTINGS.enabled:
        metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()]))


def serve_prometheus(port: int, host: str = "127.0.0.1") -> Any:
    """Serve ``GET /metrics`` on ``host:port`` from a background thread; returns the server.

    Raises:
        InvalidInput: the packages are missing, or the port cannot be bound.
    """
    enable_prometheus()
    from prometheus_client import start_http_server

    try:
        server, _thread = start_http_server(port, addr=host)
    except OSError as exc:
        raise InvalidInput(
            parameter="--metrics-port", reason=f"cannot listen on {host}:{port}: {exc}"
        ) from None
    return server


def metrics_app() -> Any:
    """An ASGI app answering with this process's metrics in Prometheus' text format.

    Mount it where the scraper looks (the approval service serves it at
    ``/metrics`` when built with ``metrics=True``).

    Raises:
        InvalidInput: the OpenTelemetry SDK or its Prometheus exporter is not installed.
    """
    enable_prometheus()
    from prometheus_client import make_asgi_app

    return make_asgi_app()


def metrics_endpoint(saver: Any) -> Any:
    """A Starlette endpoint for ``GET /metrics`` that measures ``saver``'s gauges per scrape.

    A service without a worker loop in its process refreshes the gauges when
    scraped (the same indexed reads as ``status``), then answers with every
    metric of the process.

    Raises:
        InvalidInput: the OpenTelemetry SDK or its Prometheus exporter is not installed.
    """
    enable_prometheus()
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response

    async def scrape(request: Request) -> Response:
        await run_in_threadpool(lambda: publish(measure(saver)))
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return scrape
