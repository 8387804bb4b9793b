"""A batch's crash story across real processes: partial decisions survive a SIGKILL.

Process A starts a 5-order batch and decides three orders (o1, o2 approve; o3
reject), then dies by SIGKILL: either killed by the test while idle with its
connections open, or inside the ``decide`` call of o3, after its
compare-and-set and before the call checks whether the batch is complete. Two
hours later (injected clock) process B decides o4 (approve) and o5 (reject):
the run ends with 3 shipped and 2 refunded, each item with the right decider
and decision time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from langgraph_durable.interrupts import pending_approvals
from tests._approval_graphs import T0, order_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS

ROOT = Path(__file__).resolve().parent.parent


def worker(cmd: str, args: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests._batch_worker", cmd, json.dumps(args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def kill_after_decisions(args: dict[str, Any]) -> None:
    """Process A: decide o1, o2, o3, then SIGKILL it (it is still running)."""
    proc = worker("start_and_decide", args)
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(json.loads(line))
            if lines[-1].get("decided"):
                break
        assert lines == [{"applied": ["o1", "o2"]}, {"applied": ["o3"], "decided": True}], (
            lines,
            proc.stderr.read() if proc.poll() is not None and proc.stderr else "",
        )
        assert proc.poll() is None, "process A exited on its own"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def killed_inside_decide(args: dict[str, Any]) -> None:
    """Process A: decide o1, o2; die inside ``decide({o3: reject})`` after its CAS."""
    proc = worker("start_and_decide", {**args, "kill_inside": True})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, out, err[-3000:])
    assert [json.loads(line) for line in out.splitlines()] == [{"applied": ["o1", "o2"]}]


@pytest.mark.parametrize("kill", ["between_calls", "inside_a_call"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_batch_decisions_survive_sigkill(
    request: pytest.FixtureRequest, backend: str, kill: str
) -> None:
    url, options = saver_url(request, backend)
    base = {"backend": backend, "url": url, "options": options, "thread_id": "orders-1"}
    (kill_after_decisions if kill == "between_calls" else killed_inside_decide)(
        {**base, "now": T0.isoformat()}
    )

    # what the dead process left: three items decided by alice, two open, still waiting
    with open_sync(backend, url, options) as saver:
        [item] = pending_approvals(saver)
        assert item.kind == "batch" and item.thread_id == "orders-1"
        assert [(i.key, i.decided, i.by) for i in item.items] == [
            ("o1", True, "alice"),
            ("o2", True, "alice"),
            ("o3", True, "alice"),
            ("o4", False, None),
            ("o5", False, None),
        ]

    later = T0 + timedelta(hours=2)
    proc = worker(
        "decide",
        {**base, "now": later.isoformat(), "by": "bob", "decisions": {"o4": True, "o5": False}},
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    done = json.loads(out.strip().splitlines()[-1])
    assert done["applied"] == ["o4", "o5"] and done["completed"] is True

    with open_sync(backend, url, options) as saver:
        values = order_graph(saver).get_state({"configurable": {"thread_id": "orders-1"}}).values
        assert pending_approvals(saver) == []
    assert [o["id"] for o in values["to_ship"]] == ["o1", "o2", "o4"]
    assert [o["id"] for o in values["to_refund"]] == ["o3", "o5"]
    assert values["timed_out"] == []
    assert {k: v[:2] for k, v in values["deciders"].items()} == {
        "o1": ["alice", T0.isoformat()],
        "o2": ["alice", T0.isoformat()],
        "o3": ["alice", T0.isoformat()],
        "o4": ["bob", later.isoformat()],
        "o5": ["bob", later.isoformat()],
    }
