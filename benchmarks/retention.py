"""Benchmark: how fast retention deletes idle threads, and what it costs concurrent graph runs.

Storage: a schema of its own (dropped afterwards). ``--idle`` idle threads are
cloned from one real thread of ``--template-steps`` graph steps (its
checkpoints, blobs and writes, copied row for row under new thread ids), and
their activity marks are moved 40 days back.

Phases, in one process:

1. **Deletion rate**: ``apply_retention(older_than=30 days, batch_size=--batch)``
   one batch at a time: threads and checkpoints deleted per second, and each
   batch's transaction time (the longest any row lock is held).
2. **Concurrent graph runs**: ``benchmarks/bench_savers.py``'s workload
   (``--threads`` threads x ``--steps`` ``ainvoke``s of a 3-node graph, ~1 KiB
   more state per step) on its own saver, run alone and while another saver
   deletes freshly seeded idle threads; and alone with the activity trigger
   disabled (what the mark costs a run). The three variants are interleaved
   (the order rotates each round); medians of the run time and of the per-
   ``ainvoke`` p95 latency.

Usage::

    python benchmarks/retention.py                          # 20,000 idle threads
    python benchmarks/retention.py --idle 50000 --rounds 5 --batch 1000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_savers import build_graph
from langgraph_durable.checkpointers.postgres import (
    AsyncPostgresSaver,
    RetentionPolicy,
    aapply_retention,
)

DEFAULT_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
TEMPLATE = "template"
POLICY_AGE = timedelta(days=30)


def _q(template: str, schema: str) -> sql.Composed:
    return sql.SQL(template).format(s=sql.Identifier(schema))


def seed_idle(url: str, schema: str, count: int, tag: str) -> int:
    """Clone the template thread ``count`` times as idle threads; their checkpoint count."""
    clone = {
        "checkpoints": "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,"
        " checkpoint, metadata, metadata_exact, schema_version",
        "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version, type, blob,"
        " base_version, root_version, writes_of",
        "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,"
        " channel, type, blob",
    }
    with psycopg.connect(url, autocommit=True) as conn:
        for table, cols in clone.items():
            rest = cols.split(", ", 1)[1]
            conn.execute(
                sql.SQL(
                    "INSERT INTO {s}.{t} ("
                    + cols
                    + ") SELECT %s || i, "
                    + rest
                    + " FROM {s}.{t}, generate_series(1, %s) AS i WHERE thread_id = %s"
                ).format(s=sql.Identifier(schema), t=sql.Identifier(table)),
                (f"idle-{tag}-", count, TEMPLATE),
            )
        conn.execute(
            _q(
                "UPDATE {s}.durable_thread_activity SET active_at = now() - interval '40 days'"
                " WHERE thread_id LIKE %s",
                schema,
            ),
            (f"idle-{tag}-%",),
        )
        conn.execute(_q("ANALYZE {s}.durable_thread_activity", schema))
        row = conn.execute(
            _q("SELECT count(*) FROM {s}.checkpoints WHERE thread_id = %s", schema), (TEMPLATE,)
        ).fetchone()
    return count * int(row[0]) if row else 0


async def deletion_rate(saver: AsyncPostgresSaver, batch: int) -> dict[str, Any]:
    """Delete every idle thread one batch at a time; rates and batch times."""
    policy = RetentionPolicy(older_than=POLICY_AGE, batch_size=batch)
    cursor, times, threads, checkpoints = None, [], 0, 0
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        report = await aapply_retention(saver, policy, max_batches=1, after=cursor)
        times.append(time.perf_counter() - t0)
        threads += len(report.deleted)
        checkpoints += report.checkpoints
        cursor = report.cursor
        if cursor is None:
            break
    total = time.perf_counter() - started
    return {
        "threads": threads,
        "checkpoints": checkpoints,
        "seconds": total,
        "batches": len(times),
        "batch_median_ms": statistics.median(times) * 1000,
        "batch_max_ms": max(times) * 1000,
    }


async def graph_runs(saver: AsyncPostgresSaver, threads: int, steps: int) -> tuple[float, float]:
    """The workload's run time and per-``ainvoke`` p95 latency (seconds)."""
    graph = build_graph(saver)
    latencies: list[float] = []

    async def one(tid: str) -> None:
        config = {"configurable": {"thread_id": tid}}
        for _ in range(steps):
            t0 = time.perf_counter()
            await graph.ainvoke({"messages": ["user: next"]}, config)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(f"run-{uuid.uuid4()}") for _ in range(threads)))
    wall = time.perf_counter() - t0
    latencies.sort()
    return wall, latencies[int(0.95 * (len(latencies) - 1))]


