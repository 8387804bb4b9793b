"""The seed story and crash recovery, across real processes on real storage.

A 15-step workflow pauses for approval and its process exits; twenty minutes
(of injected clock) later another process approves and the run continues with
every step's state intact. A sweeper SIGKILLed right after its claim (nothing
decided) or mid-resume (decided, node running) has its claim taken over after the
lease and the job finished exactly once; with ``durability="exit"`` the steps after
the approval that ran before the kill run again (what that opt-in costs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from langgraph_durable.interrupts import ApprovalSweeper, pending_approvals
from tests._approval_graphs import T0
from tests._approval_savers import open_sync, saver_url
from tests._approval_worker import APPROVAL_STEP, STEPS, Clock, build

# through PgBouncer the same kills prove the same thing once more: a stress variant
DURABLE = ["postgres", pytest.param("pgbouncer", marks=pytest.mark.slow), "redis"]
ROOT = Path(__file__).resolve().parent.parent


def run_worker(cmd: str, args: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "tests._approval_worker", cmd, json.dumps(args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", DURABLE)
def test_seed_story_approval_after_the_process_exited(
    request: pytest.FixtureRequest, backend: str
) -> None:
    url, options = saver_url(request, backend)
    base = {"backend": backend, "url": url, "options": options, "thread_id": "seed"}
    started = run_worker("start", {**base, "now": T0.isoformat()})
    assert started == {"paused": True, "steps": APPROVAL_STEP - 1}
    with open_sync(backend, url, options) as saver:
        [item] = pending_approvals(saver)
        assert item.request == {"step": APPROVAL_STEP, "summary": list(range(1, APPROVAL_STEP))}
        assert item.deadline == T0 + timedelta(hours=1)
    later = (T0 + timedelta(minutes=20)).isoformat()
    done = run_worker("approve", {**base, "now": later, "by": "operator"})
    steps = done["steps"]
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    # every step saw all the work before it: nothing was lost or redone
    assert [s["seen"] for s in steps] == list(range(STEPS))
    assert done["decision"]["by"] == "operator" and done["decision"]["approved"] is True
    assert done["decision"]["at"].startswith(later[:16])
    with open_sync(backend, url, options) as saver:
        assert pending_approvals(saver) == []


@pytest.fixture
def effects(pg_schema: tuple[str, str]) -> tuple[str, str]:
    """``(url, "schema.table")``: a Postgres table counting side effects."""
    url, schema = pg_schema
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE TABLE {} (n INTEGER)").format(sql.Identifier(schema, "effects"))
        )
    return url, f"{schema}.effects"


def count_effects(effects: tuple[str, str]) -> int:
    schema, name = effects[1].split(".")
    with psycopg.connect(effects[0], autocommit=True) as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, name))
        ).fetchone()
    return int(row[0]) if row else 0


# (durability, the step the sweeper is killed in, side effects of step 9 at the end).
# With durability="exit" nothing of a resume is stored until it ends, so the sweeper
# that takes over re-runs every step after the approval: killed in step 12, step 9's
# effect happens twice (docs/guides/approvals.md: the opt-in's price). Killed in the approval step
# itself, nothing ran twice either way.
KILLS = [(None, APPROVAL_STEP, 1), ("exit", APPROVAL_STEP, 1), ("exit", 12, 2)]


@pytest.mark.parametrize(("durability", "hang_step", "effects_after"), KILLS)
@pytest.mark.parametrize("backend", DURABLE)
def test_sweeper_killed_mid_resume_is_taken_over_after_the_lease(
    request: pytest.FixtureRequest,
    backend: str,
    durability: str | None,
    hang_step: int,
    effects_after: int,
    effects: tuple[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, options = saver_url(request, backend)
    base = {"backend": backend, "url": url, "options": options, "thread_id": "k1"}
    run_worker("start", {**base, "now": T0.isoformat()})
    marker = tmp_path / "in-review"
    due = T0 + timedelta(hours=2)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests._approval_worker",
            "sweep",
            json.dumps(
                {
                    **base,
                    "now": due.isoformat(),
                    "hang_marker": str(marker),
                    "hang_step": hang_step,
                    "durability": durability,
                    "lease_s": 60,
                    "effects_table": effects[1],
                }
            ),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "EFFECTS_URL": effects[0]},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "worker never resumed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # claimed, decided, mid-resume
    finally:
        proc.wait(timeout=30)
    monkeypatch.setenv("EFFECTS_URL", effects[0])
    with open_sync(backend, url, options) as saver:
        graph = build(saver, effects_table=effects[1])
        if hang_step > APPROVAL_STEP:
            assert count_effects(effects) == 1  # step 9 ran before the kill
        early = ApprovalSweeper(
            graph,
            clock=Clock((due + timedelta(seconds=30)).isoformat()),
            lease=timedelta(seconds=60),
            durability=durability,
        )
        assert early.run_once() == 0  # the dead sweeper's lease still holds
        late = ApprovalSweeper(
            graph,
            clock=Clock((due + timedelta(seconds=61)).isoformat()),
            lease=timedelta(seconds=60),
            durability=durability,
        )
        assert late.run_once() == 1
        assert late.run_once() == 0
        values = graph.get_state({"configurable": {"thread_id": "k1"}}).values
        assert pending_approvals(saver) == []
    assert [s["step"] for s in values["steps"]] == list(range(1, STEPS + 1))
    assert [s["seen"] for s in values["steps"]] == list(range(STEPS))
    assert values["decision"]["timed_out"] is True and values["decision"]["approved"] is False
    assert count_effects(effects) == effects_after


@pytest.mark.parametrize("backend", DURABLE)
def test_sweeper_killed_between_claim_and_decision_is_taken_over_after_the_lease(
    request: pytest.FixtureRequest,
    backend: str,
    effects: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, options = saver_url(request, backend)
    base = {"backend": backend, "url": url, "options": options, "thread_id": "k2"}
    run_worker("start", {**base, "now": T0.isoformat()})
    due = T0 + timedelta(hours=2)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests._approval_worker",
            "sweep",
            json.dumps(
                {
                    **base,
                    "now": due.isoformat(),
                    "kill_before_decision": True,
                    "lease_s": 60,
                    "effects_table": effects[1],
                }
            ),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "EFFECTS_URL": effects[0]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    monkeypatch.setenv("EFFECTS_URL", effects[0])
    with open_sync(backend, url, options) as saver:
        graph = build(saver, effects_table=effects[1])
        [item] = pending_approvals(saver)  # still waiting: claimed, not decided
        assert item.thread_id == "k2"
        early = ApprovalSweeper(
            graph,
            clock=Clock((due + timedelta(seconds=30)).isoformat()),
            lease=timedelta(seconds=60),
        )
        assert early.run_once() == 0  # the dead sweeper's claim still holds
        late = ApprovalSweeper(
            graph,
            clock=Clock((due + timedelta(seconds=61)).isoformat()),
            lease=timedelta(seconds=60),
        )
        assert late.run_once() == 1
        assert late.run_once() == 0
        values = graph.get_state({"configurable": {"thread_id": "k2"}}).values
        assert pending_approvals(saver) == []
    assert [s["step"] for s in values["steps"]] == list(range(1, STEPS + 1))
    assert values["decision"]["timed_out"] is True and values["decision"]["by"] == "system"
    assert count_effects(effects) == 1
