"""Benchmark: what run leases cost, and how finding orphaned runs scales.

Part 1, heartbeat cost: the same workload with leases off, with the default
leases (30 s lease, 10 s heartbeat) and with an aggressive heartbeat (every
50 ms, lease 200 ms) that renews several times in every run. Workload: a
20-step StateGraph run on a new thread; each step does ~1 ms of CPU work
(SHA-256 over 256 KiB) and waits 5 ms (a fast tool call), and its state grows
by a 200-byte item. The three savers stay open and their runs alternate one
by one (the order rotating), ``--rounds`` rounds of ``--runs`` runs of each;
the script prints each variant's median run time and CPU per run (all
threads), its overhead over "off", the wall time spent in lease code outside
the shared round trips, and the saver round trips per run.

Part 2, finding orphans: the time of ``find_expired_leases(limit=100)`` with
10 orphaned runs among 0, 10,000 and 100,000 finished or waiting threads
(their lease records, state ``released``: what a finished or paused run
leaves behind). Median of ``--finds`` calls per size.

Usage::

    python benchmarks/bench_leases.py                 # both backends, both parts
    python benchmarks/bench_leases.py --backends pg --rounds 9
"""

from __future__ import annotations

import argparse
import hashlib
import operator
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any, TypedDict
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis
from langgraph.graph import END, START, StateGraph
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph_durable.checkpointers import LeaseSettings
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._lease_commands import RedisLeaseKeys, to_ms
from tests._parts import part_of

STEPS = 20
BLOCK = b"x" * 256 * 1024


class State(TypedDict):
    n: int
    items: Annotated[list[str], operator.add]


def _step(state: State) -> dict[str, Any]:
    hashlib.sha256(BLOCK).digest()
    time.sleep(0.005)
    return {"n": state["n"] + 1, "items": ["i" * 200]}


def _route(state: State) -> str:
    return "step" if state["n"] < STEPS else END


def build(saver: Any) -> Any:
    g: StateGraph[Any] = StateGraph(State)
    g.add_node("step", _step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", _route)
    return g.compile(checkpointer=saver)


VARIANTS: dict[str, LeaseSettings | bool] = {
    "off": False,
    "default (30s/10s)": True,
    "aggressive (0.2s/0.05s)": LeaseSettings(
        lease=timedelta(seconds=0.2), heartbeat=timedelta(seconds=0.05)
    ),
}


# -- storage -------------------------------------------------------------------------


def _with_db(url: str, db: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + db, p.query, p.fragment))


@contextmanager
def pg_database(url: str) -> Iterator[str]:
    name = f"bench_leases_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_db(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def saver_for(backend: str, where: str, prefix: str, leases: Any) -> Iterator[Any]:
    if backend == "pg":
        with PostgresSaver.from_conn_string(where, leases=leases) as saver:
            saver.setup()
            yield saver
    else:
        with RedisSaver.from_conn_string(where, prefix=prefix, leases=leases) as saver:
            saver.setup()
            yield saver


def _drop_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        batch = []
        for key in client.scan_iter(match=f"*{prefix}*", count=5000):
            batch.append(key)
            if len(batch) >= 5000:
                client.delete(*batch)
                batch = []
        if batch:
            client.delete(*batch)
    finally:
        client.close()


# -- part 1 --------------------------------------------------------------------------

LEASE_TIME = [0.0]
CALLS = [0]


