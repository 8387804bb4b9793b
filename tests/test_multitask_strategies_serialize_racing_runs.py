"""Racing processes resume one paused thread under ``multitask="reject"`` and ``"enqueue"``.

Four real processes (forked, each with its own saver and connections) wait at
a start gate, then all resume the same paused thread. The side effects are
counted on the server under test (tests/_multitask_support.py).

``reject``: exactly one run resumes; the three others raise ``ThreadBusy``
naming the thread and the winner's process, and write nothing: the winner's
effect waits until all three were turned away, so they met its live run.
``enqueue``: the first run's effect waits until all four have started their
resume; the four effects then happen strictly one after another (never two
inside at once, no overlapping intervals), and each resume sees the answers
of the runs before it (it answers the next question). Either way the thread's
history is one linear chain.
"""

from __future__ import annotations

import itertools
import multiprocessing
from typing import Any

import pytest

from tests._backends import BACKENDS, area_fixture
from tests._multitask_support import THREAD, Effects, chat_graph, racer, sync_saver
from tests._parts import part_of

APIS = ["sync", "async"]
RACERS = 4


def _area(backend: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    fixture = area_fixture(backend)
    url, area = request.getfixturevalue(fixture)
    return url, area


def _race(
    backend: str, api: str, url: str, area: str, strategy: str, hold: tuple[str, int]
) -> list[dict[str, Any]]:
    """Pause the thread, let RACERS processes resume it at once; their outcomes."""
    effects = Effects(backend, url, area)
    effects.create()
    with sync_saver(backend, url, area) as saver:
        chat_graph(saver, effects).invoke({}, {"configurable": {"thread_id": THREAD}})
    ctx = multiprocessing.get_context("fork")
    ready, go, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    specs = [
        {
            "backend": backend,
            "api": api,
            "url": url,
            "area": area,
            "strategy": strategy,
            "tag": f"r{i}",
            "hold": hold,
        }
        for i in range(RACERS)
    ]
    procs = [ctx.Process(target=racer, args=(spec, ready, go, results)) for spec in specs]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=60)  # every racer has its saver and graph
    go.set()
    outcomes = [results.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0] * RACERS
    effects.close()
    return outcomes


def _linear_history(saver: Any) -> list[Any]:
    tuples = list(saver.list({"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}))
    ids = [t.config["configurable"]["checkpoint_id"] for t in tuples]
    parents = [
        t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
        for t in tuples
    ]
    # newest first: each checkpoint's parent is the next one
    assert parents == [*ids[1:], None], "the thread's history forked"
    return tuples


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("api", APIS)
def test_reject_runs_one_racer_and_turns_the_others_away(
    backend: str, api: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(backend, request)
    outcomes = _race(backend, api, url, area, "reject", ("busy", RACERS - 1))
    ok = [o for o in outcomes if o["outcome"] == "ok"]
    busy = [o for o in outcomes if o["outcome"] == "busy"]
    assert len(ok) == 1 and len(busy) == RACERS - 1, outcomes
    (winner,) = ok
    for o in busy:
        assert o["thread_id"] == THREAD and o["strategy"] == "reject"
        assert o["owner"].split(":")[1] == str(winner["pid"]), (o, winner)
        assert o["since"] is not None

    effects = Effects(backend, url, area)
    rows = effects.rows()
    effects.close()
    assert [r["answer"] for r in rows] == [winner["tag"]]
    assert rows[0]["inside"] == 1 and rows[0]["held_for_others"] is True
    with sync_saver(backend, url, area) as saver:
        _linear_history(saver)
        state = chat_graph(saver, Effects(backend, url, area)).get_state(
            {"configurable": {"thread_id": THREAD}}
        )
        # the winner's answer only: a turned-away resume wrote nothing
        assert state.values == {"answers": [winner["tag"]], "done": [winner["tag"]]}
        assert state.next == ("ask",)
        lease = part_of(saver, "leases").get_lease(thread_id=THREAD)
        assert lease.state == "released" and lease.owner.split(":")[1] == str(winner["pid"])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("api", APIS)
def test_enqueue_runs_every_racer_one_after_another(
    backend: str, api: str, request: pytest.FixtureRequest
) -> None:
    url, area = _area(backend, request)
    outcomes = _race(backend, api, url, area, "enqueue", ("invoking", RACERS))
    assert [o["outcome"] for o in outcomes] == ["ok"] * RACERS, outcomes

    effects = Effects(backend, url, area)
    rows = effects.rows()
    effects.close()
    assert sorted(r["answer"] for r in rows) == sorted(o["tag"] for o in outcomes)
    assert rows[0]["held_for_others"] is True  # all four were resuming during the first
    assert [r["inside"] for r in rows] == [1] * RACERS, rows
    for before, after in itertools.pairwise(rows):
        assert before["ended"] <= after["started"], (before, after)
    # each run resumed on the latest checkpoint: it saw every answer before its own
    assert [r["seen"] for r in rows] == list(range(1, RACERS + 1)), rows
    with sync_saver(backend, url, area) as saver:
        _linear_history(saver)
        state = chat_graph(saver, Effects(backend, url, area)).get_state(
            {"configurable": {"thread_id": THREAD}}
        )
        order = [r["answer"] for r in rows]
        assert state.values == {"answers": order, "done": order}
        assert part_of(saver, "leases").get_lease(thread_id=THREAD).state == "released"
