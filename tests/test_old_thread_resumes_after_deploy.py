"""The seed story, end to end on real servers: a thread paused under v1 survives the v2 deploy.

Process 1 runs graph v1 until it pauses at the approval interrupt in ``review``
and exits. This process, with graph v2 (``price`` became money, ``review`` was
renamed ``human_review``) and the registered step, resumes it with
``Command(resume=...)``: the run completes on upgraded state and the new
checkpoint is tagged 2. Without the step the resume fails loudly and nothing
stored changes.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from langgraph.types import Command

from langgraph_durable.migrations import SchemaVersionError
from tests._backends import BACKENDS
from tests._migration_backends import Backend, backend_from_fixture
from tests._parts import part_of
from tests._seed_graphs import build_v2, seed_migrations, v1_migrations

THREAD = "order-42"
CFG = {"configurable": {"thread_id": THREAD}}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return backend_from_fixture(request.param, request)


def _pause_in_another_process(backend: Backend, *extra: str) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests._migration_backends",
            "pause-v1",
            *backend.argv(),
            THREAD,
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("paused ")


def _stored(backend: Backend) -> tuple[object, object, object]:
    # read with v1 code: the tuple exactly as stored, no upgrade involved
    with backend.open(v1_migrations()) as saver:
        tup = saver.get_tuple(CFG)
        history = [t.checkpoint["id"] for t in saver.list(CFG)]
    assert tup is not None
    return tup.checkpoint, tup.pending_writes, history


def test_paused_thread_resumes_after_deploy_with_upgraded_state(backend: Backend) -> None:
    _pause_in_another_process(backend)
    with backend.open(seed_migrations()) as saver:
        app = build_v2(saver)
        snap = app.get_state(CFG)
        assert snap.next == ("human_review",)
        assert snap.values["price"] == {"amount": 11, "currency": "USD"}
        out = app.invoke(Command(resume=True), CFG)
        assert out["approved"] is True
        assert out["price"] == {"amount": 11, "currency": "USD"}
        assert out["log"] == ["plan", "human_review", "done v2 11 USD"]
        latest = saver.get_tuple(CFG)
        assert saver.schema_version(CFG) == 2
        assert "schema_version" not in latest.metadata
        assert latest.checkpoint["channel_values"]["price"] == {"amount": 11, "currency": "USD"}
        status = {s.schema_version: s for s in part_of(saver, "migration_store").migration_status()}
        assert status[2].threads == 1 and status[2].paused_threads == 0
    # v1 code can no longer read the thread: its latest checkpoint is tagged 2
    with backend.open(v1_migrations()) as saver, pytest.raises(SchemaVersionError) as info:
        saver.get_tuple(CFG)
    assert (info.value.stored_version, info.value.code_version) == (2, 1)


def test_parallel_write_pending_at_the_interrupt_is_upgraded_too(backend: Backend) -> None:
    _pause_in_another_process(backend, "--parallel")
    with backend.open(seed_migrations()) as saver:
        from tests._seed_graphs import build_v2 as v2

        app = v2(saver, parallel=True)
        (intr,) = app.get_state(CFG).interrupts
        out = app.invoke(Command(resume={intr.id: True}), CFG)
    assert out["price"] == {"amount": 22, "currency": "USD"}
    assert out["log"][-1] == "done v2 22 USD"


def test_without_the_step_resume_fails_loudly_and_storage_is_unchanged(backend: Backend) -> None:
    _pause_in_another_process(backend)
    before = _stored(backend)
    with backend.open(seed_migrations(with_step=False)) as saver:
        app = build_v2(saver)
        with pytest.raises(SchemaVersionError) as info:
            app.invoke(Command(resume=True), CFG)
    err = info.value
    assert (err.thread_id, err.stored_version, err.code_version) == (THREAD, 1, 2)
    assert THREAD in str(err) and "version 1" in str(err) and "version 2" in str(err)
    assert _stored(backend) == before
