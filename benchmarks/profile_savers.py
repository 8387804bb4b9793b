"""Where a saver's time goes on the default-configuration workload.

Runs ``benchmarks/bench_defaults.py``'s workload (20 threads x 30 ``ainvoke``s
of a 3-node graph, ~1 KiB more state per step) once per saver under
pyinstrument, sampling the event loop's thread, and splits the samples by the
innermost frame's package:

* ``wait`` - the event loop idle in ``select``: round trips, server time and
  commits (nothing of ours runs meanwhile);
* ``ours`` - langgraph-durable's Python;
* ``serde`` - msgpack/JSON encoding and decoding (LangGraph's serializer and ours);
* ``driver`` - psycopg or redis-py;
* ``langgraph`` - LangGraph's loop, channels and langchain-core's runnables;
* ``asyncio`` - the event loop's own bookkeeping; ``other`` - the rest.

Beside the split it counts, per ``ainvoke``, the saver calls LangGraph made and
the statements (Postgres) or packed command sends (Redis) that reached the
driver, and the process CPU time. ``--sync-commit-off`` runs the Postgres
savers once more with ``synchronous_commit=off`` for their own sessions (the
shared server's setting is untouched): the difference is what waiting for the
commit's WAL flush costs.

Usage::

    python benchmarks/profile_savers.py                       # pg, official, redis, plainredis
    python benchmarks/profile_savers.py --savers pg --sync-commit-off
    python benchmarks/profile_savers.py --savers redis --top 25   # and the hottest frames
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_defaults import SAVERS
from benchmarks.bench_savers import run_workload

CATEGORIES = (
    ("selectors.py", "wait"),
    ("/serde/", "serde"),
    ("ormsgpack", "serde"),
    ("msgpack", "serde"),
    ("_serde.py", "serde"),
    ("_codec.py", "serde"),
    ("_record_format.py", "serde"),
    ("_write_format.py", "serde"),
    ("_index_format.py", "serde"),
    ("_wire.py", "serde"),
    ("json/", "serde"),
    ("/psycopg", "driver"),
    ("/redis/", "driver"),
    ("/hiredis", "driver"),
    ("langgraph_checkpoint_plainredis", "peer"),
    ("/langgraph/checkpoint/postgres", "peer"),
    ("/checkpointers/", "ours"),
    ("langgraph_durable", "ours"),
    ("/migrations/", "ours"),
    ("/interrupts/", "ours"),
    ("/langgraph/", "langgraph"),
    ("langchain_core", "langgraph"),
    ("asyncio/", "asyncio"),
)


def category(path: str) -> str:
    """The bucket of a frame's file path (first match of :data:`CATEGORIES`)."""
    for needle, name in CATEGORIES:
        if needle in path:
            return name
    return "other"


def split(root: Any) -> tuple[dict[str, float], dict[str, float]]:
    """Self time by category, and by frame (file:function) for ``--top``.

    A C function (pyinstrument's ``<built-in>`` frames) counts in its Python
    caller's category, except the selector's poll, which is the idle loop.
    """
    by_cat: dict[str, float] = collections.defaultdict(float)
    by_frame: dict[str, float] = collections.defaultdict(float)
    stack = [(root, "other")]
    while stack:
        frame, parent = stack.pop()
        path = frame.file_path or ""
        if "poll" in frame.function or frame.function.endswith("select"):
            cat = "wait"
        elif not path or path.startswith("<"):
            cat = parent
        else:
            cat = category(path)
        stack.extend((child, cat) for child in frame.children)
        own = frame.total_self_time
        if own:
            by_cat[cat] += own
            by_frame[f"{frame.file_path_short}:{frame.function}"] += own
    return by_cat, by_frame


