"""Cross-thread filtered listing on Redis: ``list(None, filter=..., limit=...)``.

Seeds ``--threads`` x ``--per-thread`` checkpoints (written round-robin, so
the newest interleave threads) into our Redis saver and into
langgraph-checkpoint-plainredis, each under its own prefix on the same
server, then times (median of ``--repeat``, savers interleaved) listing with
a metadata filter that matches half of them, with and without a limit, and
checks the order (newest first).

    python benchmarks/list_across_threads.py --threads 200 --per-thread 100
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
from langgraph.checkpoint.base import empty_checkpoint

from benchmarks.growth import _redis_cleanup
from tests._servers import redis_url


def _seed(saver: Any, threads: int, per_thread: int) -> None:
    parents: dict[str, Any] = {}
    for step in range(per_thread):
        for t in range(threads):
            tid = f"t{t:05d}"
            config = parents.get(tid) or {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
            md = {"source": "loop", "step": step, "kind": "even" if step % 2 == 0 else "odd"}
            parents[tid] = saver.put(config, empty_checkpoint(), md, {})


def _time(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--per-thread", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from langgraph_checkpoint_plainredis import RedisSaver as PlainSaver

    from langgraph_durable.checkpointers.redis import RedisSaver

    url = redis_url()
    ours_prefix, plain_prefix = f"bl{uuid.uuid4().hex[:8]}", f"bl{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(url)
    try:
        with RedisSaver.from_conn_string(url, prefix=ours_prefix, leases=False) as ours:
            ours.setup()
            plain = PlainSaver(client, prefix=plain_prefix)
            savers = {"ours": ours, "plainredis": plain}
            for name, saver in savers.items():
                t, _ = _time(lambda s=saver: _seed(s, args.threads, args.per_thread))
                print(f"seeded {name}: {args.threads * args.per_thread} checkpoints in {t:.1f} s")
            cases = {
                "filter, limit=10": {"filter": {"kind": "even"}, "limit": 10},
                "filter, no limit": {"filter": {"kind": "even"}},
            }
            for case, kwargs in cases.items():
                times: dict[str, list[float]] = {n: [] for n in savers}
                ordered: dict[str, bool] = {}
                for r in range(args.repeat):
                    names = list(savers) if r % 2 == 0 else list(savers)[::-1]
                    for name in names:
                        t, got = _time(lambda s=savers[name], kw=kwargs: list(s.list(None, **kw)))
                        times[name].append(t)
                        ids = [c.checkpoint["id"] for c in got]
                        ordered[name] = ids == sorted(ids, reverse=True) and len(ids) == (
                            kwargs.get("limit") or args.threads * args.per_thread // 2
                        )
                med = {n: statistics.median(v) * 1000 for n, v in times.items()}
                print(
                    f"{case}: ours {med['ours']:.1f} ms (newest first: {ordered['ours']}), "
                    f"plainredis {med['plainredis']:.1f} ms (newest first: "
                    f"{ordered['plainredis']}), ratio {med['ours'] / med['plainredis']:.3f}"
                )
    finally:
        client.close()
        _redis_cleanup(url, ours_prefix)
        _redis_cleanup(url, plain_prefix)


if __name__ == "__main__":
    main()
