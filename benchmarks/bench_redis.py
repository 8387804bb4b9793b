"""Benchmark: our AsyncRedisSaver vs langgraph-checkpoint-plainredis (+ our Postgres saver).

The workload of ``benchmarks/bench_savers.py`` (issue 2): a StateGraph of 3
nodes with a growing message list (~1 KiB of incompressible text per step);
``--threads`` threads x ``--steps`` ``ainvoke`` calls each, concurrently; then
``aget_state`` and a 10-item ``aget_state_history`` on every thread. Savers run
interleaved (the order alternates per round) in one process; the script prints
per-phase medians and each saver's ratio to ``--baseline`` (the peer).

``--growth`` also times a 10-item history on threads of 30 and 300
checkpoints: the cost should not grow with the thread.

Usage::

    python benchmarks/bench_redis.py                          # redis, plainredis, pg
    python benchmarks/bench_redis.py --rounds 7 --growth
    python benchmarks/bench_redis.py --micro                  # per-call medians
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import operator
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checkpointers.redis import AsyncRedisSaver

SaverFactory = Callable[[argparse.Namespace], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]


async def _drop_prefix(url: str, prefix: str) -> None:
    from redis import asyncio as aredis

    client = aredis.Redis.from_url(url)
    try:
        batch = [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]
        for i in range(0, len(batch), 500):
            await client.delete(*batch[i : i + 500])
    finally:
        await client.aclose()


@asynccontextmanager
async def ours_redis(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-durable's AsyncRedisSaver."""
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    try:
        async with AsyncRedisSaver.from_conn_string(args.redis_url, prefix=prefix) as saver:
            await saver.setup()
            yield saver
    finally:
        await _drop_prefix(args.redis_url, prefix)


