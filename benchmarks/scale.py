"""Benchmark: per-thread costs at 10,000 checkpoints and at 10 million, Postgres and Redis.

Postgres: a database of its own (dropped afterwards) with two schemas, ``small``
(``--small-threads`` threads) and ``large`` (``--threads`` threads). Each thread
is a clone of one real thread of ``--template-steps`` graph runs (5 checkpoints
each; its checkpoints, blobs and writes, copied server-side with ``INSERT ...
SELECT`` under new thread ids, each with a ``user`` metadata key among 1,000
values): the fast load. ``small`` gets ``--small-waits`` waiting approvals,
``large`` ``--waits`` (deadlines over the next 30 days, ``--due`` of them
already due). Then, interleaved between the two schemas (the order alternates
per round), medians of:

* ``get_tuple`` of a random thread's latest checkpoint; ``put`` of a new
  checkpoint on a random thread; ``list`` of one thread (limit 10);
  ``list(None, filter=..., limit=10)`` across threads on a key of the
  application's (``user``: the GIN index) and on LangGraph's (``source`` and
  ``step``: an index in the listing's order), with their plans;
* the inbox (``list_waits(kind="approval", limit=50)``), the sweeper's due
  query (``claim_due_waits(limit=10)``, with waits due), and the same with
  nothing due;
* ``delete_thread`` of a thread; one retention batch of up to 500 idle threads
  (per thread).

Reads, puts and lists use the lower half of the threads, ``delete_thread`` the
highest-numbered ones and retention those in between, so a thread count too
small for the rounds is refused up front, naming the flag.

Redis (``--redis-checkpoints``): a redis-server of its own on a free port (no
persistence, ``--redis-maxmemory``), two key prefixes: the small one loaded with
concurrent ``aput`` calls, a large one by ``aput`` of its first thread and a
server-side copy of that thread's keys (``DUMP`` / ``RESTORE``) under the other
thread ids; the memory each checkpoint takes (``INFO memory`` before and
after), and ``get_tuple``/``put`` latency at the two sizes.

Usage::

    python benchmarks/scale.py                  # 10 million vs 10,100 (Postgres), 3 million (Redis)
    python benchmarks/scale.py --threads 20000 --redis-checkpoints 50000   # quicker
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
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_savers import build_graph
from langgraph_durable.checkpointers.postgres import (
    AsyncPostgresSaver,
    RetentionPolicy,
    aapply_retention,
)
from tests._parts import part_of

DEFAULT_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
TEMPLATE = "template"
COLS = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,"
    " checkpoint, metadata, metadata_exact, schema_version",
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version, type, blob,"
    " base_version, root_version, writes_of",
    "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,"
    " channel, type, blob",
}
CHUNK = 10_000  # threads per INSERT ... SELECT: short statements, visible progress


def _with_db(url: str, db: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + db, p.query, p.fragment))


def _q(template: str, schema: str, **names: str) -> sql.Composed:
    ids = {k: sql.Identifier(v) for k, v in names.items()}
    return sql.SQL(template).format(s=sql.Identifier(schema), **ids)


async def make_template(url: str, schema: str, steps: int) -> None:
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
        await saver.setup()
        graph = build_graph(saver)
        for _ in range(steps):
            await graph.ainvoke(
                {"messages": ["user: next"]}, {"configurable": {"thread_id": TEMPLATE}}
            )


def load(url: str, schema: str, threads: int) -> float:
    """Clone the template into ``threads`` threads ``th-1``..; seconds taken."""
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        for lo in range(1, threads + 1, CHUNK):
            hi = min(threads, lo + CHUNK - 1)
            for table, cols in COLS.items():
                rest = cols.split(", ", 1)[1]
                if table == "checkpoints":
                    rest = rest.replace(
                        "metadata,", "metadata || jsonb_build_object('user', 'u' || (i %% 1000)),"
                    )
                conn.execute(
                    _q(
                        "INSERT INTO {s}.{t} ("
                        + cols
                        + ") SELECT 'th-' || i, "
                        + rest
                        + " FROM {s}.{t}, generate_series(%s::int, %s::int) AS i"
                        + " WHERE thread_id = %s",
                        schema,
                        t=table,
                    ),
                    (lo, hi, TEMPLATE),
                )
            if hi % 100_000 == 0 or hi == threads:
                print(f"  {schema}: {hi} threads loaded", flush=True)
        for table in (*COLS, "durable_thread_activity"):
            conn.execute(_q("VACUUM ANALYZE {s}.{t}", schema, t=table))
    return time.perf_counter() - t0


def seed_waits(url: str, schema: str, count: int, due: int) -> None:
    """``count`` waiting approvals (threads w-1.., apart from the loaded ones); ``due`` are due."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            _q(
                "INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns,"
                " checkpoint_id, task_id, kind, deadline, approvers, value_type, value)"
                " SELECT 'w-' || i, 'approval-' || i, '', 'c', 'task', 'approval',"
                " CASE WHEN i <= %s::int THEN now() - interval '1 hour'"
                " ELSE now() + (i %% 43200) * interval '1 minute' END,"
                " ARRAY['ops'], 'null', NULL FROM generate_series(1, %s::int) AS i",
                schema,
            ),
            (due, count),
        )
        conn.execute(_q("VACUUM ANALYZE {s}.durable_waits", schema))


