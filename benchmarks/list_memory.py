"""Memory and latency of listing a whole thread's history (``list()`` without a limit).

Builds one thread per saver and length with the graph of ``growth.py`` (one
``AIMessage`` of 1 KiB of incompressible text appended per step), then lists
it in a fresh process per case, so each measurement starts from a process
that holds nothing of the thread:

* ``first_s``: time from the call to the first tuple;
* ``total_s``: time to iterate the whole history (each tuple dropped as the
  next one comes, as a caller paging through history would);
* ``rss_mib``: the process's resident set before listing, and its peak
  (``VmHWM``) after, and their difference.

    python benchmarks/list_memory.py --steps 300 3000 --savers ours-pg ours-redis pg

``pg`` is langgraph-checkpoint-postgres, which stores every version whole:
only lengths up to ``--official-max`` (default 300) are built for it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.growth import _pg_schema, _redis_cleanup, build_graph
from tests._servers import postgres_url, redis_url

SAVERS = ("ours-pg", "ours-redis", "pg")


def _status_mib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MiB.

    Not ``ru_maxrss``: Linux carries it over from the parent across fork and
    exec, so a child would report the parent's peak.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


@contextlib.contextmanager
def _open(name: str, where: str) -> Iterator[Any]:
    """A sync saver of ``name`` on ``where`` (a schema or a key prefix)."""
    if name == "ours-pg":
        from langgraph_durable.checkpointers.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(postgres_url(), schema=where) as saver:
            yield saver
    elif name == "ours-redis":
        from langgraph_durable.checkpointers.redis import RedisSaver

        with RedisSaver.from_conn_string(redis_url(), prefix=where) as saver:
            yield saver
    else:
        from langgraph.checkpoint.postgres import PostgresSaver as Official

        base = postgres_url()
        sep = "&" if "?" in base else "?"
        url = f"{base}{sep}options=-csearch_path%3D{where}"
        with Official.from_conn_string(url) as official:
            yield official


def child(name: str, where: str, thread_id: str) -> None:
    """Runs in its own process: list the thread once, print the figures as JSON."""
    with _open(name, where) as saver:
        config = {"configurable": {"thread_id": thread_id}}
        rss_before = _status_mib("VmRSS")
        t0 = time.perf_counter()
        first = None
        n = 0
        for _tup in saver.list(config):
            if first is None:
                first = time.perf_counter() - t0
            n += 1
        total = time.perf_counter() - t0
    peak = _status_mib("VmHWM")
    print(
        json.dumps(
            {"items": n, "first_s": first, "total_s": total, "rss0": rss_before, "peak": peak}
        )
    )


@contextlib.contextmanager
def _storage(name: str) -> Iterator[str]:
    if name == "ours-redis":
        prefix = f"bench{uuid.uuid4().hex[:10]}"
        try:
            yield prefix
        finally:
            _redis_cleanup(redis_url(), prefix)
    else:
        with _pg_schema() as (_url, schema):
            yield schema


def _build(name: str, where: str, steps: int) -> str:
    thread_id = f"t-{steps}"
    with _open(name, where) as saver:
        saver.setup()
        graph = build_graph(steps, saver)
        graph.invoke({"messages": []}, {"configurable": {"thread_id": thread_id}})
    return thread_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[300, 3000])
    parser.add_argument("--savers", nargs="+", default=list(SAVERS), choices=SAVERS)
    parser.add_argument("--official-max", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1, help="listing processes per case")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    for name in args.savers:
        with _storage(name) as where:
            for steps in args.steps:
                if name == "pg" and steps > args.official_max:
                    continue
                t0 = time.perf_counter()
                thread_id = _build(name, where, steps)
                built = time.perf_counter() - t0
                for _ in range(args.repeat):
                    out = subprocess.run(
                        [sys.executable, __file__, "--child", name, where, thread_id],
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    print(
                        f"saver={name} steps={steps} items={r['items']} "
                        f"first_s={r['first_s']:.3f} total_s={r['total_s']:.2f} "
                        f"rss_mib={r['rss0']:.0f}->{r['peak']:.0f} "
                        f"(+{r['peak'] - r['rss0']:.0f}) built_s={built:.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
