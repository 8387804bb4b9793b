"""Benchmark: what a multitask strategy costs a run, and how fast a queued run follows.

1. ``start``: ``graph.invoke`` of a one-node graph on a fresh thread, with no
   strategy and with ``multitask="reject"`` (the run takes its lease before its
   first read: one more round trip, while its first write no longer carries
   the acquire). Blocks of 20 runs alternate between the two savers, so load
   drift hits both alike; median per run and the ratio.
2. ``handoff``: a run pauses after a 0.2 s node while an ``enqueue`` run of
   the same thread waits (another saver, so another lease owner); the time
   from the first run's return to the queued run's first node. Median and max.

Usage::

    python benchmarks/bench_multitask.py --backend postgres
    python benchmarks/bench_multitask.py --backend redis --runs 400
"""

from __future__ import annotations

import argparse
import operator
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
import redis  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Command, interrupt  # noqa: E402
from psycopg import sql  # noqa: E402

from langgraph_durable.checkpointers.postgres import PostgresSaver  # noqa: E402
from langgraph_durable.checkpointers.redis import RedisSaver  # noqa: E402

PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


@contextmanager
def area(backend: str, url: str) -> Iterator[str]:
    """A fresh schema (Postgres) or key prefix (Redis), removed afterwards."""
    name = f"bench_mt_{uuid.uuid4().hex[:8]}"
    if backend == "postgres":
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        try:
            yield name
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))
    else:
        try:
            yield name
        finally:
            client = redis.Redis.from_url(url)
            keys = list(client.scan_iter(match=f"{name}:*", count=1000))
            for i in range(0, len(keys), 500):
                client.delete(*keys[i : i + 500])
            client.close()


@contextmanager
def saver(backend: str, url: str, name: str, **options: Any) -> Iterator[Any]:
    if backend == "postgres":
        with PostgresSaver.from_conn_string(url, schema=name, **options) as s:
            s.setup()
            yield s
    else:
        with RedisSaver.from_conn_string(url, prefix=name, **options) as s:
            s.setup()
            yield s


def one_node(checkpointer: Any) -> Any:
    builder: StateGraph[Any] = StateGraph(State)
    builder.add_node("work", lambda state: {"log": ["work"]})
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=checkpointer)


def bench_start(backend: str, url: str, runs: int) -> None:
    times: dict[str, list[float]] = {"none": [], "reject": []}
    with (
        area(backend, url) as name,
        saver(backend, url, name) as plain,
        saver(backend, url, name, multitask="reject") as guarded,
    ):
        graphs = {"none": one_node(plain), "reject": one_node(guarded)}
        for graph in graphs.values():  # warm up
            graph.invoke({}, {"configurable": {"thread_id": f"warm-{uuid.uuid4().hex}"}})
        for block in range(runs // 20):
            for mode in ("none", "reject") if block % 2 == 0 else ("reject", "none"):
                for _ in range(20):
                    cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
                    started = time.perf_counter()
                    graphs[mode].invoke({}, cfg)
                    times[mode].append(time.perf_counter() - started)
    none, reject = (statistics.median(times[m]) * 1000 for m in ("none", "reject"))
    print(
        f"{backend} start: no strategy {none:.2f} ms, reject {reject:.2f} ms per run "
        f"({reject / none:.2f}x, {len(times['none'])} runs each)"
    )


def pausing(checkpointer: Any, marks: dict[str, float]) -> Any:
    def work(state: State) -> dict[str, Any]:
        marks.setdefault("queued_started", time.perf_counter())
        time.sleep(0.2)
        return {"log": ["work"]}

    def ask(state: State) -> dict[str, Any]:
        return {"log": [interrupt("next?")]}

    builder: StateGraph[Any] = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("work", work)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "work")
    builder.add_edge("work", "ask")
    return builder.compile(checkpointer=checkpointer)


def _holds(store: Any, cfg: dict[str, Any], owner: str) -> bool:
    record = store.get_lease(thread_id=cfg["configurable"]["thread_id"])
    return record is not None and record.state == "running" and record.owner == owner


def bench_handoff(backend: str, url: str, rounds: int) -> None:
    gaps: list[float] = []
    with (
        area(backend, url) as name,
        saver(backend, url, name, multitask="enqueue") as first,
        saver(backend, url, name, multitask="enqueue") as second,
    ):
        for _ in range(rounds):
            cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
            marks: dict[str, float] = {}
            holder = pausing(first, {})
            holder.invoke({}, cfg)  # paused at ask
            queued = pausing(second, marks)

            def hold(
                graph: Any = holder, cfg: dict[str, Any] = cfg, marks: dict[str, float] = marks
            ) -> None:
                graph.invoke(Command(resume="first"), cfg)
                marks["holder_returned"] = time.perf_counter()

            thread = threading.Thread(target=hold)
            thread.start()
            while not _holds(second, cfg, first.run_leases.owner):
                time.sleep(0.001)
            queued.invoke(Command(resume="second"), cfg)
            thread.join()
            # the queued run's own "work" is the second one to start
            gaps.append(marks["queued_started"] - marks["holder_returned"])
    print(
        f"{backend} handoff: median {statistics.median(gaps) * 1000:.0f} ms, "
        f"max {max(gaps) * 1000:.0f} ms from the holder's return to the queued run's node "
        f"({rounds} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "redis"], default="postgres")
    parser.add_argument("--url")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    url = args.url or (PG_URL if args.backend == "postgres" else REDIS_URL)
    bench_start(args.backend, url, args.runs)
    bench_handoff(args.backend, url, args.rounds)


if __name__ == "__main__":
    main()
