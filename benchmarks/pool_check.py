"""What the pool's idle-connection check costs a hot path: get_tuple, side by side.

    python benchmarks/pool_check.py [--calls 300] [--rounds 30] [--url URL] [--via-pgbouncer]

Three ``PostgresSaver``s on one schema, each with a pool of 4: the pool
``from_conn_string`` builds (pings only connections idle >= 1 s), a pool that
pings at every checkout (``check=ConnectionPool.check_connection``), and a
pool without a check (the behaviour before the check). Rounds rotate the
order; prints each pool's median microseconds per call and its ratio to the
unchecked pool. ``--via-pgbouncer`` runs all three through a PgBouncer in
transaction mode started for the run (prepared statements off), where a ping
costs a round trip through the proxy too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import sql
from psycopg_pool import ConnectionPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.postgres._pool import sync_pool
from langgraph_durable.checkpointers.postgres._stmt import connect_kwargs
from tests._pgbouncer import OwnPgBouncer
from tests._servers import postgres_url


def _plain_pool(url: str, prepared: bool, check: Callable[[Any], None] | None) -> ConnectionPool:
    return ConnectionPool(
        url, min_size=1, max_size=4, kwargs=connect_kwargs(prepared), check=check, open=False
    )


def _time(saver: PostgresSaver, calls: int, config: Any) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        saver.get_tuple(config)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--url", default=None)
    parser.add_argument("--via-pgbouncer", action="store_true")
    args = parser.parse_args()
    server = args.url or postgres_url()
    bouncer = OwnPgBouncer(server).start() if args.via_pgbouncer else None
    url = bouncer.url_for(server) if bouncer else server
    prepared = bouncer is None
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    pools = {
        "idle check (ours)": sync_pool(url, 4, prepared_statements=prepared),
        "check every checkout": _plain_pool(url, prepared, ConnectionPool.check_connection),
        "no check": _plain_pool(url, prepared, None),
    }
    config = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    times: dict[str, list[float]] = {name: [] for name in pools}
    try:
        for pool in pools.values():
            pool.open(wait=True)
        savers = {name: PostgresSaver(pool, schema=schema) for name, pool in pools.items()}
        first = next(iter(savers.values()))
        first.setup()
        first.put(config, empty_checkpoint(), {"step": 1}, {})
        for saver in savers.values():
            _time(saver, 200, config)  # warm: connections open, statements planned
        order = list(savers.items())
        for _ in range(args.rounds):
            order = order[1:] + order[:1]  # each pool runs first, second, last in turn
            for name, saver in order:
                times[name].append(_time(saver, args.calls, config))
    finally:
        for pool in pools.values():
            pool.close()
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        if bouncer:
            bouncer.stop()
    base = statistics.median(times["no check"])
    where = "through PgBouncer (transaction mode)" if bouncer else "direct"
    print(f"get_tuple, pool of 4, {args.rounds} rounds x {args.calls} calls, {where}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:22} {med:7.1f} us/call  {med / base:5.2f}x")


if __name__ == "__main__":
    main()
