"""Benchmark: what the ``source`` / ``step`` indexes (layout step 15) cost a ``put``.

A database of its own (dropped afterwards) with two schemas set up alike and
loaded alike (``--threads`` clones of one real thread of ``--template-steps``
graph runs, as in ``scale.py``); in ``without``, the two indexes of step 15 are
dropped. Then ``put`` of a new checkpoint on a random thread, the two schemas
interleaved (the order alternates per round): medians per round, the median of
those, and the ratio; and the size of the two indexes.

Usage::

    python benchmarks/put_with_metadata_indexes.py
    python benchmarks/put_with_metadata_indexes.py --threads 20000 --rounds 9
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale import DEFAULT_URL, _with_db, load, make_template
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

INDEXES = ("checkpoints_metadata_source_idx", "checkpoints_metadata_step_idx")
SCHEMAS = ("with", "without")


async def put_once(saver: AsyncPostgresSaver, rng: random.Random, threads: int) -> float:
    from langgraph.checkpoint.base.id import uuid6

    config = {"configurable": {"thread_id": f"th-{rng.randint(1, threads)}", "checkpoint_ns": ""}}
    tup = await saver.aget_tuple(config)  # type: ignore[arg-type]
    assert tup is not None
    checkpoint = {**tup.checkpoint, "id": str(uuid6())}
    t0 = time.perf_counter()
    await saver.aput(tup.config, checkpoint, {"source": "loop", "step": 99}, {})
    return time.perf_counter() - t0


async def main(args: argparse.Namespace) -> None:
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    db = f"bench_put_idx_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = _with_db(args.url, db)
    try:
        for schema in SCHEMAS:
            await make_template(url, schema, args.template_steps)
            if schema == "without":
                with psycopg.connect(url, autocommit=True) as conn:
                    for name in INDEXES:
                        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, name)))
            took = load(url, schema, args.threads)
            print(f"{schema}: {args.threads} threads loaded in {took:.0f} s", flush=True)
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT sum(pg_relation_size(c.oid)) FROM pg_class AS c"
                " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'with' AND c.relname = ANY(%s)",
                (list(INDEXES),),
            ).fetchone()
        assert row is not None
        print(f"the two indexes in 'with': {int(row[0]) / 2**20:.0f} MiB", flush=True)
        medians: dict[str, list[float]] = {s: [] for s in SCHEMAS}
        async with (
            AsyncPostgresSaver.from_conn_string(url, schema="with") as with_,
            AsyncPostgresSaver.from_conn_string(url, schema="without") as without,
        ):
            savers = {"with": with_, "without": without}
            rng = random.Random(11)
            for r in range(args.rounds + 1):  # round 0 warms up, not counted
                order = SCHEMAS if r % 2 else SCHEMAS[::-1]
                for schema in order:
                    samples = [
                        await put_once(savers[schema], rng, args.threads)
                        for _ in range(args.repeat)
                    ]
                    if r:
                        medians[schema].append(statistics.median(samples))
        a = statistics.median(medians["without"]) * 1000
        b = statistics.median(medians["with"]) * 1000
        print(f"\nput, medians of {args.rounds} rounds x {args.repeat} calls:")
        print(f"  without the step-15 indexes {a:7.3f} ms")
        print(f"  with them                   {b:7.3f} ms  ({b / a:.2f}x)")
        per_round = [w / o for w, o in zip(medians["with"], medians["without"], strict=True)]
        print(f"  per-round ratios: {' '.join(f'{x:.2f}' for x in per_round)}")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db))
            )
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=DEFAULT_URL)
    p.add_argument("--threads", type=int, default=10_000)
    p.add_argument("--template-steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--repeat", type=int, default=50, help="puts per schema per round")
    return p.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
