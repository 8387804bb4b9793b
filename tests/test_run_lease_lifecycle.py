"""A run holds its thread's lease while it runs and gives it back when it pauses or ends."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers._leases import PARKED, RELEASED, RUNNING
from tests._backends import BACKENDS
from tests._lease_support import (
    StepState,
    builder,
    expected_final,
    leasing_saver,
    settings,
    where_of,
)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lease_held_while_running_released_at_interrupt_and_finish(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    seen: dict[str, Any] = {}
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        store = saver.run_leases.store

        def ask(state: StepState) -> dict[str, Any]:
            seen["during"] = store.get_lease(thread_id="t1")
            answer = interrupt({"question": "go on?"})
            return {"n": state["n"] + 1, "trace": [f"answer:{answer}"]}

        def done(state: StepState) -> dict[str, Any]:
            seen["after_resume"] = store.get_lease(thread_id="t1")
            return {"n": state["n"] + 1, "trace": ["done"]}

        g: StateGraph[Any] = StateGraph(StepState)
        g.add_node("ask", ask)
        g.add_node("done", done)
        g.add_edge(START, "ask")
        g.add_edge("ask", "done")
        g.add_edge("done", END)
        graph = g.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t1"}}

        graph.invoke({"n": 0, "trace": []}, config)
        assert seen["during"].state == RUNNING
        assert seen["during"].owner == saver.run_leases.owner
        paused = store.get_lease(thread_id="t1")
        assert (paused.state, paused.reason) == (RELEASED, "interrupted")
        assert not saver.run_leases.holds("t1")

        out = graph.invoke(Command(resume="yes"), config)
        assert out["trace"] == ["answer:yes", "done"]
        assert seen["after_resume"].state == RUNNING
        assert seen["after_resume"].token == paused.token + 1
        finished = store.get_lease(thread_id="t1")
        assert (finished.state, finished.reason) == (RELEASED, "finished")
        assert store.find_expired_leases(now=_now(), limit=10) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_that_raises_records_its_error_and_releases(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(2, 0.2)) as saver:

        def boom(state: StepState) -> dict[str, Any]:
            raise ValueError("disk on fire")

        g: StateGraph[Any] = StateGraph(StepState)
        g.add_node("boom", boom)
        g.add_edge(START, "boom")
        graph = g.compile(checkpointer=saver)
        with pytest.raises(ValueError):
            graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "e1"}})
        record = saver.run_leases.store.get_lease(thread_id="e1")
        assert record.last_error == "ValueError: disk on fire"
        # the run is over once nothing references it: the heartbeat notices
        deadline = time.monotonic() + 5
        while record.state == RUNNING and time.monotonic() < deadline:
            time.sleep(0.1)
            record = saver.run_leases.store.get_lease(thread_id="e1")
        assert (record.state, record.reason) == (RELEASED, "error")


@pytest.mark.parametrize("backend", BACKENDS)
def test_long_node_with_heartbeat_stays_leased_and_is_not_recovered(
    backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node running twice the lease is renewed in the background; no worker takes it.

    (Renewals every 0.25 s of a 1.5 s lease: a heartbeat that a loaded machine holds
    up for a second still renews it in time.)
    """
    from langgraph_durable.interrupts._recovery import RecoveryWorker

    where = where_of(backend, request)
    monkeypatch.setenv("LEASE_TEST_SLOW", "3")
    lease = settings(1.5, 0.25)
    with (
        leasing_saver(backend, where, lease) as saver,
        leasing_saver(backend, where, lease) as other,
    ):
        graph = builder(with_slow=True).compile(checkpointer=saver)
        worker = RecoveryWorker(builder(with_slow=True).compile(checkpointer=other))
        result: dict[str, Any] = {}
        runner = threading.Thread(
            target=lambda: result.update(
                graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "long"}})
            )
        )
        started = time.monotonic()
        runner.start()
        found = 0
        notes = set()
        while runner.is_alive():
            report = worker.run_once()
            found += report.found
            record = saver.run_leases.store.get_lease(thread_id="long")
            if record is not None and record.progress:
                notes.add(record.progress)
            time.sleep(0.1)
        runner.join()
        assert time.monotonic() - started >= 3
        assert found == 0
        assert result["trace"] == ["slow"]
        assert notes, "heartbeat() notes reach the lease record"
        record = saver.run_leases.store.get_lease(thread_id="long")
        assert (record.state, record.recoveries) == (RELEASED, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_uninterrupted_run_has_expected_final_state(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = where_of(backend, request)
    with leasing_saver(backend, where, settings(30, 10)) as saver:
        graph = builder().compile(checkpointer=saver)
        out = graph.invoke({"n": 0, "trace": []}, {"configurable": {"thread_id": "u"}})
        assert out == expected_final()
        assert saver.run_leases.store.get_lease(thread_id="u").state == RELEASED
        assert PARKED not in {saver.run_leases.store.get_lease(thread_id="u").state}
