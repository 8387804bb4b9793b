"""``langgraph-durable worker`` delivers notifications across crashes and restarts.

Real worker processes: one is SIGKILLed while the receiver holds its POST
(after the send, before the mark) and the next worker sends the event again
with the same id; a receiver that is down while one worker runs gets every
event from the worker started after it came up. Signatures verify throughout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_durable.interrupts import approve
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._cli_graphs import build
from tests._parts import part_of
from tests._servers import free_port, url_with
from tests._webhook_receiver import Receiver

SECRET = "worker-secret"
GRAPH = "tests._cli_graphs:build"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=BACKENDS)
def area(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    key = "schema" if "schema" in options else "prefix"
    with open_sync(request.param, url, options) as saver:
        yield saver, url_with(url, key, options[key])


def worker(url: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "langgraph_durable.interrupts.cli",
        "worker",
        "--url",
        url,
        "--graph",
        GRAPH,
        "--webhook-secret",
        SECRET,
        *extra,
    ]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_worker_killed_between_post_and_mark_resends_the_same_id(area: Any) -> None:
    saver, url = area
    build(saver).invoke({"amount": 7}, {"configurable": {"thread_id": "t"}})
    receiver = Receiver(hold=True).start()
    try:
        proc = subprocess.Popen(
            worker(url, "--webhook", receiver.url, "--notify-lease", "1", "--interval", "0.2"),
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            receiver.wait_for(1, timeout=60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        receiver.release()
        assert part_of(saver, "outbox").notification_counts().pending == 1  # claimed, never marked
        time.sleep(1.2)  # the dead worker's claim expires
        out = subprocess.run(
            worker(url, "--webhook", receiver.url, "--once"),
            env=env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert "notified=1" in out.stdout
    finally:
        receiver.stop()
    assert len(receiver.requests) == 2
    assert len(receiver.unique()) == 1  # the same event, the same id
    assert receiver.all_signed(SECRET)
    assert part_of(saver, "outbox").notification_counts().pending == 0


def test_a_receiver_down_until_after_a_worker_restart_gets_every_event(
    area: Any, tmp_path: Path
) -> None:
    saver, url = area
    graph = build(saver)
    for t in ("a", "b", "c"):
        graph.invoke({"amount": 1}, {"configurable": {"thread_id": t}})
    approve(graph, {"configurable": {"thread_id": "b"}}, by="alice", roles=["ops"])
    port = free_port()
    config = tmp_path / "notify.json"
    config.write_text(
        json.dumps(
            {
                "webhooks": [{"url": f"http://127.0.0.1:{port}/hook", "secret": SECRET}],
                "base_delay": 0.05,
                "max_delay": 0.05,
            }
        )
    )
    down = subprocess.run(
        worker(url, "--notify-config", str(config), "--once"),
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert down.returncode == 0, down.stderr
    # the first POST fails; the other three wait for the next pass, unsent
    assert "notify_failed=1 notify_held=3" in down.stdout and "notify_pending=4" in down.stdout
    receiver = Receiver(port=port).start()
    try:
        time.sleep(0.1)  # past the retry time
        up = subprocess.run(
            worker(url, "--notify-config", str(config), "--once"),
            env=env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        receiver.stop()
    assert up.returncode == 0, up.stderr
    assert "notified=4" in up.stdout and "notify_pending=0" in up.stdout
    kinds = sorted((r.event["thread_id"], r.event["kind"]) for r in receiver.requests)
    assert kinds == [("a", "requested"), ("b", "decided"), ("b", "requested"), ("c", "requested")]
    assert receiver.all_signed(SECRET)