def loop_steps(url: str, schema: str) -> list[int]:
    """The steps of the template's checkpoints written by the loop (``source`` ``loop``)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            _q(
                "SELECT DISTINCT (metadata ->> 'step')::int FROM {s}.checkpoints"
                " WHERE thread_id = %s AND metadata ->> 'source' = 'loop'",
                schema,
            ),
            (TEMPLATE,),
        ).fetchall()
    return sorted(r[0] for r in rows)


def count_of(url: str, schema: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(_q("SELECT count(*) FROM {s}.{t}", schema, t=table)).fetchone()
    return int(row[0]) if row else 0


def size_of(url: str, schema: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class AS c"
            " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchone()
    return int(row[0] or 0) if row else 0


async def explain_filter(url: str, schema: str, where: dict[str, Any]) -> str:
    """The plan of list(None, filter=where, limit=10), its scans one line each."""
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
        from langgraph_durable.checkpointers.postgres._listing import ListPages

        stmt = ListPages(saver.core, None, where, None, 10).next_statement()
        assert stmt is not None
        async with await psycopg.AsyncConnection.connect(url) as conn:
            cur = await conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + stmt.query, stmt.params)
            lines = [r[0] for r in await cur.fetchall()]
    wanted = ("Scan", "Execution Time", "Limit")
    return "\n".join(f"    {line.strip()}" for line in lines if any(w in line for w in wanted))


class Ranges:
    """Which loaded threads each kind of operation uses, so none meets another's leftovers.

    Reads, puts and filtered lists use the lower half; ``delete_thread`` takes
    the highest-numbered threads, one per call; retention ages up to 500 of
    the threads in between.
    """

    def __init__(self, threads: int, deletes: int) -> None:
        self.threads = threads
        self.reads = threads // 2
        self.deletes = deletes
        self.retention = min(500, threads - self.reads - deletes)

    def problem(self) -> str | None:
        """Why these ranges do not fit, or None."""
        if self.reads < 1 or self.retention < 1:
            return (
                f"{self.threads} threads leave no room: the benchmark reads from half of "
                f"them, deletes {self.deletes} ((rounds + 1) x repeat) and ages at least "
                f"one for retention, so it needs at least {2 * self.deletes + 1}"
            )
        return None


class PgProbe:
    """The timed operations on one schema of ``threads`` threads."""

    def __init__(self, saver: AsyncPostgresSaver, ranges: Ranges, steps: list[int]) -> None:
        self.saver = saver
        self.ranges = ranges
        self.steps = steps
        self.deleted = 0
        self.rng = random.Random(7)
        self.last = 0.0

    def thread(self) -> dict[str, Any]:
        tid = f"th-{self.rng.randint(1, self.ranges.reads)}"
        return {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}

    async def get_tuple(self) -> None:
        assert await self.saver.aget_tuple(self.thread()) is not None

    async def put(self) -> None:
        from langgraph.checkpoint.base.id import uuid6

        tup = await self.saver.aget_tuple(self.thread())
        assert tup is not None
        checkpoint = {**tup.checkpoint, "id": str(uuid6())}
        t0 = time.perf_counter()
        await self.saver.aput(tup.config, checkpoint, {"source": "loop", "step": 99}, {})
        self.last = time.perf_counter() - t0  # only the put is timed

    async def list_thread(self) -> None:
        got = [t async for t in self.saver.alist(self.thread(), limit=10)]
        assert len(got) == 10

    async def list_filter_user(self) -> None:
        # a key of the application's: the GIN index finds every match, then the newest 10
        # are kept (u<i> owns th-i, th-i+1000...; i is in the lower half)
        user = f"u{self.rng.randint(1, min(999, self.ranges.reads))}"
        got = [t async for t in self.saver.alist(None, filter={"user": user}, limit=10)]
        assert len(got) == 10

    async def list_filter_step(self) -> None:
        # keys LangGraph writes: read in order from the step index, stopping at 10
        where = {"source": "loop", "step": self.rng.choice(self.steps)}
        got = [t async for t in self.saver.alist(None, filter=where, limit=10)]
        assert len(got) == 10

    async def inbox(self) -> None:
        await part_of(self.saver, "waits").alist_waits(kind="approval", limit=50)

    async def sweep_due(self) -> None:
        got = await part_of(self.saver, "waits").aclaim_due_waits(
            now=datetime.now(timezone.utc), owner="bench", lease=timedelta(hours=1), limit=10
        )
        assert len(got) == 10, len(got)

    async def sweep_nothing_due(self) -> None:
        past = datetime.now(timezone.utc) - timedelta(days=1)
        got = await part_of(self.saver, "waits").aclaim_due_waits(
            now=past, owner="bench", lease=timedelta(hours=1), limit=10
        )
        assert got == []

    async def delete_thread(self) -> None:
        assert self.deleted < self.ranges.deletes
        await self.saver.adelete_thread(f"th-{self.ranges.threads - self.deleted}")
        self.deleted += 1


OPS: list[str] = [
    "get_tuple",
    "put",
    "list_thread",
    "list_filter_user",
    "list_filter_step",
    "inbox",
    "sweep_due",
    "sweep_nothing_due",
    "delete_thread",
]


async def timed(call: Callable[[], Awaitable[None]], probe: PgProbe, name: str) -> float:
    t0 = time.perf_counter()
    await call()
    took = time.perf_counter() - t0
    return probe.last if name == "put" else took


async def retention_batch(
    url: str, schema: str, saver: AsyncPostgresSaver, ranges: Ranges
) -> float:
    """Seconds per thread of one retention batch of up to 500 idle threads (aged, mid-range)."""
    n, first = ranges.retention, ranges.reads + 1
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            _q(
                "UPDATE {s}.durable_thread_activity SET active_at = now() - interval '40 days'"
                " WHERE thread_id IN"
                " (SELECT 'th-' || i FROM generate_series(%s::int, %s::int) AS i)",
                schema,
            ),
            (first, first + n - 1),
        )
    policy = RetentionPolicy(older_than=timedelta(days=30), batch_size=n)
    t0 = time.perf_counter()
    report = await aapply_retention(saver, policy, max_batches=1)
    took = time.perf_counter() - t0
    assert len(report.deleted) == n, report
    return took / n


async def postgres(args: argparse.Namespace) -> None:
    db = f"bench_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = _with_db(args.url, db)
    sizes = {"small": args.small_threads, "large": args.threads}
    waits = {"small": args.small_waits, "large": args.waits}
    ranges = {s: Ranges(n, (args.rounds + 1) * args.repeat) for s, n in sizes.items()}
    steps: dict[str, list[int]] = {}
    try:
        for schema, threads in sizes.items():
            await make_template(url, schema, args.template_steps)
            steps[schema] = loop_steps(url, schema)
            took = load(url, schema, threads)
            seed_waits(url, schema, waits[schema], args.due)
            n = count_of(url, schema, "checkpoints")
            print(
                f"{schema}: {threads} threads, {n} checkpoints, {waits[schema]} waiting; loaded "
                f"in {took:.0f} s ({n / took:.0f} checkpoints/s), "
                f"{size_of(url, schema) / 2**20:.0f} MiB",
                flush=True,
            )
        step = steps["large"][len(steps["large"]) // 2]
        for where in ({"user": "u7"}, {"source": "loop", "step": step}):
            for schema in sizes:
                print(f"{schema}: EXPLAIN ANALYZE of list(None, filter={where}, limit=10):")
                print(await explain_filter(url, schema, where), flush=True)
        results: dict[str, dict[str, list[float]]] = {s: {op: [] for op in OPS} for s in sizes}
        results["small"]["retention batch, per thread"] = []
        results["large"]["retention batch, per thread"] = []
        async with (
            AsyncPostgresSaver.from_conn_string(url, schema="small") as small,
            AsyncPostgresSaver.from_conn_string(url, schema="large") as large,
        ):
            probes = {
                "small": PgProbe(small, ranges["small"], steps["small"]),
                "large": PgProbe(large, ranges["large"], steps["large"]),
            }
            for r in range(args.rounds + 1):  # round 0 warms up, not counted
                order = list(sizes) if r % 2 else list(sizes)[::-1]
                for op in OPS:
                    for schema in order:
                        probe = probes[schema]
                        samples = [
                            await timed(getattr(probe, op), probe, op) for _ in range(args.repeat)
                        ]
                        if r:
                            results[schema][op].append(statistics.median(samples))
            for schema in sizes:
                saver = small if schema == "small" else large
                took = await retention_batch(url, schema, saver, ranges[schema])
                results[schema]["retention batch, per thread"].append(took)
        print(f"\nPostgres medians ({args.rounds} rounds x {args.repeat} calls), ms:")
        print(f"  {'operation':<30} {'small':>9} {'large':>9}  large/small")
        for op in results["small"]:
            a = statistics.median(results["small"][op]) * 1000
            b = statistics.median(results["large"][op]) * 1000
            print(f"  {op:<30} {a:9.2f} {b:9.2f}  {b / a:5.2f}x")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db))
            )


async def redis_scale(args: argparse.Namespace) -> None:
    import redis

    from langgraph_durable.checkpointers.redis import AsyncRedisSaver
    from tests.redis._own_server import OwnRedis

    server = OwnRedis(
        args=[
            *("--save", "", "--appendonly", "no"),
            *("--maxmemory", args.redis_maxmemory, "--maxmemory-policy", "noeviction"),
        ]
    ).start()
    client = redis.Redis.from_url(server.url)
    try:
        sizes = {"small": args.redis_small, "large": args.redis_checkpoints}
        per = args.redis_per_thread
        savers: dict[str, Any] = {}
        stacks = []
        for name in sizes:
            cm = AsyncRedisSaver.from_conn_string(server.url, prefix=f"scale-{name}")
            saver = await cm.__aenter__()
            stacks.append(cm)
            await saver.setup()
            savers[name] = saver
        template = []
        graph = build_graph(savers["small"])
        cfg = {"configurable": {"thread_id": TEMPLATE}}
        while len(template) < per:
            await graph.ainvoke({"messages": ["user: next"]}, cfg)
            template = [t async for t in savers["small"].alist(cfg)][::-1]
        template = template[:per]
        for name, total in sizes.items():
            before = int(client.info("memory")["used_memory"])
            t0 = time.perf_counter()
            threads = total // per
            put = threads if threads <= args.redis_put_threads else 1
            await redis_load(savers[name], template, put, args.redis_concurrency)
            if put < threads:
                redis_clone(client, f"scale-{name}", "th-1", put + 1, threads)
            took = time.perf_counter() - t0
            grown = int(client.info("memory")["used_memory"]) - before
            # the last thread (cloned, or put) reads back as the first
            ends = [
                await savers[name].aget_tuple({"configurable": {"thread_id": f"th-{n}"}})
                for n in (1, threads)
            ]
            assert ends[0] and ends[1] and ends[0].checkpoint["id"] == ends[1].checkpoint["id"]
            how = "aput" if put == threads else f"th-1 by aput, cloned {threads - put} times"
            print(
                f"redis {name}: {total} checkpoints ({threads} threads x {per}; {how}) in "
                f"{took:.0f} s ({total / took:.0f}/s); {grown / total:.0f} bytes per checkpoint "
                f"(INFO memory used_memory grew {grown / 2**20:.0f} MiB)",
                flush=True,
            )
        results: dict[str, dict[str, list[float]]] = {
            n: {"get_tuple": [], "put": []} for n in sizes
        }
        rng = random.Random(3)
        for r in range(args.rounds + 1):
            order = list(sizes) if r % 2 else list(sizes)[::-1]
            for name in order:
                saver, threads = savers[name], sizes[name] // per
                gets, puts = [], []
                for _ in range(args.repeat):
                    c = {
                        "configurable": {
                            "thread_id": f"th-{rng.randint(1, threads)}",
                            "checkpoint_ns": "",
                        }
                    }
                    t0 = time.perf_counter()
                    tup = await saver.aget_tuple(c)
                    gets.append(time.perf_counter() - t0)
                    from langgraph.checkpoint.base.id import uuid6

                    cp = {**tup.checkpoint, "id": str(uuid6())}
                    t0 = time.perf_counter()
                    await saver.aput(tup.config, cp, {"source": "loop", "step": 99}, {})
                    puts.append(time.perf_counter() - t0)
                if r:
                    results[name]["get_tuple"].append(statistics.median(gets))
                    results[name]["put"].append(statistics.median(puts))
        print(f"\nRedis medians ({args.rounds} rounds x {args.repeat} calls), ms:")
        print(f"  {'operation':<30} {'small':>9} {'large':>9}  large/small")
        for op in ("get_tuple", "put"):
            a = statistics.median(results["small"][op]) * 1000
            b = statistics.median(results["large"][op]) * 1000
            print(f"  {op:<30} {a:9.2f} {b:9.2f}  {b / a:5.2f}x")
        for cm in stacks:
            await cm.__aexit__(None, None, None)
    finally:
        client.close()
        server.stop()


def redis_clone(client: Any, prefix: str, source: str, first: int, last: int) -> None:
    """Copy thread ``source``'s keys to threads th-``first``..th-``last``, server-side.

    ``DUMP`` once, ``RESTORE`` under each new thread's keys (the per-thread
    keys hold no thread id: it is in their names only), and the new ids added
    to the registry shard and the schema-version sets the source is in, as a
    put would. The source's run-lease record, which names its thread, is not
    copied.
    """
    from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES, Keys, shard_of

    keys = Keys(prefix)
    blobs = [(i, client.dump(k)) for i, k in enumerate(keys.thread(source))]
    blobs = [(i, b) for i, b in blobs if b is not None]
    versions = [
        k for k in client.scan_iter(match=f"{{{prefix}:v:*}}") if client.sismember(k, source)
    ]
    assert blobs and versions, (blobs, versions)
    pipe = client.pipeline(transaction=False)
    for n in range(first, last + 1):
        tid = f"th-{n}"
        names = keys.thread(tid)
        for i, blob in blobs:
            pipe.restore(names[i], 0, blob)
        pipe.sadd(keys.registry(shard_of(tid)), tid)
        for v in versions:
            pipe.sadd(v, tid)
        if n % 2000 == 0 or n == last:
            pipe.execute()
        if n % 100_000 == 0:
            print(f"  {prefix}: {n} threads", flush=True)
    assert len(THREAD_SUFFIXES) == len(names)


async def redis_load(saver: Any, template: list[Any], threads: int, concurrency: int) -> None:
    """Put the template's checkpoints, in order, into threads th-1.. (``concurrency`` at once)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            config: dict[str, Any] = {"configurable": {"thread_id": f"th-{i}", "checkpoint_ns": ""}}
            previous: dict[str, Any] = {}
            for tup in template:
                versions = tup.checkpoint["channel_versions"]
                new = {k: v for k, v in versions.items() if previous.get(k) != v}
                config = await saver.aput(config, tup.checkpoint, tup.metadata, new)
                previous = versions

    await asyncio.gather(*(one(i) for i in range(1, threads + 1)))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=DEFAULT_URL)
    p.add_argument("--threads", type=int, default=100_000)
    p.add_argument("--small-threads", type=int, default=100)
    p.add_argument(
        "--template-steps", type=int, default=20, help="graph runs per thread (5 checkpoints each)"
    )
    p.add_argument("--waits", type=int, default=100_000)
    p.add_argument("--small-waits", type=int, default=1_000)
    p.add_argument("--due", type=int, default=400, help="waits already due (per schema)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=5, help="calls per operation per round")
    p.add_argument("--redis-checkpoints", type=int, default=3_000_000)
    p.add_argument("--redis-small", type=int, default=10_000)
    p.add_argument("--redis-per-thread", type=int, default=10)
    p.add_argument("--redis-concurrency", type=int, default=32)
    p.add_argument(
        "--redis-put-threads",
        type=int,
        default=10_000,
        help="sizes of up to this many threads are loaded by aput; larger ones clone th-1",
    )
    p.add_argument("--redis-maxmemory", default="8gb", help="the own redis-server's maxmemory")
    p.add_argument("--skip", choices=["postgres", "redis"], default=None)
    args = p.parse_args()
    if args.skip != "postgres":
        calls = (args.rounds + 1) * args.repeat
        for flag, threads in (("--small-threads", args.small_threads), ("--threads", args.threads)):
            problem = Ranges(threads, calls).problem()
            if problem:
                p.error(f"{flag}: {problem}")
        if args.due < 10 * calls:
            p.error(f"--due: {args.due} due waits; the sweeper probe claims {10 * calls}")
        for flag, count in (("--small-waits", args.small_waits), ("--waits", args.waits)):
            if count < args.due:
                p.error(f"{flag}: {count} waits, fewer than --due ({args.due})")
    return args


async def main(args: argparse.Namespace) -> None:
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if args.skip != "postgres":
        await postgres(args)
    if args.skip != "redis":
        await redis_scale(args)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
