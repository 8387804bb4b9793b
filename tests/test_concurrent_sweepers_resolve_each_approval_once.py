"""Four sweeper processes over many due approvals: each thread resumed exactly once.

The default run uses 100 approvals per backend; the 500-approval variant of the
issue is marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from langgraph_durable.interrupts import CLOCK_CONFIG_KEY, approval_health, pending_approvals
from tests._approval_graphs import T0, FakeClock, review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("n", [100, pytest.param(500, marks=pytest.mark.slow)])
@pytest.mark.parametrize("backend", BACKENDS)
def test_four_sweeper_processes_resume_each_approval_once(
    request: pytest.FixtureRequest, backend: str, pg_schema: tuple[str, str], n: int
) -> None:
    N = n
    url, options = saver_url(request, backend)
    effects_url, effects_schema = pg_schema
    with psycopg.connect(effects_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE TABLE {} (thread_id TEXT, amount INTEGER)").format(
                sql.Identifier(effects_schema, "effects")
            )
        )
    clock = FakeClock()
    with open_sync(backend, url, options) as saver:
        graph = review_graph(saver)
        for i in range(N):
            graph.invoke(
                {"amount": i}, {"configurable": {"thread_id": f"t{i}", CLOCK_CONFIG_KEY: clock}}
            )
        assert approval_health(saver, clock=clock).waiting == N
    now = (T0 + timedelta(hours=1)).isoformat()
    args: dict[str, Any] = {
        "backend": backend,
        "url": url,
        "options": options,
        "thread_id": "-",
        "now": now,
        "effects_table": f"{effects_schema}.effects",
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EFFECTS_URL": effects_url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests._approval_worker", "sweep_reviews", json.dumps(args)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    resolved = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-3000:]
        resolved.append(json.loads(out.strip().splitlines()[-1])["resolved"])
    assert sum(resolved) == N
    with psycopg.connect(effects_url, autocommit=True) as conn:
        rows = conn.execute(
            sql.SQL("SELECT count(*), count(DISTINCT amount) FROM {}").format(
                sql.Identifier(effects_schema, "effects")
            )
        ).fetchone()
    assert rows == (N, N)
    with open_sync(backend, url, options) as saver:
        assert pending_approvals(saver) == []
