"""Load: 200 concurrent threads through one async saver, checked for loss and duplicates.

Each of ``--threads`` LangGraph threads runs ``--invokes`` ``ainvoke`` calls of
a 3-node chain (a growing list plus a 2 kB blob per step) concurrently, all
through ONE ``AsyncPostgresSaver`` on a pool of ``--pool`` connections, or ONE
``AsyncRedisSaver``. Afterwards every thread must hold exactly the expected
checkpoints (no loss, no duplicate ids, one linear chain) and final state.

Reported: errors, throughput (super-steps and checkpoints per second) and the
p50/p99 latency of a super-step (time from one checkpoint of a thread to the
next, node work included) and of ``aput`` alone.

Usage::

    python benchmarks/bench_load_200_threads.py                 # both backends
    python benchmarks/bench_load_200_threads.py --backend postgres --threads 200 --pool 10

Runs against ``POSTGRES_URL`` / ``REDIS_URL`` or the local servers (see
tests/_servers.py), in a schema / key prefix of its own that it removes.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from langgraph.graph import END, START, StateGraph

from tests._servers import postgres_url, redis_url

NODES = ("a", "b", "c")


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    blob: bytes


def graph(saver: Any) -> Any:
    def make(name: str) -> Any:
        async def run(state: S) -> dict[str, Any]:
            return {"log": [name], "blob": name.encode() * 2048}

        return run

    b = StateGraph(S)
    for n in NODES:
        b.add_node(n, make(n))
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    b.add_edge("c", END)
    return b.compile(checkpointer=saver)


@asynccontextmanager
async def open_saver(backend: str, pool: int) -> AsyncIterator[Any]:
    if backend == "postgres":
        import psycopg
        from psycopg import sql

        from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

        url, schema = postgres_url(), f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            async with AsyncPostgresSaver.from_conn_string(
                url, pool_size=pool, schema=schema
            ) as saver:
                await saver.setup()
                yield saver
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    else:
        import redis

        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
        try:
            async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
                await saver.setup()
                yield saver
        finally:
            client = redis.Redis.from_url(url)
            keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
            for i in range(0, len(keys), 500):
                client.delete(*keys[i : i + 500])
            client.close()


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def run(backend: str, threads: int, invokes: int, pool: int) -> dict[str, Any]:
    async with open_saver(backend, pool) as saver:
        put_lat: list[float] = []
        done_at: dict[str, list[float]] = {}
        original = saver.aput

        async def timed_put(config: Any, *args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            out = await original(config, *args, **kw)
            t1 = time.perf_counter()
            put_lat.append(t1 - t0)
            done_at.setdefault(config["configurable"]["thread_id"], []).append(t1)
            return out

        saver.aput = timed_put
        g = graph(saver)
        errors: list[BaseException] = []

        async def one(i: int) -> None:
            cfg = {"configurable": {"thread_id": f"load-{i}"}}
            for _ in range(invokes):
                try:
                    await g.ainvoke({"log": []}, cfg)
                except Exception as exc:  # counted, reported
                    errors.append(exc)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(threads)))
        wall = time.perf_counter() - t0

        # verification: every thread holds exactly its checkpoints, one linear chain
        per_invoke = len(NODES) + 1  # the input checkpoint + one per node
        lost = dup = broken = 0
        for i in range(threads):
            cfg = {"configurable": {"thread_id": f"load-{i}", "checkpoint_ns": ""}}
            tuples = [t async for t in saver.alist(cfg)]
            ids = [t.config["configurable"]["checkpoint_id"] for t in tuples]
            dup += len(ids) - len(set(ids))
            lost += max(0, invokes * per_invoke - len(set(ids)))
            parents = [
                t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
                for t in tuples
            ]
            broken += sum(p != c for p, c in zip(parents[:-1], ids[1:], strict=True))
            state = await g.aget_state({"configurable": {"thread_id": f"load-{i}"}})
            if state.values.get("log") != list(NODES) * invokes:
                broken += 1
        steps = [b - a for ts in done_at.values() for a, b in itertools.pairwise(ts)]
        return {
            "backend": backend,
            "threads": threads,
            "errors": len(errors),
            "first_error": repr(errors[0]) if errors else "",
            "lost": lost,
            "duplicated": dup,
            "broken_chains": broken,
            "checkpoints": len(put_lat),
            "wall_s": wall,
            "steps_per_s": threads * invokes * len(NODES) / wall,
            "puts_per_s": len(put_lat) / wall,
            "step_p50_ms": pct(steps, 0.50),
            "step_p99_ms": pct(steps, 0.99),
            "put_p50_ms": pct(put_lat, 0.50),
            "put_p99_ms": pct(put_lat, 0.99),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "redis", "both"], default="both")
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--invokes", type=int, default=5)
    parser.add_argument("--pool", type=int, default=10)
    args = parser.parse_args()
    backends = ["postgres", "redis"] if args.backend == "both" else [args.backend]
    failed = False
    for backend in backends:
        r = asyncio.run(run(backend, args.threads, args.invokes, args.pool))
        print(
            f"{r['backend']:8} threads={r['threads']} errors={r['errors']} lost={r['lost']} "
            f"duplicated={r['duplicated']} broken={r['broken_chains']} "
            f"checkpoints={r['checkpoints']} wall={r['wall_s']:.1f}s "
            f"super-steps/s={r['steps_per_s']:.0f} puts/s={r['puts_per_s']:.0f} "
            f"step p50={r['step_p50_ms']:.1f}ms p99={r['step_p99_ms']:.1f}ms "
            f"put p50={r['put_p50_ms']:.1f}ms p99={r['put_p99_ms']:.1f}ms"
        )
        if r["first_error"]:
            print("  first error:", r["first_error"])
        failed |= bool(r["errors"] or r["lost"] or r["duplicated"] or r["broken_chains"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
