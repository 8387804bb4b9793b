"""The approval service's ``/metrics``: Prometheus text with the gauges measured per scrape."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from tests._backends import BACKENDS
from tests._otel_support import Telemetry
from tests._service_support import served


def _values(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        m = re.match(r"(langgraph_durable_\w+)\{[^}]*\} ([0-9.e+-]+)$", line)
        if m:
            found[m.group(1)] = float(m.group(2))
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_metrics_route_counts_what_waits(
    otel: Telemetry, backend: str, request: pytest.FixtureRequest
) -> None:
    with served(request, backend, metrics=True) as service:
        service.ask("t1")
        service.ask("t2")
        client = TestClient(service.app)
        answer = client.get("/metrics")  # no login: like /healthz
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain")
        values = _values(answer.text)
        assert values["langgraph_durable_approvals_waiting"] == 2
        assert values["langgraph_durable_approvals_overdue"] == 0
        assert values["langgraph_durable_runs_orphaned"] == 0


def test_metrics_route_is_off_unless_asked(request: pytest.FixtureRequest) -> None:
    with served(request, "postgres") as service:
        assert TestClient(service.app).get("/metrics").status_code == 404