async def with_retention(
    runner: AsyncPostgresSaver, deleter: AsyncPostgresSaver, args: argparse.Namespace
) -> tuple[float, float, int]:
    """The workload while ``deleter`` deletes idle threads (as many as it gets to)."""
    policy = RetentionPolicy(older_than=POLICY_AGE, batch_size=args.batch)
    done = asyncio.Event()
    deleted = 0

    async def delete() -> None:
        nonlocal deleted
        cursor = None
        while not done.is_set():
            report = await aapply_retention(deleter, policy, max_batches=1, after=cursor)
            deleted += len(report.deleted)
            cursor = report.cursor
            if cursor is None:
                return

    task = asyncio.create_task(delete())
    wall, p95 = await graph_runs(runner, args.threads, args.steps)
    done.set()
    await task
    return wall, p95, deleted


async def set_trigger(url: str, schema: str, enabled: bool) -> None:
    verb = "ENABLE" if enabled else "DISABLE"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            _q(f"ALTER TABLE {{s}}.checkpoints {verb} TRIGGER durable_thread_active", schema)
        )


async def main(args: argparse.Namespace) -> None:
    schema = f"bench_retention_{uuid.uuid4().hex[:8]}"
    url = args.url
    try:
        async with (
            AsyncPostgresSaver.from_conn_string(url, schema=schema) as runner,
            AsyncPostgresSaver.from_conn_string(url, schema=schema) as deleter,
        ):
            await runner.setup()
            graph = build_graph(runner)
            for _ in range(args.template_steps):
                await graph.ainvoke(
                    {"messages": ["user: next"]}, {"configurable": {"thread_id": TEMPLATE}}
                )
            n_cp = seed_idle(url, schema, args.idle, "rate")
            print(f"seeded {args.idle} idle threads, {n_cp} checkpoints", flush=True)
            rate = await deletion_rate(deleter, args.batch)
            print(
                f"deletion: {rate['threads']} threads, {rate['checkpoints']} checkpoints in "
                f"{rate['seconds']:.2f} s = {rate['threads'] / rate['seconds']:.0f} threads/s, "
                f"{rate['checkpoints'] / rate['seconds']:.0f} checkpoints/s; "
                f"{rate['batches']} batches of {args.batch}: median "
                f"{rate['batch_median_ms']:.1f} ms, max {rate['batch_max_ms']:.1f} ms",
                flush=True,
            )
            await graph_runs(runner, 2, 3)  # warm-up
            results: dict[str, list[tuple[float, float]]] = {
                "alone": [],
                "alone, no activity trigger": [],
                "while retention deletes": [],
            }
            variants = list(results)
            for r in range(args.rounds):
                order = variants[r % 3 :] + variants[: r % 3]
                for name in order:
                    if name == "while retention deletes":
                        seed_idle(url, schema, args.concurrent_idle, f"r{r}")
                        wall, p95, deleted = await with_retention(runner, deleter, args)
                        extra = f" ({deleted} threads deleted meanwhile)"
                    else:
                        off = name.endswith("no activity trigger")
                        if off:
                            await set_trigger(url, schema, False)
                        try:
                            wall, p95 = await graph_runs(runner, args.threads, args.steps)
                        finally:
                            if off:
                                await set_trigger(url, schema, True)
                        extra = ""
                    results[name].append((wall, p95))
                    print(
                        f"round {r + 1} {name:>28}: run {wall * 1000:8.1f} ms, "
                        f"p95 ainvoke {p95 * 1000:6.1f} ms{extra}",
                        flush=True,
                    )
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(_q("DROP SCHEMA IF EXISTS {s} CASCADE", schema))
    base_wall = statistics.median(w for w, _ in results["alone"])
    base_p95 = statistics.median(p for _, p in results["alone"])
    print(f"\nmedians of {args.rounds} rounds ({args.threads} threads x {args.steps} ainvoke):")
    for name, rows in results.items():
        wall = statistics.median(w for w, _ in rows)
        p95 = statistics.median(p for _, p in rows)
        print(
            f"  {name:>28}: run {wall * 1000:8.1f} ms ({wall / base_wall:.2f}x alone), "
            f"p95 ainvoke {p95 * 1000:6.1f} ms ({p95 / base_p95:.2f}x)"
        )
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=DEFAULT_URL)
    p.add_argument("--idle", type=int, default=20_000, help="idle threads for the rate phase")
    p.add_argument(
        "--concurrent-idle", type=int, default=5_000, help="idle threads seeded per round"
    )
    p.add_argument("--template-steps", type=int, default=5, help="graph steps per idle thread")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--threads", type=int, default=10)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    return p.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
