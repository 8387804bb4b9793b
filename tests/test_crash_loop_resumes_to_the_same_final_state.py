"""SIGKILL a worker anywhere in a run; a fresh process resumes to the same end.

Each iteration (seeded) runs the pipeline workflow (steps, a parallel fan-out,
blobs, a human approval) in a forked worker that SIGKILLs itself at a random
call of ``put``, ``put_writes`` or ``record_decision`` (the approval decision),
at a random delay within that call; sometimes twice. A fresh worker then takes
the thread to its end. The thread must end exactly like an uninterrupted run
(values, and the same linear history of steps), storage must hold no
half-written checkpoint or task writes (checked with direct reads), and every
stored checkpoint must load.

A second workflow runs in the same seeded loop (``tests._crash_saga``): two
compensable steps doing their side effects through ``activity`` (three calls),
an approval that is rejected, and the compensation that undoes both steps.
Its workers are killed at a random call of the same saver operations or of
``put_activity`` (the activity record), or at a point inside an activity or an
undo, before or after its effect reached the effect store (a PostgreSQL table
or a Redis hash on the server under test, keyed by idempotency key); every
other iteration's first kill falls right after a side effect, before its
record (each activity and undo in turn), so re-calls are exercised. Besides
the final state, history and storage shape, each thread must show every
side effect under one idempotency key per activity, called again only when a
kill fell between the effect and its record, each undo's effect exactly once
(newest first), and no forward step after the rejection.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from tests import _crash as c
from tests import _crash_saga as cs
from tests import _durability as d
from tests._backends import BACKENDS

SEED = 20261129
# the saga's kill points right after a side effect (undos first: the default run
# has 5 forced kills, each lands on one of these)
EXITS = ("refund:exit", "release:exit", "charge_api:exit", "notify_api:exit", "reserve_api:exit")


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


def saga_crash_loop(
    backend: str, request: pytest.FixtureRequest, iterations: int, seed: int
) -> None:
    url, area = d.storage_area(backend, request)
    store = cs.EffectStore(backend, url, area)
    store.setup()
    with d.open_saver(backend, url, area) as ref_saver:
        expected, counts = c.reference_run(ref_saver, "reference", "saga", store)
        expected_history = d.history(ref_saver, "reference")
        expected_stored = d.stored_shape(backend, url, area, "reference")
    assert expected["saga"]["status"] == "compensated", expected["saga"]
    want_effects = sorted(w for w, _ in store.effects("reference"))
    assert want_effects == sorted([*cs.ACTIVITIES, *cs.UNDOS]), want_effects
    assert [w for w, _ in store.calls("reference")] == [*cs.ACTIVITIES, *cs.UNDOS]
    ops = [op for op in (*c.HOOKED, *c.POINTS) if counts[op] > 0]
    assert set(c.POINTS) <= set(ops), counts
    assert "put_activity" in ops, counts  # both savers record activities natively
    rng = random.Random(seed)
    killed = 0
    in_undo = 0
    repeated: Counter[str] = Counter()  # calls made again, same key, after a kill
    with d.open_saver(backend, url, area) as saver:
        for i in range(iterations):
            thread_id = f"saga-{i}"
            kills = []
            for n in range(rng.choice((1, 1, 2))):
                op = rng.choice(ops)
                delay = rng.choice((0.0, rng.uniform(0, 0.004)))
                if n == 0 and i % 2 == 0:
                    # every other iteration starts with a kill right after a side
                    # effect, before its record (each activity and undo in turn)
                    op, delay = EXITS[(i // 2) % len(EXITS)], 0.0
                kill = c.KillAt(op, rng.randint(1, counts[op]), delay)
                code = c.run_worker(backend, url, area, thread_id, kill, "saga")
                assert code in (-9, 0), f"worker failed (exit {code}) at {kill}, see stderr"
                killed += code == -9
                kills.append(kill)
            in_undo += any(k.operation.split(":")[0] in cs.UNDOS for k in kills)
            assert c.run_worker(backend, url, area, thread_id, None, "saga") == 0
            graph = cs.saga_graph(saver)
            got = cs.final_values(graph, thread_id)
            assert got == expected, (
                f"iteration {i} ({kills}): final state differs\n{got}\n{expected}"
            )
            assert d.history(saver, thread_id) == expected_history, f"iteration {i} {kills}"
            stored = d.stored_shape(backend, url, area, thread_id)
            assert d.same_shape(stored, expected_stored), (
                f"iteration {i} ({kills}): half-written data\n{stored}\n!=\n{expected_stored}"
            )
            for what, n in check_effects(store, thread_id, kills, f"iteration {i} ({kills})"):
                repeated[what] += n
        d.check_storage(backend, saver)
    assert killed >= iterations, "most workers should have died at their kill point"
    assert in_undo > 0, "some kills should land inside an undo"
    # a kill between each undo's effect and its record happened, and was survived
    assert all(repeated[u] > 0 for u in cs.UNDOS), repeated


def check_effects(
    store: cs.EffectStore, thread_id: str, kills: list[c.KillAt], at: str
) -> list[tuple[str, int]]:
    """Each side effect under one key, repeated only after a kill between it and its record."""
    calls = store.calls(thread_id)
    effects = store.effects(thread_id)
    # one effect (one idempotency key) per activity and per undo; ship never ran
    assert sorted(w for w, _ in effects) == sorted([*cs.ACTIVITIES, *cs.UNDOS]), (at, effects)
    assert {w for w, _ in calls} == {w for w, _ in effects}, (at, calls)
    # undos newest first: every refund call comes before the first release
    names = [w for w, _ in calls]
    assert max(i for i, w in enumerate(names) if w == "refund") < names.index("release"), at
    assert names.index("release") > max(i for i, w in enumerate(names) if w in cs.ACTIVITIES), (
        at,
        names,
    )
    repeated = []
    for what, key in effects:
        repeats = names.count(what) - 1
        # called again only by a worker that a kill stopped between the effect
        # and its record, and always with the same idempotency key
        assert repeats <= len(kills), (at, what, key, calls)
        assert [k for w, k in calls if w == what] == [key] * (repeats + 1), (at, calls)
        repeated.append((what, repeats))
    return repeated


@pytest.mark.parametrize("backend", BACKENDS)
def test_ten_saga_kills_undo_once_and_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    saga_crash_loop(backend, request, iterations=10, seed=SEED + 2)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("backend", BACKENDS)
def test_fifty_saga_kills_undo_once_and_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    saga_crash_loop(backend, request, iterations=50, seed=SEED + 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ten_kills_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    crash_loop(backend, request, iterations=10, seed=SEED)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("backend", BACKENDS)
def test_fifty_kills_end_like_an_uninterrupted_run(
    backend: str, request: pytest.FixtureRequest
) -> None:
    crash_loop(backend, request, iterations=50, seed=SEED + 1)
