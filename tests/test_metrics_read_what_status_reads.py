"""The worker's gauges read what ``status`` reads; recoveries are spans; Prometheus scrapes.

Waiting, overdue and orphaned threads are made for real (the orphan's process
is SIGKILLed); the gauges the worker sets at its pass must equal the numbers
``langgraph-durable status`` prints. ``worker --metrics-port`` is scraped over
HTTP while it runs, and ``--log-format json`` gives the same numbers.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.interrupts import RecoveryWorker, thread_state
from langgraph_durable.interrupts._cli_worker import health_line
from tests._backends import BACKENDS, POSTGRES
from tests._lease_support import StepState, builder, leasing_saver, settings, spawn, where_of
from tests._otel_support import Telemetry
from tests._servers import free_port, url_with

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _wait_for(cond: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _url(backend: str, where: dict[str, str]) -> str:
    if backend == POSTGRES:
        return url_with(where["url"], "schema", where["schema"])
    return url_with(where["url"], "prefix", where["prefix"])


def _wait(saver: Any, thread: str, deadline: datetime, level: int = 0) -> None:
    def ask(state: StepState) -> dict[str, Any]:
        marker = wait_marker("approval", deadline, escalation_level=level)
        interrupt({WAIT_KEY: marker, "q": "ok?"})
        return {}

    g: StateGraph[Any] = StateGraph(StepState)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.compile(checkpointer=saver).invoke(
        {"n": 0, "trace": []}, {"configurable": {"thread_id": thread}}
    )


def _status(url: str) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-m", "langgraph_durable.interrupts.cli", "status", "--url", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    approvals = re.search(r"approvals: (\d+) waiting, (\d+) overdue", out)
    runs = re.search(r"runs: (\d+) running, (\d+) orphaned, (\d+) parked", out)
    assert approvals and runs, out
    names = ("waiting", "overdue", "running", "orphaned", "parked")
    return dict(zip(names, map(int, approvals.groups() + runs.groups()), strict=True))


def _gauges(otel: Telemetry) -> dict[str, float]:
    points = otel.collect()
    found = {}
    for name in ("waiting", "overdue"):
        (point,) = points[f"langgraph_durable.approvals.{name}"]
        found[name] = point.value
    for name in ("running", "orphaned", "parked"):
        (point,) = points[f"langgraph_durable.runs.{name}"]
        found[name] = point.value
    (lag,) = points["langgraph_durable.sweeper.lag"]
    found["lag"] = lag.value
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_gauges_equal_status_and_recovery_is_a_span(
    otel: Telemetry, backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    now = datetime.now(timezone.utc)
    with leasing_saver(backend, where, settings(1, 0.25)) as saver:
        _wait(saver, "wait", now + timedelta(hours=1))
        _wait(saver, "late", now - timedelta(minutes=2))
        child = spawn(
            "run",
            {"backend": backend, "where": where, "lease": 1, "beat": 0.25, "threads": ["orphan"]},
            LEASE_TEST_HANG_AT="3",
        )
        _wait_for(lambda: thread_state(saver, "orphan").state == "running")
        child.send_signal(signal.SIGKILL)
        child.wait()
        _wait_for(lambda: thread_state(saver, "orphan").state == "orphaned", timeout=15)

        line = health_line(saver, 0, 0)  # what the worker computes at each pass
        gauges = _gauges(otel)
        status = _status(_url(backend, where))
        assert status == {"waiting": 2, "overdue": 1, "running": 0, "orphaned": 1, "parked": 0}
        assert {k: gauges[k] for k in status} == status
        assert gauges["lag"] >= 120
        assert "waiting=2 overdue=1 running=0 orphaned=1" in line

        graph = builder().compile(checkpointer=saver)
        assert RecoveryWorker(graph).run_once().recovered == ["orphan"]
        (resumed,) = otel.spans("recovery.resume")
        assert resumed.attributes["langgraph.thread_id"] == "orphan"
        assert resumed.attributes["langgraph_durable.outcome"] == "resumed"
        assert resumed.attributes["langgraph_durable.recoveries"] == 1
        assert any(
            s.parent and s.parent.span_id == resumed.context.span_id
            for s in otel.spans("checkpoint.put")
        )
        (recoveries,) = otel.collect()["langgraph_durable.recoveries"]
        assert recoveries.value == 1
        health_line(saver, 1, 0)
        assert _gauges(otel)["orphaned"] == 0 == _status(_url(backend, where))["orphaned"]


def _by_level(otel: Telemetry, name: str) -> dict[int, float]:
    points = otel.collect()[f"langgraph_durable.approvals.{name}_by_level"]
    return {p.attributes["langgraph_durable.escalation_level"]: p.value for p in points}


@pytest.mark.parametrize("backend", BACKENDS)
def test_waiting_and_overdue_gauges_by_escalation_level(
    otel: Telemetry, backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    now = datetime.now(timezone.utc)
    with leasing_saver(backend, where, settings(1, 0.25)) as saver:
        _wait(saver, "first-ask", now + timedelta(hours=1))
        _wait(saver, "first-ask-late", now - timedelta(minutes=1))
        _wait(saver, "escalated", now - timedelta(minutes=1), level=1)
        _wait(saver, "escalated-twice", now + timedelta(hours=1), level=2)
        health_line(saver, 0, 0)
        assert _by_level(otel, "waiting") == {0: 2, 1: 1, 2: 1}
        assert _by_level(otel, "overdue") == {0: 1, 1: 1, 2: 0}
        # the totals are the sums of the levels
        gauges = _gauges(otel)
        assert (gauges["waiting"], gauges["overdue"]) == (4, 2)

        saver.delete_thread("escalated-twice")
        health_line(saver, 0, 0)
        assert _by_level(otel, "waiting")[2] == 0  # a level left empty reads 0


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.status == 200
        text = answer.read().decode()
    values = {}
    for line in text.splitlines():
        m = re.match(r"(langgraph_durable_\w+)\{[^}]*\} ([0-9.e+-]+)$", line)
        if m:
            values[m.group(1)] = float(m.group(2))
    return values


def test_worker_serves_prometheus_metrics_and_json_health(pg_schema: tuple[str, str]) -> None:
    url = url_with(pg_schema[0], "schema", pg_schema[1])
    where = {"url": pg_schema[0], "schema": pg_schema[1]}
    with leasing_saver(POSTGRES, where, settings(1, 0.25)) as saver:
        for n in range(3):
            _wait(saver, f"wait-{n}", datetime.now(timezone.utc) + timedelta(hours=1))
    port = free_port()
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "langgraph_durable.interrupts.cli",
            "worker",
            "--url",
            url,
            "--graph",
            "tests._lease_support:CLI_GRAPH",
            "--interval",
            "0.2",
            "--metrics-port",
            str(port),
            "--log-format",
            "json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        record = None
        deadline = time.monotonic() + 120
        while record is None and time.monotonic() < deadline:
            line = worker.stdout.readline()
            assert line, worker.stderr.read() if worker.stderr else ""
            if line.startswith("{"):
                record = json.loads(line)
        assert record is not None
        assert datetime.fromisoformat(record["ts"]).tzinfo is not None
        assert (record["waiting"], record["overdue"], record["orphaned"]) == (3, 0, 0)
        assert record["swept"] == 0
        scraped = _scrape(port)
        assert scraped["langgraph_durable_approvals_waiting"] == 3
        assert scraped["langgraph_durable_approvals_overdue"] == 0
        assert scraped["langgraph_durable_runs_orphaned"] == 0
        assert scraped["langgraph_durable_sweeper_lag_seconds"] == 0
    finally:
        worker.send_signal(signal.SIGINT)
        worker.wait(timeout=30)
