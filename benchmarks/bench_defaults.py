"""Benchmark: every saver in its default configuration, beside InMemorySaver.

The workload is ``benchmarks/bench_savers.py``'s: 20 threads x 30 ``ainvoke``s
of a 3-node graph whose message list grows by ~1 KiB per step, run
concurrently, then ``aget_state`` and a 10-item ``aget_state_history`` of every
thread. Each saver is built the way its README's first example builds it:

* ``memory``: ``InMemorySaver()`` (the floor);
* ``pg``: ours, ``AsyncPostgresSaver.from_conn_string(url)`` then ``setup()``
  (a pool of up to ``DEFAULT_POOL_SIZE`` connections);
* ``pg-conn``: ours on one connection (``pool_size=None``);
* ``official``: langgraph-checkpoint-postgres's ``from_conn_string(url)``, ``setup()``;
* ``redis``: ours, ``AsyncRedisSaver.from_conn_string(url)``, ``setup()``;
* ``plainredis``: langgraph-checkpoint-plainredis's ``AsyncRedisSaver(url=url)``
  (it has no ``from_conn_string``);
* ``redis-cluster``: ours on a 3-master Redis Cluster this script starts (the
  tests' cluster starter), beside ``redis-single``: ours on one redis-server
  it starts with the same settings (no persistence), so the two differ only
  in the cluster.

Every Postgres saver gets a database of its own (dropped afterwards), every
Redis saver a key prefix of its own. Savers run interleaved in one process
(the order rotates each round), after one warm-up round; the script prints
per-phase medians and each saver's ratio to the others named by ``--ratios``.

Usage::

    python benchmarks/bench_defaults.py                    # the six savers, 5 rounds
    python benchmarks/bench_defaults.py --rounds 3 --savers memory,redis,plainredis
    python benchmarks/bench_defaults.py --json out.json    # medians for run_all.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_redis import _drop_prefix
from benchmarks.bench_savers import fresh_database, run_workload

Factory = Callable[[argparse.Namespace], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]


@asynccontextmanager
async def memory(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's InMemorySaver."""
    yield InMemorySaver()


