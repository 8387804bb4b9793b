"""Storage and speed of a thread whose message list grows by 1 KiB per step.

One LangGraph graph, one node that appends an ``AIMessage`` holding 1 KiB of
incompressible text (base64 of random bytes, with an id as chat models give
them) and loops until the list holds ``steps`` messages: one run of
``steps`` supersteps on one thread. For each saver it reports

* stored bytes for the thread: everything the saver keeps (checkpoints,
  values, pending writes, indexes). Postgres: growth of
  ``pg_total_relation_size`` over the saver's tables (heap, TOAST and
  indexes) in a schema of its own, plus the sum of ``pg_column_size`` of the
  rows; Redis: ``MEMORY USAGE`` summed over the saver's keys (own prefix).
* the graph run's wall time (the savers' runs one after the other);
* ``get_state`` of the latest checkpoint and a 10-item ``get_state_history``
  (median of repeated calls, the savers' calls in turns once every thread
  is built, so machine load falls on all of them alike). ``--cold``: our
  savers' chain caches are emptied before each read, so they read as a
  fresh saver (another process) would; by default the saver that wrote the
  thread reads it.

    python benchmarks/growth.py --steps 300 --savers pg ours-pg redis ours-redis
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import redis
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg import sql

from tests._servers import postgres_url, redis_url

PAYLOAD = 1024


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build_graph(steps: int, checkpointer: BaseCheckpointSaver[Any]) -> Any:
    def agent(state: State) -> dict[str, Any]:
        text = base64.b64encode(os.urandom(PAYLOAD * 3 // 4)).decode()
        return {"messages": [AIMessage(content=text, id=f"run-{uuid.uuid4()}")]}

    def more(state: State) -> str:
        return "agent" if len(state["messages"]) < steps else END

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", more, ["agent", END])
    return g.compile(checkpointer=checkpointer)


# ---------------------------------------------------------------- savers


@contextlib.contextmanager
def _pg_schema() -> Iterator[tuple[str, str]]:
    base = postgres_url()
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}", schema
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def _pg_bytes(url: str, schema: str) -> tuple[int, int]:
    """(sum of pg_total_relation_size, sum of pg_column_size of rows) in ``schema``."""
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
            )
        ]
        total = rows = 0
        for t in tables:
            ident = sql.Identifier(schema, t)
            conn.execute(sql.SQL("VACUUM {}").format(ident))
            total += conn.execute(
                "SELECT pg_total_relation_size(%s::regclass)", (f'"{schema}"."{t}"',)
            ).fetchone()[0]
            rows += conn.execute(
                sql.SQL("SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {} t").format(ident)
            ).fetchone()[0]
        return total, rows


def _redis_bytes(url: str, prefix: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        return sum(
            client.memory_usage(k, samples=0) or 0
            for k in client.scan_iter(match=f"*{prefix}*", count=1000)
        )
    finally:
        client.close()


def _redis_cleanup(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    finally:
        client.close()


@contextlib.contextmanager
def official_pg() -> Iterator[tuple[BaseCheckpointSaver[Any], Callable[[], dict[str, int]]]]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with _pg_schema() as (url, schema), PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        before = _pg_bytes(url, schema)

        def measure() -> dict[str, int]:
            after = _pg_bytes(url, schema)
            return {"relation": after[0] - before[0], "rows": after[1] - before[1]}

        yield saver, measure


@contextlib.contextmanager
def ours_pg() -> Iterator[tuple[BaseCheckpointSaver[Any], Callable[[], dict[str, int]]]]:
    from langgraph_durable.checkpointers.postgres import PostgresSaver

    with (
        _pg_schema() as (url, schema),
        PostgresSaver.from_conn_string(postgres_url(), schema=schema) as saver,
    ):
        saver.setup()
        before = _pg_bytes(url, schema)

        def measure() -> dict[str, int]:
            after = _pg_bytes(url, schema)
            return {"relation": after[0] - before[0], "rows": after[1] - before[1]}

        yield saver, measure


@contextlib.contextmanager
def plain_redis() -> Iterator[tuple[BaseCheckpointSaver[Any], Callable[[], dict[str, int]]]]:
    from langgraph_checkpoint_plainredis import RedisSaver

    url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(url)
    try:
        saver = RedisSaver(client, prefix=prefix)
        yield saver, lambda: {"memory": _redis_bytes(url, prefix)}
    finally:
        client.close()
        _redis_cleanup(url, prefix)


@contextlib.contextmanager
def ours_redis() -> Iterator[tuple[BaseCheckpointSaver[Any], Callable[[], dict[str, int]]]]:
    from langgraph_durable.checkpointers.redis import RedisSaver

    url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            saver.setup()
            yield saver, lambda: {"memory": _redis_bytes(url, prefix)}
    finally:
        _redis_cleanup(url, prefix)


SAVERS = {"pg": official_pg, "ours-pg": ours_pg, "redis": plain_redis, "ours-redis": ours_redis}


# ---------------------------------------------------------------- measure


def _interleaved_ms(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median time of each function, called in turns (order alternating per round)."""
    names = list(fns)
    for name in names:
        fns[name]()  # warm caches and prepared statements
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeat):
        for name in names if i % 2 == 0 else reversed(names):
            t = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) * 1000 for name, ts in times.items()}


