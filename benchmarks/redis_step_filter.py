"""What a ``step`` filter costs on our Redis saver (not indexed since layout step 0006).

Seeds ``--threads`` x ``--per-thread`` checkpoints (round-robin, metadata
``source`` and ``step``) under a prefix of its own, then times (median of
``--repeat``) listings with a step filter, alone and beside an indexed key,
across threads and in one thread, and without a filter. Run it on two
checkouts to compare layouts.

    python benchmarks/redis_step_filter.py --threads 200 --per-thread 100
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.base import empty_checkpoint

from benchmarks.growth import _redis_cleanup
from tests._servers import redis_url


def main() -> None:
    from langgraph_durable.checkpointers.redis import RedisSaver

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--per-thread", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            saver.setup()
            parents: dict[str, Any] = {}
            for step in range(args.per_thread):
                for t in range(args.threads):
                    tid = f"t{t:05d}"
                    config = parents.get(tid) or {
                        "configurable": {"thread_id": tid, "checkpoint_ns": ""}
                    }
                    md = {"source": "loop", "step": step}
                    parents[tid] = saver.put(config, empty_checkpoint(), md, {})
            mid = args.per_thread // 2
            one = {"configurable": {"thread_id": "t00001"}}
            cases: dict[str, Callable[[], list[Any]]] = {
                "across threads, step, limit 10": lambda: list(
                    saver.list(None, filter={"step": mid}, limit=10)
                ),
                "across threads, step + source, limit 10": lambda: list(
                    saver.list(None, filter={"step": mid, "source": "loop"}, limit=10)
                ),
                "across threads, no filter, limit 10": lambda: list(saver.list(None, limit=10)),
                "one thread, step": lambda: list(saver.list(one, filter={"step": mid})),
                "one thread, no filter, limit 10": lambda: list(saver.list(one, limit=10)),
            }
            for name, fn in cases.items():
                times = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    found = len(fn())
                    times.append((time.perf_counter() - start) * 1000)
                print(f"{name:<42} found={found:<3} median_ms={statistics.median(times):.2f}")
    finally:
        _redis_cleanup(url, prefix)


if __name__ == "__main__":
    main()
