"""One story across three processes: the request's span context is stored with the wait.

The demo's agent asks for approval and exits, an operator process records the
decision with the saver alone, a worker process's sweeper resumes the run.
Each process runs the real SDK with an in-memory exporter and writes its
spans to a file; the decision's and the resume's spans link to the request's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._servers import url_with

ROOT = Path(__file__).resolve().parents[1]


def _role(out: Path, url: str, role: str, thread: str) -> None:
    env = {**os.environ, "LANGGRAPH_DURABLE_URL": url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests._otel_capture", str(out), role, "--thread", thread],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _story(tmp_path: Path, url: str) -> list[dict[str, Any]]:
    out = tmp_path / "spans.jsonl"
    for role in ("agent", "operator", "worker"):
        _role(out, url, role, "refund-1")
    return [json.loads(line) for line in out.read_text().splitlines()]


def _one(spans: list[dict[str, Any]], name: str, role: str) -> dict[str, Any]:
    (found,) = [s for s in spans if s["name"] == name and s["role"] == role]
    return found


def _links_to(span: dict[str, Any], target: dict[str, Any]) -> bool:
    return {"trace_id": target["trace_id"], "span_id": target["span_id"]} in span["links"]


@pytest.mark.parametrize("backend", ["postgres", "redis"])
def test_request_decision_and_resume_are_linked(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "postgres":
        base, schema = request.getfixturevalue("pg_schema")
        url = url_with(base, "schema", schema)
    else:
        base, prefix = request.getfixturevalue("redis_prefix")
        url = url_with(base, "prefix", prefix)
    spans = _story(tmp_path, url)
    assert len({s["pid"] for s in spans}) == 3
    assert all(s["scope"] == "langgraph_durable" for s in spans)
    asked = _one(spans, "approval.request", "agent")
    decided = _one(spans, "approval.decide", "operator")
    resumed = _one(spans, "approval.resume", "worker")
    assert asked["attributes"]["langgraph.thread_id"] == "refund-1"
    assert decided["attributes"]["langgraph_durable.decider"] == "alice"
    assert decided["attributes"]["langgraph_durable.deferred"] is True
    assert _links_to(decided, asked) and _links_to(resumed, asked)
    # three traces, one story: each later one points back at the request
    assert len({asked["trace_id"], decided["trace_id"], resumed["trace_id"]}) == 3
    # the resumed run's work is inside the worker's resume span
    answer = _one(spans, "approval.answer", "worker")
    assert answer["trace_id"] == resumed["trace_id"]
    sweep = _one(spans, "sweeper.pass", "worker")
    assert resumed["parent_id"] == sweep["span_id"]
    system = "postgresql" if backend == "postgres" else "redis"
    puts = [s for s in spans if s["name"] == "checkpoint.put" and s["role"] == "worker"]
    assert puts and all(s["attributes"]["db.system"] == system for s in puts)
    assert any(s["trace_id"] == resumed["trace_id"] for s in puts)
