"""Benchmark: our AsyncRedisSaver vs langgraph-checkpoint-plainredis (+ our Postgres saver).

The workload is ``benchmarks/bench_savers.py``'s, imported from it: a
StateGraph of 3 nodes with a growing message list (~1 KiB of incompressible
text per step); ``--threads`` threads x ``--steps`` ``ainvoke`` calls each,
concurrently; then ``aget_state`` and a 10-item ``aget_state_history`` on every
thread; savers interleaved, medians and ratios to ``--baseline`` (the peer).
This module adds the Redis saver factories (``bench_savers.py --savers
redis,plainredis,ours`` works too) and two measurements of its own:

* ``--growth``: a 10-item history on threads of 30 and 300 checkpoints (the
  cost should not grow with the thread); the workload's message list grows
  with the thread, so ``--flat`` measures it again on a graph whose state
  keeps one size (one 1 KiB field rewritten each step): only the count of
  checkpoints differs;
* ``--micro``: per-call medians (get_state, history, one invoke) over many
  interleaved repetitions, which a busy machine disturbs less than phase totals
  (``--cold``: our reads start with an empty chain cache, as another process's).
* ``--cpu``: the graph run's client CPU (this process's CPU time) per invoke,
  ``--threads`` concurrent threads x 10 invokes per round, interleaved: what
  other processes on the machine disturb least.

Usage::

    python benchmarks/bench_redis.py                          # redis, plainredis, pg
    python benchmarks/bench_redis.py --rounds 7 --growth
    python benchmarks/bench_redis.py --micro                  # per-call medians
    python benchmarks/bench_redis.py --cpu --reps 10          # client CPU per invoke
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_savers import SAVERS as PG_SAVERS
from benchmarks.bench_savers import bench, build_graph
from langgraph_durable.checkpointers.redis import AsyncRedisSaver

SaverFactory = Callable[[str, int], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]


def _redis_url() -> str:
    from tests._servers import redis_url

    return redis_url()


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
async def ours_redis(url: str, pool: int) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-durable's AsyncRedisSaver (``url`` is the Postgres one: unused)."""
    redis_url, prefix = _redis_url(), f"bench{uuid.uuid4().hex[:8]}"
    try:
        async with AsyncRedisSaver.from_conn_string(redis_url, prefix=prefix) as saver:
            await saver.setup()
            yield saver
    finally:
        await _drop_prefix(redis_url, prefix)


@asynccontextmanager
async def plainredis(url: str, pool: int) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-checkpoint-plainredis's AsyncRedisSaver (the peer on plain Redis)."""
    from langgraph_checkpoint_plainredis import AsyncRedisSaver as Peer

    redis_url, prefix = _redis_url(), f"benchpeer{uuid.uuid4().hex[:8]}"
    saver = Peer(url=redis_url, prefix=prefix)
    try:
        yield saver
    finally:
        await saver.aclose()
        await _drop_prefix(redis_url, prefix)


FACTORIES: dict[str, SaverFactory] = {
    "redis": ours_redis,
    "plainredis": plainredis,
    "pg": PG_SAVERS["ours"],  # our AsyncPostgresSaver, for reference
}
SAVERS: dict[str, SaverFactory] = {**PG_SAVERS, **FACTORIES}


class FlatState(TypedDict):
    note: str


def build_flat_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """One node that rewrites a 1 KiB field: the state keeps one size as the thread grows."""

    def write(state: FlatState) -> dict[str, Any]:
        return {"note": uuid.uuid4().hex * 32}

    b = StateGraph(FlatState)
    b.add_node("write", write)
    b.add_edge(START, "write")
    b.add_edge("write", END)
    return b.compile(checkpointer=saver)


async def history_growth(
    savers: dict[str, BaseCheckpointSaver[Any]], sizes: list[int], reps: int, flat: bool = False
) -> dict[str, dict[int, float]]:
    """Median seconds of a 10-item history on a thread of each size (in checkpoints).

    Measured interleaved (saver by saver, size by size) so load on the machine
    hits every figure alike. ``flat``: on :func:`build_flat_graph`.
    """
    build, step_input = (
        (build_flat_graph, {"note": ""}) if flat else (build_graph, {"messages": ["user: next"]})
    )
    graphs = {n: build(s) for n, s in savers.items()}
    configs: dict[str, dict[int, Any]] = {n: {} for n in savers}
    for name, saver in savers.items():
        for size in sizes:
            config = {"configurable": {"thread_id": f"growth-{uuid.uuid4()}"}}
            while len([c async for c in saver.alist(config)]) < size:
                await graphs[name].ainvoke(step_input, config)
            configs[name][size] = config
    times: dict[str, dict[int, list[float]]] = {n: {s: [] for s in sizes} for n in savers}
    for r in range(reps):
        for name in savers if r % 2 == 0 else list(savers)[::-1]:
            for size in sizes:
                t0 = time.perf_counter()
                history = [
                    s async for s in graphs[name].aget_state_history(configs[name][size], limit=10)
                ]
                times[name][size].append(time.perf_counter() - t0)
                assert len(history) == 10
    return {n: {s: statistics.median(v) for s, v in by.items()} for n, by in times.items()}