def _timed(fn: Any, sign: float = 1.0) -> Any:
    def wrapper(*a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            LEASE_TIME[0] += sign * (time.perf_counter() - t0)

    return wrapper


def _counted(fn: Any) -> Any:
    def wrapper(*a: Any, **kw: Any) -> Any:
        CALLS[0] += 1
        return fn(*a, **kw)

    return wrapper


def _instrument() -> None:
    """Count the wall time spent in lease code and the saver's round trips.

    Lease code: the run hooks, every heartbeat, and ``around`` (a run's first
    and last write) minus the write it sends (``run_with_lease``, which
    carries the lease statement in the same round trip). Round trips: calls
    that wait for the server (a Postgres call or a Redis pipeline).
    """
    from langgraph_durable.checkpointers._run_leases import RunLeases
    from langgraph_durable.checkpointers.postgres._lease_store import PostgresLeases
    from langgraph_durable.checkpointers.postgres._runner import PostgresRunner
    from langgraph_durable.checkpointers.redis._lease_store import RedisLeases
    from langgraph_durable.checkpointers.redis._runner import RedisRunner

    for name in ("after", "beat", "around"):
        setattr(RunLeases, name, _timed(getattr(RunLeases, name)))
    PostgresLeases.run_with_lease = _timed(  # type: ignore[method-assign]
        PostgresLeases.run_with_lease, -1.0
    )
    RedisLeases.run_with_lease = _timed(  # type: ignore[method-assign]
        RedisLeases.run_with_lease, -1.0
    )
    PostgresRunner.run = _counted(PostgresRunner.run)  # type: ignore[method-assign]
    PostgresRunner.run_together = _counted(  # type: ignore[method-assign]
        PostgresRunner.run_together
    )
    RedisRunner.execute = _counted(RedisRunner.execute)  # type: ignore[method-assign]


def heartbeat_cost(backend: str, where: str, args: argparse.Namespace) -> None:
    prefix = f"bl{uuid.uuid4().hex[:8]}"
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    cpu: dict[str, list[float]] = {name: [] for name in VARIANTS}
    ratios: dict[str, list[float]] = {name: [] for name in VARIANTS}
    in_leases: dict[str, float] = {name: 0.0 for name in VARIANTS}
    calls: dict[str, int] = {name: 0 for name in VARIANTS}
    cpu_samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    try:
        with ExitStack() as stack:
            graphs = {}
            for name in names:
                saver = stack.enter_context(saver_for(backend, where, prefix, VARIANTS[name]))
                if saver.run_leases is not None:
                    stack.callback(saver.run_leases.close)
                graphs[name] = build(saver)
                graphs[name].invoke(
                    {"n": 0, "items": []},
                    {"configurable": {"thread_id": f"warm-{uuid.uuid4().hex}"}},
                )
            for _r in range(args.rounds):
                run_times: dict[str, list[float]] = {name: [] for name in names}
                for i in range(args.runs):
                    # one run of each variant in turn, the order rotating, so that
                    # the machine's load falls on all variants alike
                    for name in names[i % len(names) :] + names[: i % len(names)]:
                        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
                        LEASE_TIME[0] = 0.0
                        CALLS[0] = 0
                        c0 = time.process_time()
                        t0 = time.perf_counter()
                        graphs[name].invoke({"n": 0, "items": []}, config)
                        run_times[name].append(time.perf_counter() - t0)
                        # process_time covers all threads: the run's background
                        # writes and the heartbeat
                        cpu_samples[name].append(time.process_time() - c0)
                        in_leases[name] += LEASE_TIME[0]
                        calls[name] += CALLS[0]
                for name in names:
                    times[name] += run_times[name]
                    cpu[name].append(statistics.median(cpu_samples[name][-args.runs :]))
                    ratios[name].append(
                        statistics.median(run_times[name]) / statistics.median(run_times["off"]) - 1
                    )
    finally:
        if backend == "redis":
            _drop_prefix(where, prefix)
    base_cpu = statistics.median(cpu["off"])
    print(
        f"\n[{backend}] heartbeat cost: {args.rounds} rounds x {args.runs} runs of "
        f"{STEPS} steps, variants interleaved run by run; wall: median run time and median "
        "per-round overhead vs off; cpu: median process CPU per run (all threads)"
    )
    for name, samples in times.items():
        med = statistics.median(samples)
        c = statistics.median(cpu[name])
        ratio = 100 * statistics.median(ratios[name])
        lease_ms = 1000 * in_leases[name] / len(samples)
        trips = calls[name] / len(samples)
        print(
            f"  {name:26s} wall {med * 1000:7.1f} ms ({ratio:+6.2f}%)"
            f"   cpu {c * 1000:6.2f} ms ({100 * (c - base_cpu) / base_cpu:+6.2f}%)"
            f"   in lease code {lease_ms:5.2f} ms/run ({100 * lease_ms / (med * 1000):4.2f}%)"
            f"   round trips {trips:5.1f}/run"
        )


# -- part 2 --------------------------------------------------------------------------


def _fill_pg(url: str, start: int, count: int, orphans: int) -> None:
    now = datetime.now(timezone.utc)
    with psycopg.connect(url, autocommit=True) as conn:
        if count:
            conn.execute(
                "INSERT INTO durable_run_leases (thread_id, state, owner, token, acquired_at,"
                " renewed_at, expires_at, reason, ended_at)"
                " SELECT 'done-' || g, 'released', 'bench', 1, %(now)s, %(now)s, %(now)s,"
                " CASE WHEN g %% 2 = 0 THEN 'finished' ELSE 'interrupted' END, %(now)s"
                " FROM generate_series(%(a)s::int, %(b)s::int) AS g",
                {"now": now, "a": start, "b": start + count - 1},
            )
        for i in range(orphans):
            conn.execute(
                "INSERT INTO durable_run_leases (thread_id, state, owner, token, acquired_at,"
                " renewed_at, expires_at) VALUES (%s, 'running', 'dead', 1, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                (f"orphan-{i}", now, now, now - timedelta(seconds=60)),
            )
        conn.execute("ANALYZE durable_run_leases")


def _fill_redis(url: str, prefix: str, start: int, count: int, orphans: int) -> None:
    keys = RedisLeaseKeys(prefix)
    now_ms = to_ms(datetime.now(timezone.utc))
    client = redis.Redis.from_url(url)
    try:
        pipe = client.pipeline(transaction=False)
        for i in range(start, start + count):
            t = f"done-{i}"
            pipe.hset(
                keys.record(t),
                mapping={
                    "thread_id": t,
                    "state": "released",
                    "owner": "bench",
                    "token": 1,
                    "expires_at": now_ms,
                    "reason": "finished" if i % 2 == 0 else "interrupted",
                },
            )
            if len(pipe) >= 2000:
                pipe.execute()
        for i in range(orphans):
            t = f"orphan-{i}"
            pipe.hset(
                keys.record(t),
                mapping={
                    "thread_id": t,
                    "state": "running",
                    "owner": "dead",
                    "token": 1,
                    "expires_at": now_ms - 60_000,
                },
            )
            pipe.zadd(keys.running(t), {t: now_ms - 60_000})
        pipe.execute()
    finally:
        client.close()


def find_scaling(backend: str, where: str, args: argparse.Namespace) -> None:
    prefix = f"bl{uuid.uuid4().hex[:8]}"
    print(
        f"\n[{backend}] find_expired_leases(limit=100), 10 orphans among N finished/waiting "
        f"threads (median of {args.finds} calls)"
    )
    try:
        with saver_for(backend, where, prefix, True) as saver:
            filled = 0
            for size in (0, 10_000, 100_000):
                if backend == "pg":
                    _fill_pg(where, filled, size - filled, 10 if filled == 0 and size == 0 else 0)
                else:
                    _fill_redis(where, prefix, filled, size - filled, 10 if size == 0 else 0)
                filled = size
                now = datetime.now(timezone.utc)
                samples = []
                for _ in range(args.finds):
                    t0 = time.perf_counter()
                    found = part_of(saver, "leases").find_expired_leases(now=now, limit=100)
                    samples.append(time.perf_counter() - t0)
                assert len(found) == 10, found
                print(
                    f"  N={size:>7,}  median {statistics.median(samples) * 1000:7.3f} ms"
                    f"  fastest {min(samples) * 1000:7.3f} ms   (found {len(found)})"
                )
            if backend == "pg":
                with psycopg.connect(where) as conn:
                    plan = conn.execute(
                        "EXPLAIN SELECT * FROM durable_run_leases WHERE state = 'running'"
                        " AND expires_at <= now() ORDER BY expires_at LIMIT 100"
                    ).fetchall()
                print("  plan: " + " / ".join(r[0].strip() for r in plan[:2]))
    finally:
        if backend == "redis":
            _drop_prefix(where, prefix)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pg-url", default=None, help="PostgreSQL server (default: as the tests)")
    ap.add_argument("--redis-url", default=None, help="Redis server (default: as the tests)")
    ap.add_argument("--backends", default="pg,redis")
    ap.add_argument("--parts", default="cost,find")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--finds", type=int, default=50)
    args = ap.parse_args()
    _instrument()
    from tests._servers import postgres_url, redis_url

    for backend in args.backends.split(","):
        if backend == "pg":
            with pg_database(args.pg_url or postgres_url()) as url:
                if "cost" in args.parts:
                    heartbeat_cost("pg", url, args)
            with pg_database(args.pg_url or postgres_url()) as url:
                if "find" in args.parts:
                    find_scaling("pg", url, args)
        else:
            url = args.redis_url or redis_url()
            if "cost" in args.parts:
                heartbeat_cost("redis", url, args)
            if "find" in args.parts:
                find_scaling("redis", url, args)


if __name__ == "__main__":
    main()
