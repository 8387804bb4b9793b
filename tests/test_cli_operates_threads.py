"""Operators inspect, approve and reject threads from the command line, on both backends."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests._backends import BACKENDS
from tests._cli_support import run_cli_here


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli_here(*args)


def _agent(url: str, thread: str) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "langgraph_durable.interrupts._demo",
            "agent",
            "--url",
            url,
            "--thread",
            thread,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr


@pytest.fixture(params=BACKENDS)
def storage_url(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_database"))
    url, prefix = request.getfixturevalue("redis_prefix")
    return f"{url}{'&' if '?' in url else '?'}prefix={prefix}"


def test_inspect_approve_and_reject(storage_url: str) -> None:
    graph = "langgraph_durable.interrupts._demo:build_graph"
    _agent(storage_url, "cli-1")
    shown = _cli("inspect", "cli-1", "--url", storage_url)
    assert shown.returncode == 0, shown.stderr
    assert "approval" in shown.stdout and "waiting" in shown.stdout
    assert "compute_refund" in shown.stdout and "UTC" in shown.stdout
    assert "state: waiting for approval until" in shown.stdout
    status = _cli("status", "--url", storage_url)
    assert status.returncode == 0, status.stderr
    assert "approvals: 1 waiting, 0 overdue" in status.stdout
    assert "runs: 0 running, 0 orphaned, 0 parked" in status.stdout

    alice = ("--by", "alice", "--roles", "ops")
    done = _cli("approve", "cli-1", "--url", storage_url, "--graph", graph, *alice)
    assert done.returncode == 0, done.stderr
    assert "the run completed" in done.stdout
    again = _cli("reject", "cli-1", "--url", storage_url, "--graph", graph, "--by", "bob")
    assert again.returncode == 1
    assert len(again.stderr.strip().splitlines()) == 1 and "alice" in again.stderr

    shown = _cli("inspect", "cli-1", "--url", storage_url)
    assert "approved by alice" in shown.stdout
    assert "state: finished" in shown.stdout

    _agent(storage_url, "cli-2")
    outsider = _cli("approve", "cli-2", "--url", storage_url, "--graph", graph, "--by", "eve")
    assert outsider.returncode == 1 and "may not decide" in outsider.stderr
    rejected = _cli(
        "reject", "cli-2", "--url", storage_url, "--graph", graph, "--by", "bob", "--roles", "ops"
    )
    assert rejected.returncode == 0, rejected.stderr


def test_unknown_thread_is_one_line(pg_database: str) -> None:
    not_set_up = _cli("inspect", "no-such-thread", "--url", pg_database)
    assert not_set_up.returncode == 1
    assert len(not_set_up.stderr.strip().splitlines()) == 1
    assert "run `langgraph-durable setup` with this --url first" in not_set_up.stderr
    assert _cli("setup", "--url", pg_database).returncode == 0
    out = _cli("inspect", "no-such-thread", "--url", pg_database)
    assert out.returncode == 1
    assert out.stderr.strip() == "error: unknown thread 'no-such-thread': no checkpoints stored"


def test_status_shows_approval_health_and_sweep_runs_once(storage_url: str) -> None:
    graph = "langgraph_durable.interrupts._demo:build_graph"
    _agent(storage_url, "cli-3")
    if storage_url.startswith("postgres"):  # status needs the migrations protocol
        status = _cli("status", "--url", storage_url)
        assert status.returncode == 0, status.stderr
        assert "approvals: 1 waiting, 0 overdue" in status.stdout
    swept = _cli("sweep", "--url", storage_url, "--graph", graph, "--once")
    assert swept.returncode == 0, swept.stderr
    assert "resolved 0 approval(s)" in swept.stdout
    bad = _cli("sweep", "--url", storage_url, "--graph", "nowhere:graph", "--once")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1


def test_approve_without_graph_records_and_the_sweep_resumes(storage_url: str) -> None:
    graph = "langgraph_durable.interrupts._demo:build_graph"
    _agent(storage_url, "cli-4")
    # an operator's process without the graph: the decision is recorded, not applied
    recorded = _cli(
        "approve",
        "cli-4",
        "--url",
        storage_url,
        "--by",
        "alice",
        "--roles",
        "ops",
        "--comment",
        "checked",
    )
    assert recorded.returncode == 0, recorded.stderr
    assert "decision recorded" in recorded.stdout
    shown = _cli("inspect", "cli-4", "--url", storage_url)
    assert "state: waiting for approval" in shown.stdout
    assert "approved by alice" in shown.stdout
    late = _cli("reject", "cli-4", "--url", storage_url, "--by", "bob", "--roles", "ops")
    assert late.returncode == 1 and "alice" in late.stderr
    # the worker's sweep resumes it at once (long before the deadline)
    # on an event loop (the async saver), the resumed run written once (durability "exit")
    swept = _cli(
        "sweep",
        "--url",
        storage_url,
        "--graph",
        graph,
        "--once",
        "--concurrency",
        "2",
        "--durability",
        "exit",
        "--async",
    )
    assert swept.returncode == 0, swept.stderr
    assert "resolved 1 approval(s)" in swept.stdout
    shown = _cli("inspect", "cli-4", "--url", storage_url)
    assert "state: finished" in shown.stdout
