"""Run one role of the demo story with the real OpenTelemetry SDK; write its spans to a file.

``python -m tests._otel_capture OUT.jsonl ROLE --thread ID [--minutes-later N]``
with the address in ``LANGGRAPH_DURABLE_URL``: an in-memory exporter records
every span of the process, and at the end each finished span is written to
``OUT.jsonl`` as one JSON object (names, ids, parent, links, attributes,
times, the role and the pid), for a test or a picture to read.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def span_record(span: ReadableSpan, role: str) -> dict[str, Any]:
    """One finished span as JSON-able data."""
    ctx = span.context
    return {
        "role": role,
        "pid": os.getpid(),
        "name": span.name,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
        "trace_id": f"{ctx.trace_id:032x}",
        "span_id": f"{ctx.span_id:016x}",
        "parent_id": None if span.parent is None else f"{span.parent.span_id:016x}",
        "links": [
            {"trace_id": f"{link.context.trace_id:032x}", "span_id": f"{link.context.span_id:016x}"}
            for link in span.links
        ],
        "attributes": {
            k: list(v) if isinstance(v, tuple) else v for k, v in (span.attributes or {}).items()
        },
        "start": span.start_time,
        "end": span.end_time,
        "status": span.status.status_code.name,
    }


def main(argv: list[str]) -> int:
    """Run the role ``argv[1:]`` names, writing its spans to ``argv[0]``."""
    from langgraph_durable.interrupts import _demo

    out, role_argv = Path(argv[0]), argv[1:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    try:
        code = _demo.main(role_argv)
    finally:
        provider.force_flush()
        with out.open("a", encoding="utf-8") as f:
            for span in exporter.get_finished_spans():
                f.write(json.dumps(span_record(span, role_argv[0])) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