def _chain_cache(saver: BaseCheckpointSaver[Any]) -> Any:
    """Our saver's chain cache (None for the official savers, which keep none)."""
    core = getattr(saver, "_core", None)
    if core is None:
        return None
    codec = getattr(core, "codec", None)  # Redis keeps its caches in the core's codec
    return codec.chains if codec is not None else getattr(core, "_chains", None)


def _reads(graph: Any, config: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """get_state of the latest checkpoint, and a 10-item get_state_history."""

    def get() -> Any:
        return graph.get_state(config)

    def hist() -> Any:
        return list(graph.get_state_history(config, limit=10))

    return get, hist


def _cold(fn: Callable[[], Any], cache: Any) -> Callable[[], Any]:
    if cache is None:
        return fn

    def call() -> Any:
        cache.clear()  # read as a saver holding nothing would
        return fn()

    return call


def run_all(names: list[str], steps: int, repeat: int, cold: bool = False) -> list[dict[str, Any]]:
    """One thread per saver (runs one after the other), then their reads timed in turns."""
    results: dict[str, dict[str, Any]] = {}
    gets: dict[str, Callable[[], Any]] = {}
    hists: dict[str, Callable[[], Any]] = {}
    with contextlib.ExitStack() as stack:
        runs: dict[str, Any] = {}
        configs: dict[str, Any] = {}
        graphs: dict[str, Any] = {}
        measures: dict[str, Callable[[], dict[str, int]]] = {}
        caches: dict[str, Any] = {}
        for name in names:
            saver, measures[name] = stack.enter_context(SAVERS[name]())
            caches[name] = _chain_cache(saver) if cold else None
            graphs[name] = build_graph(steps, saver)
            configs[name] = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
            runs[name] = graphs[name].stream(
                {"messages": []}, {**configs[name], "recursion_limit": steps + 10}
            )
        # whole runs one after the other: LangGraph writes checkpoints in the
        # background while the next step runs, so turns of single steps would
        # charge one saver's writes to another's turn
        run_s = {}
        for name in names:
            t = time.perf_counter()
            for _ in runs[name]:
                pass
            run_s[name] = time.perf_counter() - t
        for name in names:
            graph, config = graphs[name], configs[name]
            state = graph.get_state(config)
            assert len(state.values["messages"]) == steps
            sizes = measures[name]()
            payload = steps * PAYLOAD
            results[name] = {
                "saver": name,
                "steps": steps,
                "run_s": run_s[name],
                **{f"{k}_x": v / payload for k, v in sizes.items()},
                **{f"{k}_mib": v / 2**20 for k, v in sizes.items()},
            }
            get, hist = _reads(graph, config)
            gets[name], hists[name] = _cold(get, caches[name]), _cold(hist, caches[name])
        for name, ms in _interleaved_ms(gets, repeat).items():
            results[name]["get_state_ms"] = ms
        for name, ms in _interleaved_ms(hists, repeat).items():
            results[name]["history10_ms"] = ms
    return [results[name] for name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[300])
    parser.add_argument("--savers", nargs="+", default=list(SAVERS), choices=list(SAVERS))
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument(
        "--cold", action="store_true", help="our reads start with an empty chain cache"
    )
    args = parser.parse_args()
    for steps in args.steps:
        for r in run_all(args.savers, steps, args.repeat, args.cold):
            print(
                " ".join(
                    f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