@asynccontextmanager
async def pg(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Ours as the README's first example builds it (its default pool)."""
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

    async with (
        fresh_database(args.pg_url, "bench_pg") as db,
        AsyncPostgresSaver.from_conn_string(db) as saver,
    ):
        await saver.setup()
        yield saver


@asynccontextmanager
async def pg_conn(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Ours on one connection (``pool_size=None``)."""
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

    async with (
        fresh_database(args.pg_url, "bench_pgconn") as db,
        AsyncPostgresSaver.from_conn_string(db, pool_size=None) as saver,
    ):
        await saver.setup()
        yield saver


@asynccontextmanager
async def official(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-checkpoint-postgres as its README's first example."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as Official

    async with (
        fresh_database(args.pg_url, "bench_official") as db,
        Official.from_conn_string(db) as saver,
    ):
        await saver.setup()
        yield saver


@asynccontextmanager
async def redis(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Ours on Redis as the README's first example (a key prefix of its own)."""
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver

    prefix = f"benchd{uuid.uuid4().hex[:8]}"
    try:
        async with AsyncRedisSaver.from_conn_string(args.redis_url, prefix=prefix) as saver:
            await saver.setup()
            yield saver
    finally:
        await _drop_prefix(args.redis_url, prefix)


@asynccontextmanager
async def plainredis(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-checkpoint-plainredis (``AsyncRedisSaver(url=...)``)."""
    from langgraph_checkpoint_plainredis import AsyncRedisSaver as Peer

    prefix = f"benchdp{uuid.uuid4().hex[:8]}"
    saver = Peer(url=args.redis_url, prefix=prefix)
    try:
        yield saver
    finally:
        await saver.aclose()
        await _drop_prefix(args.redis_url, prefix)


_SERVERS: dict[str, Any] = {}


def _own_server(kind: str) -> str:
    """The URL of this process's own cluster or single server (started once)."""
    if kind not in _SERVERS:
        if kind == "cluster":
            from tests._redis_cluster import start_cluster

            _SERVERS[kind] = start_cluster()
        else:
            from tests.redis._own_server import OwnRedis

            _SERVERS[kind] = OwnRedis(args=["--save", "", "--appendonly", "no"]).start()
    return str(_SERVERS[kind].url)


def stop_own_servers() -> None:
    """Stop the servers :func:`_own_server` started."""
    for server in _SERVERS.values():
        (server.stop if hasattr(server, "procs") else server.remove)()
    _SERVERS.clear()


def _own_redis(kind: str) -> Factory:
    @asynccontextmanager
    async def factory(args: argparse.Namespace) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        from langgraph_durable.checkpointers.redis import AsyncRedisSaver

        url = _own_server(kind)
        async with AsyncRedisSaver.from_conn_string(url, prefix="bench") as saver:
            await saver.setup()
            yield saver

    factory.__doc__ = f"Ours on this script's own {kind} Redis."
    return factory


SAVERS: dict[str, Factory] = {
    "memory": memory,
    "pg": pg,
    "pg-conn": pg_conn,
    "official": official,
    "redis": redis,
    "plainredis": plainredis,
    "redis-single": _own_redis("single"),
    "redis-cluster": _own_redis("cluster"),
}


async def bench(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Interleaved rounds; per saver and phase the median seconds."""
    names = args.savers.split(",")
    stacks: dict[str, tuple[Any, BaseCheckpointSaver[Any]]] = {}
    times: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    for name in names:
        cm = SAVERS[name](args)
        stacks[name] = (cm, await cm.__aenter__())
    try:
        for name in names:  # warm-up: connections, prepared statements, scripts
            await run_workload(stacks[name][1], min(args.threads, 4), 3)
        for r in range(args.rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                phases = await run_workload(stacks[name][1], args.threads, args.steps)
                for phase, secs in phases.items():
                    times[name].setdefault(phase, []).append(secs)
                print(
                    f"round {r + 1} {name:>10}: "
                    + "  ".join(f"{p} {s * 1000:8.1f} ms" for p, s in phases.items()),
                    flush=True,
                )
    finally:
        for cm, _ in stacks.values():
            await cm.__aexit__(None, None, None)
    return {n: {p: statistics.median(v) for p, v in by.items()} for n, by in times.items()}


def report(medians: dict[str, dict[str, float]], ratios: list[str]) -> None:
    """Print medians and the ratios to each saver named in ``ratios``."""
    for name, phases in medians.items():
        cells = []
        for phase, secs in phases.items():
            rel = " ".join(
                f"{secs / medians[b][phase]:.2f}x {b}"
                for b in ratios
                if b in medians and b != name and medians[b][phase] > 0
            )
            cells.append(f"{phase} {secs * 1000:8.1f} ms ({rel})")
        print(f"{name:>10}: " + "  ".join(cells))


def main() -> None:
    from tests._servers import postgres_url, redis_url

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--savers", default="memory,pg,pg-conn,official,redis,plainredis")
    ap.add_argument("--ratios", default="memory,official,plainredis")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--pg-url", default=None)
    ap.add_argument("--redis-url", default=None)
    ap.add_argument("--json", default=None, help="write the medians here")
    args = ap.parse_args()
    args.pg_url = args.pg_url or postgres_url()
    args.redis_url = args.redis_url or redis_url()
    try:
        medians = asyncio.run(bench(args))
    finally:
        stop_own_servers()
    print(f"\nmedians of {args.rounds} rounds ({args.threads} threads x {args.steps} steps):")
    report(medians, args.ratios.split(","))
    if args.json:
        Path(args.json).write_text(json.dumps(medians, indent=1))


if __name__ == "__main__":
    main()
