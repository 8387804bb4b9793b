"""Benchmark: the same real LangGraph workload through several checkpoint savers.

Workload: a StateGraph of 3 nodes with a growing message list (~1 KiB
of incompressible text added per step); ``--threads`` threads x ``--steps``
``ainvoke`` calls each, run concurrently; then ``aget_state`` and a 10-item
``aget_state_history`` on every thread. Savers run interleaved (the order
alternates per round) in one process against the same server; the script
prints per-phase medians and the ratio of each saver to ``--baseline``.

Savers are named factories in :data:`SAVERS`: an async context manager taking
the server URL and yielding a ready saver on storage of its own. To add one
(e.g. Redis), write a factory and add it to the dict (or call
:func:`register`); pick savers with ``--savers a,b``.

Usage::

    python benchmarks/bench_savers.py                       # ours vs official
    python benchmarks/bench_savers.py --rounds 7 --pool 10
    python benchmarks/bench_savers.py --explain             # list(filter) plan on 100k rows
    python benchmarks/bench_savers.py --savers redis,plainredis,ours --baseline plainredis
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
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

SaverFactory = Callable[[str, int], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]


# -- storage helpers -----------------------------------------------------------------


def _with_db(url: str, db: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + db, p.query, p.fragment))


@asynccontextmanager
async def fresh_database(url: str, prefix: str) -> AsyncIterator[str]:
    """A new database on the server for one saver; dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_db(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


# -- saver factories -------------------------------------------------------------------


@asynccontextmanager
async def ours(url: str, pool: int) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-durable's AsyncPostgresSaver on a pool."""
    async with (
        fresh_database(url, "bench_ours") as db,
        AsyncConnectionPool(
            db, min_size=pool, max_size=pool, kwargs={"autocommit": True}, open=False
        ) as p,
    ):
        saver = AsyncPostgresSaver(p)
        await saver.setup()
        yield saver


@asynccontextmanager
async def official(url: str, pool: int) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """langgraph-checkpoint-postgres's AsyncPostgresSaver on a pool (its documented kwargs)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as Official

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with (
        fresh_database(url, "bench_official") as db,
        AsyncConnectionPool(db, min_size=pool, max_size=pool, kwargs=kwargs, open=False) as p,
    ):
        saver = Official(p)  # type: ignore[arg-type]
        await saver.setup()
        yield saver


SAVERS: dict[str, SaverFactory] = {"ours": ours, "official": official}


def register(name: str, factory: SaverFactory) -> None:
    """Add a saver factory (e.g. from a Redis benchmark module)."""
    SAVERS[name] = factory


# -- the workload --------------------------------------------------------------------------


class State(TypedDict):
    messages: Annotated[list[str], operator.add]
    turns: int


def _think(state: State) -> dict[str, Any]:
    # ~1 KiB of incompressible text per step
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


async def bench(args: argparse.Namespace) -> None:
    names = args.savers.split(",")
    results: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    stacks = {}
    for name in names:
        cm = SAVERS[name](args.url, args.pool)
        stacks[name] = (cm, await cm.__aenter__())
    try:
        # warm-up round (connections, prepared statements, caches), not counted
        for name in names:
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


# -- list(filter) plan on 100,000 checkpoints ------------------------------------------------


async def explain(args: argparse.Namespace) -> None:
    """Fill 100,000 checkpoints, then EXPLAIN ANALYZE the query list(filter=...) runs."""
    async with ours(args.url, 2) as saver:
        assert isinstance(saver, AsyncPostgresSaver)
        pool = saver.conn
        assert isinstance(pool, AsyncConnectionPool)
        async with pool.connection() as conn:
            await conn.execute(
                """
                INSERT INTO checkpoints
                    (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
                SELECT 'thread-' || (i % 1000), '', lpad(i::text, 12, '0'),
                       jsonb_build_object('v', 4, 'id', lpad(i::text, 12, '0'), 'ts', '',
                                          'channel_values', '{}'::jsonb,
                                          'channel_versions', '{}'::jsonb,
                                          'versions_seen', '{}'::jsonb),
                       jsonb_build_object('source', 'loop', 'step', i % 50,
                                          'user', 'user-' || (i % 5000))
                FROM generate_series(1, 100000) AS i
                """
            )
            await conn.execute("ANALYZE checkpoints")
            query = saver.core.queries.list_query(("filter",), True)
            params = {"filter": psycopg.types.json.Jsonb({"user": "user-42"}), "limit": 10}
            cur = await conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + query, params)
            plan = "\n".join(r[0] for r in await cur.fetchall())
        t0 = time.perf_counter()
        found = [t async for t in saver.alist(None, filter={"user": "user-42"}, limit=10)]
        elapsed = time.perf_counter() - t0
    print(plan)
    print(
        f"\nlist(None, filter={{'user': 'user-42'}}, limit=10): {len(found)} rows "
        f"in {elapsed * 1000:.1f} ms"
    )


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests._servers import postgres_url

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--url", default=None, help="server URL (default: as the tests find one)")
    ap.add_argument("--savers", default="ours,official")
    ap.add_argument("--baseline", default="official")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--pool", type=int, default=10, help="connections per saver")
    ap.add_argument("--explain", action="store_true", help="show the list(filter) plan")
    args = ap.parse_args()
    args.url = args.url or postgres_url()
    if set(args.savers.split(",")) & {"redis", "plainredis", "pg"}:
        # the Redis savers: ours, langgraph-checkpoint-plainredis, and "pg" = ours
        from benchmarks.bench_redis import FACTORIES

        SAVERS.update(FACTORIES)
    asyncio.run(explain(args) if args.explain else bench(args))


if __name__ == "__main__":
    main()
