"""`langgraph-durable worker` recovers orphans; thread_state tells the states apart."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.interrupts import parked_threads, run_health, running_threads, thread_state
from tests._backends import POSTGRES
from tests._lease_support import StepState, builder, expected_final, leasing_saver, settings, spawn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _wait_for(cond: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_states_and_worker_command_recover_an_orphan(pg_database: str) -> None:
    where = {"url": pg_database, "schema": "public"}
    deadline = datetime.now(timezone.utc) + timedelta(hours=1)
    with leasing_saver(POSTGRES, where, settings(1, 0.25)) as saver:
        graph = builder().compile(checkpointer=saver)

        # finished
        graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "done"}})

        # waiting on a marked interrupt with a deadline
        def ask(state: StepState) -> dict[str, Any]:
            interrupt({WAIT_KEY: wait_marker("approval", deadline), "q": "ok?"})
            return {}

        g: StateGraph[Any] = StateGraph(StepState)
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        g.compile(checkpointer=saver).invoke(
            {"n": 0, "trace": []}, {"configurable": {"thread_id": "wait"}}
        )

        # failed
        def boom(state: StepState) -> dict[str, Any]:
            raise RuntimeError("bad input")

        g2: StateGraph[Any] = StateGraph(StepState)
        g2.add_node("boom", boom)
        g2.add_edge(START, "boom")
        with contextlib.suppress(RuntimeError):
            g2.compile(checkpointer=saver).invoke(
                {"n": 0, "trace": []}, {"configurable": {"thread_id": "fail"}}
            )

        # running in another process, then orphaned by SIGKILL
        child = spawn(
            "run",
            {"backend": POSTGRES, "where": where, "lease": 2, "beat": 0.25, "threads": ["orphan"]},
            LEASE_TEST_HANG_AT="3",
        )
        _wait_for(
            lambda: (
                thread_state(saver, "orphan").state == "running"
                and graph.get_state({"configurable": {"thread_id": "orphan"}}).values.get("n", 0)
                >= 2
            )
        )
        running = thread_state(saver, "orphan")
        assert running.owner and running.owner.split(":")[1] == str(child.pid)
        assert running.age is not None and running.age >= timedelta(0)
        assert [t.thread_id for t in running_threads(saver)] == ["orphan"]
        child.send_signal(signal.SIGKILL)
        child.wait()
        _wait_for(lambda: thread_state(saver, "orphan").state == "orphaned", timeout=10)

        states = {t: thread_state(saver, t).state for t in ("done", "wait", "fail", "nope")}
        assert states == {
            "done": "finished",
            "wait": "waiting",
            "fail": "failed",
            "nope": "unknown",
        }
        waiting = thread_state(saver, "wait")
        assert (waiting.deadline, waiting.waiting_for) == (deadline, ("approval",))
        assert thread_state(saver, "fail").last_error == "RuntimeError: bad input"
        health = run_health(saver)
        assert (health.running, health.orphaned, health.parked) == (0, 1, 0)

        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "langgraph_durable.interrupts.cli",
                "worker",
                "--url",
                pg_database,
                "--graph",
                "tests._lease_support:CLI_GRAPH",
                "--once",
                "--lease",
                "1",
                "--heartbeat",
                "0.25",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        assert "swept=0 waiting=1 overdue=0 running=0 orphaned=0 recovered=1 parked=0" in out
        assert thread_state(saver, "orphan").state == "finished"
        assert thread_state(saver, "orphan").recoveries == 1
        assert graph.get_state({"configurable": {"thread_id": "orphan"}}).values == (
            expected_final()
        )
        assert parked_threads(saver) == []