class Counters:
    """Counts saver calls and driver sends while installed."""

    def __init__(self) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self.seconds: dict[str, list[float]] = collections.defaultdict(list)
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, key: str) -> None:
        """Count calls of ``owner.name`` under ``key``."""
        original = getattr(owner, name)
        calls, seconds = self.calls, self.seconds[key]

        if asyncio.iscoroutinefunction(original):

            async def counted(*a: Any, **k: Any) -> Any:
                calls[key] += 1
                t0 = time.perf_counter()
                try:
                    return await original(*a, **k)
                finally:
                    seconds.append(time.perf_counter() - t0)
        else:

            def counted(*a: Any, **k: Any) -> Any:
                calls[key] += 1
                return original(*a, **k)

        setattr(owner, name, counted)
        self._undo.append((owner, name, original))

    def install(self, saver: Any) -> None:
        """Wrap the saver's storage calls and both drivers' sends."""
        import psycopg
        from redis.asyncio.connection import AbstractConnection

        for method in ("aget_tuple", "aput", "aput_writes", "alist"):
            self.wrap(saver, method, method)
        self.wrap(psycopg.AsyncCursor, "execute", "pg statements")
        self.wrap(psycopg.AsyncConnection, "commit", "pg commits")
        self.wrap(AbstractConnection, "send_packed_command", "redis sends")

    def uninstall(self) -> None:
        """Put every wrapped attribute back."""
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()


async def profile_one(name: str, args: argparse.Namespace) -> None:
    """Warm up, then profile one run of the workload on saver ``name``."""
    from pyinstrument import Profiler

    async with SAVERS[name](args) as saver:
        await run_workload(saver, 4, 3)
        counters = Counters()
        counters.install(saver)
        profiler = Profiler(interval=0.0005, async_mode="disabled")
        cpu0, t0 = time.process_time(), time.perf_counter()
        profiler.start()
        try:
            phases = await run_workload(saver, args.threads, args.steps)
        finally:
            profiler.stop()
            counters.uninstall()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    invokes = args.threads * args.steps
    by_cat, by_frame = split(profiler.last_session.root_frame())
    total = sum(by_cat.values()) or 1.0
    label = name + (" (synchronous_commit=off)" if "synchronous_commit" in args.pg_url else "")
    print(
        f"\n== {label}: graph run {phases['graph run'] * 1000:.0f} ms, "
        f"get_state {phases['get_state'] * 1000:.1f} ms, history {phases['history'] * 1000:.1f} ms"
    )
    print(
        f"   wall {wall:.2f} s, process CPU {cpu:.2f} s ({cpu / wall:.0%}); per ainvoke "
        f"{wall / invokes * 1000:.2f} ms wall, {cpu / invokes * 1000:.2f} ms CPU"
    )
    print(
        "   split of samples: "
        + ", ".join(
            f"{c} {s / total:.0%} ({s / invokes * 1000:.2f} ms/invoke)"
            for c, s in sorted(by_cat.items(), key=lambda kv: -kv[1])
        )
    )
    print(
        "   per ainvoke: "
        + ", ".join(f"{k} {v / invokes:.2f}" for k, v in sorted(counters.calls.items()))
    )
    print(
        "   median ms per call (with its wait for the connection): "
        + ", ".join(
            f"{k} {statistics.median(v) * 1000:.2f}"
            for k, v in sorted(counters.seconds.items())
            if v and k.startswith("a")
        )
    )
    for frame, secs in sorted(by_frame.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"     {secs / total:6.1%}  {frame}")


def main() -> None:
    from tests._servers import postgres_url, redis_url

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--savers", default="pg,official,redis,plainredis")
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--top", type=int, default=0, help="also print the N hottest frames")
    ap.add_argument("--sync-commit-off", action="store_true")
    args = ap.parse_args()
    args.pg_url, args.redis_url = postgres_url(), redis_url()
    names = args.savers.split(",")
    for name in names:
        asyncio.run(profile_one(name, args))
    if args.sync_commit_off:
        sep = "&" if "?" in args.pg_url else "?"
        args.pg_url += sep + "options=-c%20synchronous_commit%3Doff"
        for name in names:
            if name in ("pg", "pg-conn", "official"):
                asyncio.run(profile_one(name, args))


if __name__ == "__main__":
    main()
