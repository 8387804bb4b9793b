"""A worker SIGKILLed anywhere in a 3-step compensation: the resumed run undoes each step once.

Each point runs in a fresh thread: a subprocess worker runs the order saga
(reserve -> charge -> confirm -> ship fails) and kills itself at the point;
this process then resumes the thread from the saver. The undos count every
call (``ledger_calls``) and every effect, de-duplicated by idempotency key
(``ledger_effects``), in PostgreSQL tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import _saga_graphs as g
from tests import _saga_worker as worker
from tests._saga_savers import DURABLE, NATIVE, open_saver, saver_area

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent
UNDOS = ["retract", "refund", "release"]  # the order they must run in
WHERES = ("enter", "exit", "recorded", "step")
EVERY_POINT = ["ship:enter"] + [f"{undo}:{where}" for undo in UNDOS for where in WHERES]
# the default run kills once in each place of an undo, each undo killed at
# least once (first, middle, last); every undo at every place is the slow variant
EACH_PLACE = [
    "ship:enter",
    "retract:enter",
    "refund:exit",
    "release:recorded",
    "retract:step",
]
assert set(EACH_PLACE) <= set(EVERY_POINT)
assert {p.split(":")[1] for p in EACH_PLACE[1:]} == set(WHERES)
assert {p.split(":")[0] for p in EACH_PLACE[1:]} == set(UNDOS)
POINTS = [
    pytest.param(EACH_PLACE, id="each-place"),
    pytest.param(EVERY_POINT, id="every-point", marks=pytest.mark.slow),
]


def run_worker(
    graph: str, kind: str, saver_at: tuple[str, str], ledger: g.PgLedger, thread: str, kill_at: str
) -> int:
    env = {**os.environ, "LGD_KILL_AT": kill_at}
    args = [graph, kind, *saver_at, ledger.url, ledger.schema, thread]
    proc = subprocess.run(
        [sys.executable, "-m", "tests._saga_worker", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, (kill_at, proc.returncode, proc.stdout, proc.stderr[-3000:])
    return proc.returncode


# our savers in the default run; the official saver (fallback path) as a slow variant
KILL_LOOP_KINDS = [
    pytest.param(k, marks=pytest.mark.slow) if k not in NATIVE else k for k in DURABLE
]


@pytest.mark.parametrize("points", POINTS)
@pytest.mark.parametrize("kind", KILL_LOOP_KINDS)
def test_each_undo_runs_exactly_once_whatever_the_kill_point(
    kind: str, points: list[str], request: pytest.FixtureRequest
) -> None:
    url, area = saver_area(kind, request)
    ledger = g.PgLedger(*request.getfixturevalue("pg_schema"))
    ledger.setup()
    g.LEDGER = ledger
    os.environ.pop("LGD_KILL_AT", None)
    with open_saver(kind, url, area) as saver:
        for n, point in enumerate(points):
            thread = f"order-{n}"
            calls_before = len(ledger.calls())
            run_worker("order", kind, (url, area), ledger, thread, point)

            final = worker.run("order", saver, thread, start=False)

            calls = ledger.calls()[calls_before:]
            undo_calls = [(w, k) for w, k in calls if w in UNDOS]
            # newest first, each undo at least once, and only a kill between an
            # undo's side effect and its record calls it again, with the same key
            names = [w for w, _ in undo_calls]
            assert [w for i, w in enumerate(names) if w not in names[:i]] == UNDOS, point
            for undo in UNDOS:
                keys = [k for w, k in undo_calls if w == undo]
                expected = 2 if point == f"{undo}:exit" else 1
                assert len(keys) == expected, (point, undo, keys)
                assert len(set(keys)) == 1, (point, undo)
            effects = [(w, k) for w, k in ledger.effects() if w in UNDOS]
            for undo in UNDOS:
                mine = {k for w, k in undo_calls if w == undo}
                assert len([1 for w, k in effects if w == undo and k in mine]) == 1, point
            saga = final["saga"]
            assert saga["status"] == "compensated", point
            assert saga["reason"] == "RuntimeError: carrier API down"
            assert [s["status"] for s in saga["steps"]] == ["compensated"] * 3, point


@pytest.mark.parametrize("kind", DURABLE)
@pytest.mark.parametrize("point", ["charge_api:exit", "charge_api:recorded"])
def test_activity_killed_after_its_side_effect(
    kind: str, point: str, request: pytest.FixtureRequest
) -> None:
    url, area = saver_area(kind, request)
    ledger = g.PgLedger(*request.getfixturevalue("pg_schema"))
    ledger.setup()
    g.LEDGER = ledger
    os.environ.pop("LGD_KILL_AT", None)
    run_worker("activity", kind, (url, area), ledger, "pay-1", point)
    assert [w for w, _ in ledger.calls()] == ["charge_api"]
    (first_key,) = [k for _, k in ledger.calls()]

    with open_saver(kind, url, area) as saver:
        final = worker.run("activity", saver, "pay-1", start=False)

    keys = [k for w, k in ledger.calls() if w == "charge_api"]
    if point == "charge_api:recorded":
        # the result was recorded before the kill: the retried step returns it
        assert keys == [first_key]
    else:
        # killed before the record: called again, with the same idempotency key
        assert keys == [first_key, first_key]
    assert len(ledger.effects()) == 1
    assert final["charge_id"] == "ch_" + first_key[-8:]
    assert final["shipped"] is True
