"""Benchmark: what the OpenTelemetry instrumentation costs when no SDK is configured.

Two peers on the same saver, in one process, interleaved (the order flips
every round), after a warm-up round:

* ``disabled``: ``configure_telemetry(enabled=False)``: the instrumentation's
  wrappers return at their first check (the floor: as if it were not there);
* ``api-no-sdk``: the default: ``opentelemetry-api`` installed, no SDK
  configured, so every saver call looks at the global providers and records
  nothing.

Each round runs ``--runs`` invokes of a 3-node graph on fresh threads (each
invoke: ``get_tuple``, four ``put``s, three ``put_writes``), then reads each
thread back (``get_state``, a 5-item history). The script prints per-peer
medians of a round, the ratio ``api-no-sdk / disabled`` per backend (of the
medians, and the median of each round's back-to-back pair), and the
per-call cost of the no-SDK check itself (a tight loop, for scale). With
``--with-sdk`` a third peer, ``sdk``, runs afterwards (a real TracerProvider
and MeterProvider with no exporter: the cost of recording), not interleaved,
because an SDK cannot be unset once set.

Usage::

    python benchmarks/otel_overhead.py                      # Postgres and Redis, 15 rounds of 30
    python benchmarks/otel_overhead.py --backends redis --rounds 31 --runs 40
    python benchmarks/otel_overhead.py --with-sdk

Servers: ``POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``,
a schema of its own, dropped afterwards) and ``REDIS_URL`` (default
``redis://127.0.0.1:6379/0``, a key prefix of its own, deleted afterwards).
"""

from __future__ import annotations

import argparse
import operator
import os
import statistics
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_durable.checkpointers import configure_telemetry

PG_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


class State(TypedDict):
    messages: Annotated[list[str], operator.add]


def graph_of(saver: Any) -> Any:
    """``START -> a -> b -> c -> END``, each node adding a ~200-byte message."""

    def step(state: State) -> dict[str, Any]:
        return {"messages": ["m" * 200]}

    builder = StateGraph(State)
    for name in "abc":
        builder.add_node(name, step)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=saver)


@contextmanager
def postgres_saver() -> Iterator[Any]:
    """Ours on a schema of its own, dropped afterwards."""
    import psycopg
    from psycopg import sql

    from langgraph_durable.checkpointers.postgres import PostgresSaver

    schema = f"bench_otel_{uuid.uuid4().hex[:8]}"
    try:
        with PostgresSaver.from_conn_string(PG_URL, schema=schema) as saver:
            saver.setup()
            yield saver
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def redis_saver() -> Iterator[Any]:
    """Ours on a key prefix of its own, deleted afterwards."""
    import redis

    from langgraph_durable.checkpointers.redis import RedisSaver

    prefix = f"bench_otel_{uuid.uuid4().hex[:8]}"
    try:
        with RedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
            saver.setup()
            yield saver
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
        client.close()


def one_round(graph: Any, runs: int) -> float:
    """Seconds for ``runs`` invokes on fresh threads, then their reads."""
    threads = [f"t-{uuid.uuid4().hex[:10]}" for _ in range(runs)]
    started = time.perf_counter()
    for t in threads:
        graph.invoke({"messages": ["start"]}, {"configurable": {"thread_id": t}})
    for t in threads:
        config = {"configurable": {"thread_id": t}}
        graph.get_state(config)
        list(graph.get_state_history(config, limit=5))
    return time.perf_counter() - started


def check_cost(n: int = 200_000) -> float:
    """Nanoseconds per call of the instrumented path's no-SDK check."""
    from langgraph_durable.checkpointers._otel_calls import observing

    started = time.perf_counter()
    for _ in range(n):
        observing()
    return (time.perf_counter() - started) / n * 1e9


def measure(backend: str, rounds: int, runs: int) -> dict[str, list[float]]:
    """Interleaved rounds of both peers on one saver of ``backend``."""
    opener = postgres_saver if backend == "postgres" else redis_saver
    times: dict[str, list[float]] = {"disabled": [], "api-no-sdk": []}
    with opener() as saver:
        graph = graph_of(saver)
        one_round(graph, runs)  # warm-up: connections, prepared statements, caches
        for r in range(rounds):
            order = ["disabled", "api-no-sdk"] if r % 2 == 0 else ["api-no-sdk", "disabled"]
            for peer in order:
                configure_telemetry(enabled=peer != "disabled")
                times[peer].append(one_round(graph, runs))
    configure_telemetry(enabled=True)
    return times


def with_sdk(backend: str, rounds: int, runs: int) -> list[float]:
    """Rounds with a real SDK configured (no exporter): the cost of recording."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        metrics.set_meter_provider(MeterProvider())
    opener = postgres_saver if backend == "postgres" else redis_saver
    with opener() as saver:
        graph = graph_of(saver)
        one_round(graph, runs)
        return [one_round(graph, runs) for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="postgres,redis")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=30, help="invokes per round")
    parser.add_argument("--with-sdk", action="store_true")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")
    print(f"no-SDK check: {check_cost():.0f} ns per saver call")
    backends = args.backends.split(",")
    disabled: dict[str, float] = {}
    for backend in backends:
        times = measure(backend, args.rounds, args.runs)
        med = {peer: statistics.median(v) for peer, v in times.items()}
        disabled[backend] = med["disabled"]
        for peer, value in med.items():
            print(f"{backend:8} {peer:11} median {value * 1000:8.1f} ms per round")
        print(
            f"{backend:8} ratio of medians api-no-sdk / disabled: "
            f"{med['api-no-sdk'] / med['disabled']:.3f}"
        )
        # each round's pair ran back to back: its ratio is what the machine's drift spares
        paired = sorted(a / d for a, d in zip(times["api-no-sdk"], times["disabled"], strict=True))
        q1, q2, q3 = statistics.quantiles(paired, n=4)
        print(f"{backend:8} paired ratio median {q2:.3f} (quartiles {q1:.3f} .. {q3:.3f})")
    if args.with_sdk:
        # last, for every backend: once set, an SDK stays for the rest of the process
        for backend in backends:
            sdk = statistics.median(with_sdk(backend, args.rounds, args.runs))
            print(f"{backend:8} sdk         median {sdk * 1000:8.1f} ms per round")
            print(
                f"{backend:8} ratio sdk / disabled: {sdk / disabled[backend]:.3f} (not interleaved)"
            )


if __name__ == "__main__":
    main()
