"""Runs whose process was SIGKILLed are found and resumed by recovery workers in other processes."""

from __future__ import annotations

import json
import signal
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from langgraph_durable.checkpointers._leases import PARKED, RECOVERED_KEY, RECOVERIES_KEY, RELEASED
from tests._backends import BACKENDS
from tests._lease_support import builder, expected_final, leasing_saver, settings, spawn, where_of

LEASE, BEAT = 1.0, 0.25


def _args(backend: str, where: dict[str, str], **more: Any) -> dict[str, Any]:
    return {"backend": backend, "where": where, "lease": LEASE, "beat": BEAT, **more}


def _wait_until(cond: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _kill_mid_run(
    backend: str, where: dict[str, str], graph: Any, threads: list[str], at_least: int, **env: str
) -> None:
    """Start runs of ``threads`` in a child, SIGKILL it once each reached ``at_least`` steps."""
    child = spawn("run", _args(backend, where, threads=threads), **env)

    store = graph.checkpointer.run_leases.store

    def far_enough() -> bool:
        # cheap check first: every run has taken its lease. Live or already
        # expired: under load a heartbeat renewing 100 leases can come later
        # than a 1 s lease lasts, and a run whose lease lapsed is mid-run all
        # the same (the kill makes it an orphan either way)
        counts = store.lease_counts(now=datetime.now(timezone.utc))
        if counts.running + counts.orphaned < len(threads):
            time.sleep(0.2)
            return False
        for t in threads:
            values = graph.get_state({"configurable": {"thread_id": t}}).values
            if values.get("n", 0) < at_least:
                return False
        return True

    try:
        # a bound, not a pause: at load 8 on two cores 100 runs take a while to start
        _wait_until(far_enough, 150, "the runs to get going")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def _collect(proc: Any) -> tuple[list[str], list[str], int]:
    out, _ = proc.communicate(timeout=180)
    recovered: list[str] = []
    parked: list[str] = []
    for line in out.splitlines():
        event = json.loads(line)
        recovered += event["recovered"]
        parked += event["parked"]
    return recovered, parked, proc.returncode


@pytest.mark.parametrize("backend", BACKENDS)
def test_sigkilled_run_is_resumed_by_another_process_with_the_same_final_state(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(LEASE, BEAT)) as saver:
        graph = builder().compile(checkpointer=saver)
        store = saver.run_leases.store
        _kill_mid_run(backend, where, graph, ["k1"], at_least=8, LEASE_TEST_DELAY="0.05")
        killed_at = graph.get_state({"configurable": {"thread_id": "k1"}}).values["n"]
        assert killed_at < 20, "the kill landed mid-run"
        assert store.get_lease(thread_id="k1").state == "running"

        recovered, parked, rc = _collect(spawn("recover", _args(backend, where, until=30)))
        assert rc == 0
        assert (recovered, parked) == (["k1"], [])

        state = graph.get_state({"configurable": {"thread_id": "k1"}})
        assert state.values == expected_final()
        assert state.next == ()
        assert state.metadata[RECOVERED_KEY] is True
        assert state.metadata[RECOVERIES_KEY] == 1
        record = store.get_lease(thread_id="k1")
        assert (record.state, record.reason, record.recoveries) == (RELEASED, "finished", 1)

        # the same graph run without a kill ends in the same state
        clean = graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "clean"}})
        assert clean == state.values


@pytest.mark.timeout(600)  # 100 runs killed and recovered by 4 processes, at any load
@pytest.mark.parametrize("backend", BACKENDS)
def test_four_workers_recover_each_of_100_orphans_exactly_once(
    backend: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("LEASE_TEST_STEPS", "4")  # children inherit it
    where = where_of(backend, request)
    threads = [f"o{i:03d}" for i in range(100)]
    with leasing_saver(backend, where, settings(LEASE, BEAT)) as saver:
        graph = builder().compile(checkpointer=saver)
        store = saver.run_leases.store
        _kill_mid_run(backend, where, graph, threads, at_least=1, LEASE_TEST_HANG_AT="2")

        # the four begin together, once each has started up, so the work is shared at any load
        start = tmp_path / "start"
        args = _args(backend, where, until=150, batch=10, start_file=str(start))
        workers = [spawn("recover", args) for _ in range(4)]
        _wait_until(lambda: len(list(tmp_path.glob("start.*"))) == 4, 150, "four workers ready")
        start.touch()
        results = [_collect(w) for w in workers]
        assert [rc for _, _, rc in results] == [0, 0, 0, 0]
        recovered = [t for r, _, _ in results for t in r]
        assert sorted(recovered) == threads, "every orphan recovered exactly once"
        assert sum(1 for r, _, _ in results if r) >= 2, "the work was shared"
        for t in threads:
            record = store.get_lease(thread_id=t)
            assert (record.state, record.recoveries) == (RELEASED, 1)
            assert graph.get_state({"configurable": {"thread_id": t}}).values == expected_final()


@pytest.mark.parametrize("backend", BACKENDS)
def test_thread_that_kills_every_worker_is_parked_and_others_recover(
    backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEASE_TEST_STEPS", "6")
    where = where_of(backend, request)
    threads = ["poison", "a", "b", "c", "d", "e"]
    with leasing_saver(backend, where, settings(LEASE, BEAT)) as saver:
        graph = builder().compile(checkpointer=saver)
        store = saver.run_leases.store
        _kill_mid_run(backend, where, graph, threads, at_least=2, LEASE_TEST_HANG_AT="3")
        store.record_lease_error(
            thread_id="poison",
            owner=store.get_lease(thread_id="poison").owner,
            error="MemoryError: out of memory",
        )

        recovered: list[str] = []
        parked: list[str] = []
        crashes = 0
        for _ in range(10):
            r, p, rc = _collect(
                spawn(
                    "recover",
                    _args(backend, where, until=30, max_recoveries=2, batch=1),
                    LEASE_TEST_POISON="poison",
                )
            )
            recovered += r
            parked += p
            if rc == 0:
                break
            assert rc == 3, "only the poison thread kills a worker"
            crashes += 1
        assert crashes == 2, "two recoveries of the poison thread died, then it was parked"
        assert parked == ["poison"]
        assert sorted(recovered) == ["a", "b", "c", "d", "e"]
        record = store.get_lease(thread_id="poison")
        assert (record.state, record.attempts, record.recoveries) == (PARKED, 2, 2)
        assert record.last_error == "MemoryError: out of memory"
        for t in "abcde":
            assert graph.get_state({"configurable": {"thread_id": t}}).values == expected_final()
            assert store.get_lease(thread_id=t).recoveries == 1
