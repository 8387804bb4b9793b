"""The real OpenTelemetry SDK with in-memory exporters, set once for the test process.

An SDK's providers can be set only once per process, so the session sets them
first (tests/conftest.py) with the library's telemetry off; the ``otel``
fixture turns it on for one test, which reads only what it emitted (the span
exporter is cleared and the metric reader collected at its start), and off
again after it, so other tests pay nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, UpDownCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langgraph_durable.checkpointers._otel import configure_telemetry


@dataclass
class Telemetry:
    """What the library emitted during one test."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """Finished spans of the library's scope (named ``name``, if given)."""
        return [
            s
            for s in self.exporter.get_finished_spans()
            if s.instrumentation_scope is not None
            and s.instrumentation_scope.name == "langgraph_durable"
            and (name is None or s.name == name)
        ]

    def collect(self) -> dict[str, list[Any]]:
        """Data points by metric name, recorded since the last collection (gauges: last value)."""
        data = self.reader.get_metrics_data()
        points: dict[str, list[Any]] = {}
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                if sm.scope.name != "langgraph_durable":
                    continue
                for metric in sm.metrics:
                    points.setdefault(metric.name, []).extend(metric.data.data_points)
        return points


_SET: Telemetry | None = None


def process_telemetry() -> Telemetry:
    """The process's SDK providers with in-memory exporters (set on first call)."""
    global _SET
    if _SET is None:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        # delta temporality: each collection holds what was recorded since the last one
        delta = AggregationTemporality.DELTA
        reader = InMemoryMetricReader(
            preferred_temporality={Counter: delta, Histogram: delta, UpDownCounter: delta}
        )
        # and Prometheus' reader, as the service's /metrics and worker --metrics-port use
        prometheus = PrometheusMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader, prometheus]))
        _SET = Telemetry(exporter, reader)
    return _SET


def recording() -> Iterator[Telemetry]:
    """The real SDK recording one test's spans and metrics (the ``otel`` fixture)."""
    telemetry = process_telemetry()
    configure_telemetry(enabled=True, thread_ids=True)
    telemetry.exporter.clear()
    telemetry.reader.get_metrics_data()  # start from a fresh collection
    try:
        yield telemetry
    finally:
        configure_telemetry(enabled=False, thread_ids=True)
