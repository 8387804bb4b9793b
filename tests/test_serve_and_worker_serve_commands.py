"""``langgraph-durable serve`` and ``worker --serve`` as real processes on real storage."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._approval_savers import open_sync, saver_url
from tests._serve_process import CLI, HTTP_TIMEOUT, ROOT, read_until
from tests._serve_process import start as _start
from tests._serve_process import stop as _stop
from tests._serve_process import tokens_file as _tokens
from tests._servers import free_port, url_with
from tests._service_graphs import graph


# a process start each: the API suites cover both backends in-process, so Redis runs with -m slow
@pytest.fixture(params=["postgres", pytest.param("redis", marks=pytest.mark.slow)])
def storage(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    url, options = saver_url(request, request.param)
    key = "schema" if request.param == "postgres" else "prefix"
    with open_sync(request.param, url, options) as saver:
        yield url_with(url, key, options[key]), saver


def test_serve_decides_as_the_token_holder(storage: tuple[str, Any], tmp_path: Path) -> None:
    url, saver = storage
    g = graph(saver)
    g.invoke({"amount": 9}, {"configurable": {"thread_id": "cli-1"}})
    spec = "tests._service_graphs:graph"
    proc, base = _start(
        ["serve", "--url", url, "--graph", spec, "--tokens", str(_tokens(tmp_path))]
    )
    try:
        alice = {"Authorization": "Bearer alice-token-0001"}
        assert httpx.get(f"{base}/api/approvals", timeout=HTTP_TIMEOUT).status_code == 401
        listed = httpx.get(f"{base}/api/approvals", headers=alice, timeout=HTTP_TIMEOUT).json()[
            "approvals"
        ]
        assert [a["thread_id"] for a in listed] == ["cli-1"]
        done = httpx.post(
            f"{base}/api/threads/cli-1/decision",
            json={"decision": "approve"},
            headers=alice,
            timeout=HTTP_TIMEOUT,
        )
        assert done.status_code == 200, done.text
        assert done.json()["decision"]["by"] == "alice"
    finally:
        _stop(proc)
    state = g.get_state({"configurable": {"thread_id": "cli-1"}})
    assert state.values["approved"] is True
    assert state.values["done"] == ["act"]


def test_serve_refuses_to_start_without_authentication() -> None:
    # refused before the storage is opened: nothing listens at this address
    url = f"redis://127.0.0.1:{free_port()}"
    out = subprocess.run(
        [*CLI, "serve", "--url", url, "--graph", "tests._service_graphs:graph"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 1
    assert "--tokens FILE, or --trust-proxy-header" in out.stderr


def test_worker_serve_sweeps_and_serves_in_one_process(
    storage: tuple[str, Any], tmp_path: Path
) -> None:
    url, saver = storage
    graph(saver).invoke({"amount": 3}, {"configurable": {"thread_id": "cli-w"}})
    args = ["worker", "--url", url, "--graph", "tests._service_graphs:graph", "--interval", "0.2"]
    proc, base = _start([*args, "--serve", "--tokens", str(_tokens(tmp_path))])
    out = ""
    try:
        health = httpx.get(
            f"{base}/api/health",
            headers={"Authorization": "Bearer alice-token-0001"},
            timeout=HTTP_TIMEOUT,
        ).json()
        assert health["waiting"] == 1
        # the service answers before the first pass ends: wait for its health line
        out = read_until(proc, "swept=")
    finally:
        out += _stop(proc)
    assert "approval service on http://127.0.0.1:" in out
    assert "swept=0 waiting=1" in out


def test_the_guides_walkthrough_approves_the_demos_refund(
    pg_schema: tuple[str, str], tmp_path: Path
) -> None:
    """docs/guides/approval-service.md: the demo's agent pauses, serve, alice approves."""
    url = url_with(pg_schema[0], "schema", pg_schema[1])
    env = {**os.environ, "LANGGRAPH_DURABLE_URL": url}
    agent = [sys.executable, "-m", "langgraph_durable.interrupts._demo", "agent"]
    subprocess.run([*agent, "--thread", "refund-1"], env=env, check=True, timeout=120)
    spec = "langgraph_durable.interrupts._demo:build_graph"
    proc, base = _start(
        ["serve", "--url", url, "--graph", spec, "--tokens", str(_tokens(tmp_path))]
    )
    try:
        done = httpx.post(
            f"{base}/api/threads/refund-1/decision",
            json={"decision": "approve", "comment": "customer verified"},
            headers={"Authorization": "Bearer alice-token-0001"},
            timeout=HTTP_TIMEOUT,
        )
        assert done.status_code == 200, done.text
        detail = httpx.get(
            f"{base}/api/threads/refund-1",
            headers={"Authorization": "Bearer alice-token-0001"},
            timeout=HTTP_TIMEOUT,
        ).json()
    finally:
        _stop(proc)
    assert detail["state"]["state"] == "finished"
    assert detail["decisions"][0]["by"] == "alice"
    assert detail["decisions"][0]["comment"] == "customer verified"
