"""Benchmark: what waiting for the step's checkpoint costs an activity, and what it costs a put.

LangGraph's default ``durability="async"``, sync savers: ours on Postgres (on a
pool), langgraph-checkpoint-postgres's ``PostgresSaver`` (its own database,
``from_conn_string``) and ``InMemorySaver``.

* ``activity``: a one-node graph whose node calls one activity (a fresh thread
  per run, so every call is a first call); the time of that call, with the wait
  (as shipped) and without it (``wait_stored`` replaced by a no-op), in pairs
  (each pair in a random order) in one process, for each saver: ours learns in
  process when its put returned, the others are read back with ``get_tuple``.
* ``put``: ``saver.put`` of a small checkpoint with and without the wrapper
  that records how the put ended (``settled_put`` vs what it wraps), in pairs.
* ``get_tuple``: the same for the read, whose result is recorded as stored.

Usage::

    python benchmarks/bench_activity_wait.py --runs 400 --puts 2000
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo, sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver as Official  # noqa: E402
from langgraph.graph import START, StateGraph  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from benchmarks.bench_approvals import Area  # noqa: E402
from langgraph_durable.checkpointers.postgres import PostgresSaver  # noqa: E402
from langgraph_durable.interrupts import _activity, activity  # noqa: E402


class State(TypedDict, total=False):
    charge_id: str


def _unwrapped(fn: Any, name: str) -> Any:
    """The function ``name`` in ``fn``'s ``__wrapped__`` chain."""
    while fn.__code__.co_name != name:
        fn = fn.__wrapped__
    return fn


def _alternating(count: int, ways: tuple[str, str]) -> list[tuple[int, str]]:
    """``count`` pairs of the two ways (after 10 warm-up pairs), each pair in a random order."""
    rng = random.Random(7)
    order: list[tuple[int, str]] = []
    for n in range(count + 10):
        order += [(n - 10, how) for how in rng.sample(ways, 2)]
    return order


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def bench_activity(saver: Any, runs: int) -> dict[str, float]:
    took: list[float] = []

    def charge_api(*, idempotency_key: str) -> str:
        return "ch_" + idempotency_key[-8:]

    charge = activity(charge_api, name="charge_api")

    def pay(state: State) -> State:
        start = time.perf_counter()
        charge_id = charge()
        took.append(time.perf_counter() - start)
        return {"charge_id": charge_id}

    builder = StateGraph(State)
    builder.add_node("pay", pay)
    builder.add_edge(START, "pay")
    graph = builder.compile(checkpointer=saver)
    shipped = _activity.wait_stored
    samples: dict[str, list[float]] = {"wait": [], "no wait": []}
    for n, how in _alternating(runs, ("wait", "no wait")):
        _activity.wait_stored = shipped if how == "wait" else (lambda *a: None)  # type: ignore[assignment]
        graph.invoke({}, {"configurable": {"thread_id": f"b-{uuid.uuid4().hex}"}})
        if n >= 0:  # warmed up
            samples[how].append(took[-1])
    _activity.wait_stored = shipped  # type: ignore[assignment]
    return {how: _median_us(s) for how, s in samples.items()}


def bench_put(saver: PostgresSaver, calls: int) -> dict[str, float]:
    settled = _unwrapped(PostgresSaver.put, "settled_put")
    ways = {"recorded": settled, "not recorded": settled.__wrapped__}
    samples: dict[str, list[float]] = {how: [] for how in ways}
    config: Any = {"configurable": {"thread_id": "b-put", "checkpoint_ns": ""}}
    for n, how in _alternating(calls, ("recorded", "not recorded")):
        start = time.perf_counter()
        config = ways[how](saver, config, empty_checkpoint(), {"step": n}, {})
        if n >= 0:
            samples[how].append(time.perf_counter() - start)
    return {how: _median_us(s) for how, s in samples.items()}


def bench_get_tuple(saver: PostgresSaver, calls: int) -> dict[str, float]:
    admitting = _unwrapped(PostgresSaver.get_tuple, "admitting")
    config: Any = {"configurable": {"thread_id": "b-put", "checkpoint_ns": ""}}
    puts = saver.checkpoint_puts
    samples: dict[str, list[float]] = {"recorded": [], "not recorded": []}
    for n, how in _alternating(calls, ("recorded", "not recorded")):
        start = time.perf_counter()
        found = admitting.__wrapped__(saver, config)
        if how == "recorded":
            puts.read(config, found)
        if n >= 0:
            samples[how].append(time.perf_counter() - start)
    return {how: _median_us(s) for how, s in samples.items()}


@contextmanager
def _fresh_database(url: str) -> Iterator[str]:
    """A database of its own for the official saver (it keeps its tables in ``public``)."""
    name = f"bench_activity_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield conninfo.make_conninfo(url, dbname=name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _line(name: str, result: dict[str, float], base: str) -> str:
    (new,) = set(result) - {base}
    return (
        f"{name} (median us): {base} {result[base]:.1f}, {new} {result[new]:.1f}, "
        f"ratio {result[new] / result[base]:.3f}"
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--puts", type=int, default=2000)
    a = p.parse_args()
    area = Area("postgres")
    try:
        with (
            PostgresSaver.from_conn_string(area.url, schema=area.options["schema"]) as saver,
            _fresh_database(area.url) as db,
            Official.from_conn_string(db) as official,
        ):
            saver.setup()
            official.setup()
            calls = {
                "ours": bench_activity(saver, a.runs),
                "official": bench_activity(official, a.runs),
                "memory": bench_activity(InMemorySaver(), a.runs),
            }
            for name, result in calls.items():
                print(_line(f"activity call, {name}", result, "no wait"))
            print(_line("put, ours", bench_put(saver, a.puts), "not recorded"))
            print(_line("get_tuple, ours", bench_get_tuple(saver, a.puts), "not recorded"))
    finally:
        area.drop()


if __name__ == "__main__":
    main()