async def micro(args: argparse.Namespace) -> None:
    """Per-call medians on one 30-step thread per saver, interleaved call by call.

    The phase totals of :func:`bench` are a few milliseconds per call, so on a
    busy machine they mostly measure the scheduler; this repeats each call.
    """
    names = args.savers.split(",")
    cms = {n: SAVERS[n](args.url, args.pool) for n in names}
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
                    core = getattr(savers[n], "_core", None)
                    if args.cold and c != "invoke" and core is not None:
                        core.codec.chains.clear()  # read as a saver holding nothing would
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


async def cpu(args: argparse.Namespace) -> None:
    """Client CPU time per invoke of the graph run, savers interleaved round by round."""
    names = args.savers.split(",")
    cms = {n: SAVERS[n](args.url, args.pool) for n in names}
    savers = {n: await cm.__aenter__() for n, cm in cms.items()}
    steps = 10
    try:
        graphs = {n: build_graph(s) for n, s in savers.items()}

        async def thread(name: str, steps: int) -> None:
            config = {"configurable": {"thread_id": f"cpu-{uuid.uuid4()}"}}
            for _ in range(steps):
                await graphs[name].ainvoke({"messages": ["user: next"]}, config)

        for n in names:  # warm-up
            await asyncio.gather(*(thread(n, 3) for _ in range(4)))
        cpu_ms: dict[str, list[float]] = {n: [] for n in names}
        wall_ms: dict[str, list[float]] = {n: [] for n in names}
        for r in range(args.reps):
            for n in names if r % 2 == 0 else names[::-1]:
                c0, w0 = time.process_time(), time.perf_counter()
                await asyncio.gather(*(thread(n, steps) for _ in range(args.threads)))
                invokes = steps * args.threads
                cpu_ms[n].append((time.process_time() - c0) / invokes * 1000)
                wall_ms[n].append((time.perf_counter() - w0) / invokes * 1000)
    finally:
        for cm in cms.values():
            await cm.__aexit__(None, None, None)
    base = args.baseline if args.baseline in names else names[-1]
    bc, bw = statistics.median(cpu_ms[base]), statistics.median(wall_ms[base])
    print(f"per invoke, {args.threads} threads x {steps} invokes, medians of {args.reps} rounds:")
    for n in names:
        c, w = statistics.median(cpu_ms[n]), statistics.median(wall_ms[n])
        print(
            f"  {n:>10}: client CPU {c:6.2f} ms ({c / bc:.2f}x)  wall {w:6.2f} ms ({w / bw:.2f}x)"
        )


async def _drain(it: Any) -> None:
    async for _ in it:
        pass


async def run(args: argparse.Namespace) -> None:
    """The shared workload through our savers (and the growth measurement)."""
    import benchmarks.bench_savers as shared

    shared.SAVERS.update(FACTORIES)
    await bench(args)
    if args.growth:
        names = args.savers.split(",")
        cms = {n: SAVERS[n](args.url, args.pool) for n in names}
        try:
            savers = {n: await cm.__aenter__() for n, cm in cms.items()}
            growth = await history_growth(savers, [30, 300], args.reps, flat=args.flat)
        finally:
            for cm in cms.values():
                await cm.__aexit__(None, None, None)
        for name, by_size in growth.items():
            print(
                f"  history(limit=10) {name:>10}: "
                + "  ".join(f"{n} checkpoints {s * 1000:6.2f} ms" for n, s in by_size.items())
            )


def main() -> None:
    from tests._servers import postgres_url

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--url", default=None, help="Postgres URL (default: as the tests find one)")
    ap.add_argument("--savers", default="redis,plainredis,pg")
    ap.add_argument("--baseline", default="plainredis")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--pool", type=int, default=10, help="Postgres connections")
    ap.add_argument("--growth", action="store_true", help="history cost at 30 and 300 checkpoints")
    ap.add_argument(
        "--flat", action="store_true", help="--growth on a graph whose state keeps one size"
    )
    ap.add_argument("--micro", action="store_true", help="per-call medians instead of phases")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="--micro: our reads start with an empty chain cache (another process's read)",
    )
    ap.add_argument("--cpu", action="store_true", help="client CPU time per invoke")
    ap.add_argument("--reps", type=int, default=60, help="repetitions for --micro, --growth, --cpu")
    args = ap.parse_args()
    args.url = args.url or postgres_url()
    asyncio.run(micro(args) if args.micro else cpu(args) if args.cpu else run(args))


if __name__ == "__main__":
    main()