@asynccontextmanager
async def plainredis(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-checkpoint-plainredis's AsyncRedisSaver (the peer on plain Redis)."""
    from langgraph_checkpoint_plainredis import AsyncRedisSaver as Peer

    prefix = f"benchpeer{uuid.uuid4().hex[:8]}"
    saver = Peer(url=args.redis_url, prefix=prefix)
    try:
        yield saver
    finally:
        await saver.aclose()
        await _drop_prefix(args.redis_url, prefix)


@asynccontextmanager
async def ours_pg(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-durable's AsyncPostgresSaver on a database of its own (reference)."""
    import psycopg
    from psycopg import sql
    from psycopg_pool import AsyncConnectionPool

    from checkpointers.postgres import AsyncPostgresSaver
    from tests.conftest import _with_dbname

    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        async with AsyncConnectionPool(
            _with_dbname(args.pg_url, name), min_size=args.pool, max_size=args.pool,
            kwargs={"autocommit": True}, open=False,
        ) as pool:
            saver = AsyncPostgresSaver(pool)
            await saver.setup()
            yield saver
    finally:
        with psycopg.connect(args.pg_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


SAVERS: dict[str, SaverFactory] = {"redis": ours_redis, "plainredis": plainredis, "pg": ours_pg}


class State(TypedDict):
    messages: Annotated[list[str], operator.add]
    turns: int


def _think(state: State) -> dict[str, Any]:
    return {"messages": [base64.b64encode(os.urandom(768)).decode()]}


def _act(state: State) -> dict[str, Any]:
    return {"turns": state.get("turns", 0) + 1}


def _review(state: State) -> dict[str, Any]:
    return {}


def build_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """The benchmark graph: think -> act -> review."""
    b = StateGraph(State)
    b.add_node("think", _think)
    b.add_node("act", _act)
    b.add_node("review", _review)
    b.add_edge(START, "think")
    b.add_edge("think", "act")
    b.add_edge("act", "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


async def run_workload(
    saver: BaseCheckpointSaver[Any], threads: int, steps: int
) -> dict[str, float]:
    """Time the three phases on fresh threads; seconds per phase."""
    graph = build_graph(saver)
    ids = [f"bench-{uuid.uuid4()}" for _ in range(threads)]

    async def one_thread(tid: str) -> None:
        config = {"configurable": {"thread_id": tid}}
        for _ in range(steps):
            await graph.ainvoke({"messages": ["user: next"]}, config)

    t0 = time.perf_counter()
    await asyncio.gather(*(one_thread(t) for t in ids))
    t1 = time.perf_counter()
    for tid in ids:
        state = await graph.aget_state({"configurable": {"thread_id": tid}})
        assert len(state.values["messages"]) == 2 * steps
    t2 = time.perf_counter()
    for tid in ids:
        config = {"configurable": {"thread_id": tid}}
        history = [s async for s in graph.aget_state_history(config, limit=10)]
        assert len(history) == 10
    t3 = time.perf_counter()
    return {"graph run": t1 - t0, "get_state": t2 - t1, "history": t3 - t2}


async def history_growth(
    saver: BaseCheckpointSaver[Any], sizes: list[int], reps: int
) -> dict[int, float]:
    """Median seconds of a 10-item history on a thread of each size (in checkpoints)."""
    graph = build_graph(saver)
    out = {}
    for size in sizes:
        config = {"configurable": {"thread_id": f"growth-{uuid.uuid4()}"}}
        while len([c async for c in saver.alist(config)]) < size:
            await graph.ainvoke({"messages": ["user: next"]}, config)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            history = [s async for s in graph.aget_state_history(config, limit=10)]
            times.append(time.perf_counter() - t0)
            assert len(history) == 10
        out[size] = statistics.median(times)
    return out


async def micro(args: argparse.Namespace) -> None:
    """Per-call medians on one 30-step thread per saver, interleaved call by call.

    The phase totals of :func:`bench` are a few milliseconds per call, so on a
    busy machine they mostly measure the scheduler; this repeats each call.
    """
    names = args.savers.split(",")
    cms = {n: SAVERS[n](args) for n in names}
    savers = {n: await cm.__aenter__() for n, cm in cms.items()}
    try:
        graphs = {n: build_graph(s) for n, s in savers.items()}
        cfg = {n: {"configurable": {"thread_id": f"micro-{uuid.uuid4()}"}} for n in names}
        for n in names:
            for _ in range(30):
                await graphs[n].ainvoke({"messages": ["user: next"]}, cfg[n])
        calls: dict[str, Callable[[str], Any]] = {
            "get_state": lambda n: graphs[n].aget_state(cfg[n]),
            "history(10)": lambda n: _drain(graphs[n].aget_state_history(cfg[n], limit=10)),
            "invoke": lambda n: graphs[n].ainvoke({"messages": ["user: next"]}, cfg[n]),
        }
        times: dict[str, dict[str, list[float]]] = {c: {n: [] for n in names} for c in calls}
        for r in range(args.reps):
            for n in names if r % 2 == 0 else names[::-1]:
                for c, fn in calls.items():
                    t0 = time.perf_counter()
                    await fn(n)
                    times[c][n].append(time.perf_counter() - t0)
    finally:
        for cm in cms.values():
            await cm.__aexit__(None, None, None)
    base = args.baseline if args.baseline in names else names[-1]
    print(f"per-call medians over {args.reps} interleaved repetitions:")
    for c, by_name in times.items():
        b = statistics.median(by_name[base])
        print(
            f"  {c:>12}:"
            + "".join(
                f"  {n} {statistics.median(v) * 1000:7.2f} ms ({statistics.median(v) / b:.2f}x)"
                for n, v in by_name.items()
            )
        )


async def _drain(it: Any) -> None:
    async for _ in it:
        pass


async def bench(args: argparse.Namespace) -> None:
    names = args.savers.split(",")
    results: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    stacks = {}
    for name in names:
        cm = SAVERS[name](args)
        stacks[name] = (cm, await cm.__aenter__())
    try:
        for name in names:  # warm-up, not counted
            await run_workload(stacks[name][1], min(args.threads, 4), 3)
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                phases = await run_workload(stacks[name][1], args.threads, args.steps)
                for phase, secs in phases.items():
                    results[name].setdefault(phase, []).append(secs)
                print(
                    f"round {r + 1} {name:>10}: "
                    + "  ".join(f"{p} {s * 1000:8.1f} ms" for p, s in phases.items()),
                    flush=True,
                )
        growth = {}
        if args.growth:
            for name in names:
                growth[name] = await history_growth(stacks[name][1], [30, 300], 15)
    finally:
        for cm, _ in stacks.values():
            await cm.__aexit__(None, None, None)
    base = args.baseline if args.baseline in names else names[-1]
    print(f"\nmedians over {args.rounds} rounds ({args.threads} threads x {args.steps} steps):")
    for phase in results[names[0]]:
        line = f"  {phase:>10}:"
        for name in names:
            med = statistics.median(results[name][phase])
            ratio = med / statistics.median(results[base][phase])
            line += f"  {name} {med * 1000:8.1f} ms ({ratio:.2f}x {base})"
        print(line)
    for name, by_size in growth.items():
        print(
            f"  history(limit=10) {name:>10}: "
            + "  ".join(f"{n} checkpoints {s * 1000:6.2f} ms" for n, s in by_size.items())
        )


def main() -> None:
    from tests._servers import postgres_url, redis_url

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--redis-url", default=None, help="default: as the tests find one")
    ap.add_argument("--pg-url", default=None, help="default: as the tests find one")
    ap.add_argument("--savers", default="redis,plainredis,pg")
    ap.add_argument("--baseline", default="plainredis")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--pool", type=int, default=10, help="Postgres connections")
    ap.add_argument("--growth", action="store_true", help="history cost at 30 and 300 checkpoints")
    ap.add_argument("--micro", action="store_true", help="per-call medians instead of phases")
    ap.add_argument("--reps", type=int, default=60, help="repetitions for --micro")
    args = ap.parse_args()
    args.redis_url = args.redis_url or redis_url()
    args.pg_url = args.pg_url or postgres_url()
    asyncio.run(micro(args) if args.micro else bench(args))


if __name__ == "__main__":
    main()
