"""A SIGKILLed run's lease does not outlive the run that resumed and ended the thread.

After a crash, a fresh process may resume the thread before the killed run's
lease expires. That run must not leave the thread looking "running" once it
has finished or paused, and no recovery worker may then resume the finished
or waiting thread with ``invoke(None)``.

* Same host: the resuming run sees the killed owner's process is gone, takes
  the lease over at once and releases it at its end.
* Another host (death cannot be proved): the thread still reads as finished
  or waiting (the checkpoint is the truth), the resuming process clears the
  dead lease from its heartbeat once the holder missed a heartbeat, and a
  recovery worker releases it instead of resuming it.
"""

from __future__ import annotations

import signal
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langgraph_durable.checkpointers._leases import RELEASED, RUNNING
from langgraph_durable.interrupts import RecoveryWorker, thread_state
from tests._backends import BACKENDS
from tests._lease_support import builder, expected_final, leasing_saver, settings, spawn, where_of
from tests._parts import part_of

ASK_AT = 6


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _kill_mid_run(
    backend: str,
    where: dict[str, str],
    graph: Any,
    thread_id: str,
    lease: float,
    beat: float,
    **env: str,
) -> None:
    """Run the thread in a child that hangs in step 3; SIGKILL it there."""
    child = spawn(
        "run",
        {"backend": backend, "where": where, "lease": lease, "beat": beat, "threads": [thread_id]},
        LEASE_TEST_HANG_AT="3",
        **env,
    )
    store = graph.checkpointer.run_leases.store
    try:
        deadline = time.monotonic() + 60
        while True:
            record = store.get_lease(thread_id=thread_id)
            n = graph.get_state(_config(thread_id)).values.get("n", 0)
            if record is not None and record.state == RUNNING and n >= 2:
                break
            assert time.monotonic() < deadline, "the child run did not get going"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def _resume_in_child(backend: str, where: dict[str, str], thread_id: str, **env: str) -> None:
    proc = spawn(
        "resume",
        {"backend": backend, "where": where, "lease": 30, "beat": 10, "threads": [thread_id]},
        **env,
    )
    proc.communicate(timeout=120)
    assert proc.returncode == 0


def _checkpoints(saver: Any, thread_id: str) -> int:
    return sum(1 for _ in saver.list(_config(thread_id)))


def _later(seconds: float) -> Any:
    return lambda: datetime.now(timezone.utc) + timedelta(seconds=seconds)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ends", ["finished", pytest.param("waiting", marks=pytest.mark.slow)])
def test_same_host_resume_takes_the_dead_lease_over_and_releases_it(
    backend: str, ends: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    ask = {"LEASE_TEST_ASK_AT": str(ASK_AT)} if ends == "waiting" else {}
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        graph = builder().compile(checkpointer=saver)
        _kill_mid_run(backend, where, graph, "t", 30, 10, **ask)
        killed = part_of(saver, "leases").get_lease(thread_id="t")
        assert killed.state == RUNNING  # the lease has 30 s to live

        _resume_in_child(backend, where, "t", **ask)

        record = part_of(saver, "leases").get_lease(thread_id="t")
        assert (record.state, record.reason) == (
            RELEASED,
            "finished" if ends == "finished" else "interrupted",
        )
        assert record.owner != killed.owner and record.token == killed.token + 1
        assert record.recoveries == 0
        assert thread_state(saver, "t").state == ends
        state = graph.get_state(_config("t"))
        if ends == "finished":
            assert state.values == expected_final()
        else:
            assert state.values["n"] == ASK_AT - 1 and state.interrupts

        # a recovery worker an hour later finds nothing to resume
        before = _checkpoints(saver, "t")
        report = RecoveryWorker(graph, clock=_later(3600)).run_once()
        assert (report.found, report.recovered, report.closed) == (0, [], [])
        assert _checkpoints(saver, "t") == before


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ends", [pytest.param("finished", marks=pytest.mark.slow), "waiting"])
def test_worker_never_resumes_a_thread_that_another_host_finished_or_paused(
    backend: str, ends: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    ask = {"LEASE_TEST_ASK_AT": str(ASK_AT)} if ends == "waiting" else {}
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        graph = builder().compile(checkpointer=saver)
        _kill_mid_run(backend, where, graph, "t", 30, 10, LEASE_TEST_OWNER_HOST="elsewhere", **ask)
        killed = part_of(saver, "leases").get_lease(thread_id="t")
        assert killed.owner.startswith("elsewhere:")

        # the resuming process ends before the killed run misses a heartbeat:
        # nobody can tell yet that the lease's holder is dead
        _resume_in_child(backend, where, "t", **ask)
        assert part_of(saver, "leases").get_lease(thread_id="t").state == RUNNING
        assert thread_state(saver, "t").state == ends

        before = _checkpoints(saver, "t")
        worker = RecoveryWorker(graph, clock=_later(60))
        report = worker.run_once()
        assert (report.found, report.recovered, report.closed) == (1, [], ["t"])
        assert _checkpoints(saver, "t") == before, "the thread was not run again"
        record = part_of(saver, "leases").get_lease(thread_id="t")
        assert (record.state, record.reason, record.recoveries, record.attempts) == (
            RELEASED,
            "finished" if ends == "finished" else "interrupted",
            0,
            0,
        )
        assert thread_state(saver, "t").state == ends
        assert worker.run_once().found == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_resuming_process_clears_the_dead_lease_once_its_heartbeat_is_late(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(1.5, 0.25)) as saver:
        graph = builder().compile(checkpointer=saver)
        _kill_mid_run(backend, where, graph, "t", 6, 1, LEASE_TEST_OWNER_HOST="elsewhere")
        killed = part_of(saver, "leases").get_lease(thread_id="t")

        # resumed here, while the killed run's 6 s lease was renewed under 1 s ago
        assert graph.invoke(None, _config("t")) == expected_final()
        assert thread_state(saver, "t").state == "finished"
        record = part_of(saver, "leases").get_lease(thread_id="t")
        assert killed.expires_at is not None
        assert datetime.now(timezone.utc) < killed.expires_at
        if record.state == RUNNING:
            assert record.owner == killed.owner

        # our heartbeat releases it once the holder is 4 s (2/3 of its lease) late,
        # before the lease expires; no recovery worker runs here
        deadline = time.monotonic() + 20
        while part_of(saver, "leases").get_lease(thread_id="t").state == RUNNING:
            assert time.monotonic() < deadline, "the dead lease was never cleared"
            time.sleep(0.1)
        record = part_of(saver, "leases").get_lease(thread_id="t")
        assert (record.state, record.reason, record.owner) == (
            RELEASED,
            "finished",
            saver.run_leases.owner,
        )
        assert record.ended_at is not None and record.ended_at < killed.expires_at
        assert not saver.run_leases.book.held_threads()
