"""SIGKILL a worker anywhere in a run; a fresh process resumes to the same end.

Each iteration (seeded) runs the pipeline workflow (steps, a parallel fan-out,
blobs, a human approval) in a forked worker that SIGKILLs itself at a random
call of ``put``, ``put_writes`` or ``record_decision`` (the approval decision),
at a random delay within that call; sometimes twice. A fresh worker then takes
the thread to its end. The thread must end exactly like an uninterrupted run
(values, and the same linear history of steps), storage must hold no
half-written checkpoint or task writes (checked with direct reads), and every
stored checkpoint must load.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests import _crash as c
from tests import _durability as d

SEED = 20261129


def crash_loop(backend: str, request: pytest.FixtureRequest, iterations: int, seed: int) -> None:
    url, area = d.storage_area(backend, request)
    with d.open_saver(backend, url, area) as ref_saver:
        expected, counts = c.reference_run(ref_saver, "reference")
        expected_history = d.history(ref_saver, "reference")
        expected_stored = d.stored_shape(backend, url, area, "reference")
    # every hooked operation the saver has happens in an uninterrupted run
    ops = [op for op in c.HOOKED if counts[op] > 0]
    assert ops[:2] == ["put", "put_writes"], counts
    if backend == "postgres":
        assert "record_decision" in ops  # decisions are stored by the saver itself
    rng = random.Random(seed)
    killed = 0
    with d.open_saver(backend, url, area) as saver:
        for i in range(iterations):
            thread_id = f"crash-{i}"
            for _ in range(rng.choice((1, 1, 2))):
                op = rng.choice(ops)
                delay = rng.choice((0.0, rng.uniform(0, 0.004)))
                kill = c.KillAt(op, rng.randint(1, counts[op]), delay)
                code = c.run_worker(backend, url, area, thread_id, kill)
                assert code in (-9, 0), f"worker failed (exit {code}) at {kill}, see stderr"
                killed += code == -9
            assert c.run_worker(backend, url, area, thread_id, None) == 0
            graph = d.pipeline_graph(saver)
            got: dict[str, Any] = d.final_values(graph, thread_id)
            assert got == expected, f"iteration {i}: final state differs"
            assert d.history(saver, thread_id) == expected_history, f"iteration {i}"
            stored = d.stored_shape(backend, url, area, thread_id)
            assert d.same_shape(stored, expected_stored), (
                f"iteration {i}: half-written data\n{stored}\n!=\n{expected_stored}"
            )
        d.check_storage(backend, saver)
    assert killed >= iterations, "most workers should have died at their kill point"


@pytest.mark.parametrize("backend", d.BACKENDS)
def test_ten_kills_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    crash_loop(backend, request, iterations=10, seed=SEED)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("backend", d.BACKENDS)
def test_fifty_kills_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    crash_loop(backend, request, iterations=50, seed=SEED + 1)
