"""Where the Redis saver's bytes go for the thread of ``growth.py``.

Runs the same graph (one node appending a 1 KiB message per step) on our
Redis saver, then reports ``MEMORY USAGE`` per key of the thread (each key
holds one kind of record: checkpoints, refs, values, writes, indexes) and,
per hash or sorted set, the raw bytes of its fields and values, so the
per-entry overhead of Redis shows apart from what we store. All figures are
multiples of the payload.

    python benchmarks/redis_bytes.py --steps 300
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from benchmarks.growth import PAYLOAD, _redis_cleanup, build_graph
from tests._servers import redis_url


def _raw(client: redis.Redis, key: bytes, kind: bytes) -> tuple[int, int, int]:
    """(entries, field bytes, value bytes) of a hash or sorted set."""
    if kind == b"hash":
        items = client.hgetall(key)
        return len(items), sum(map(len, items)), sum(map(len, items.values()))
    if kind == b"zset":
        members = client.zrange(key, 0, -1)
        return len(members), sum(map(len, members)), 0
    if kind == b"set":
        members = client.smembers(key)
        return len(members), sum(map(len, members)), 0
    return 1, 0, 0


def main() -> None:
    from checkpointers.redis import RedisSaver

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(url)
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            saver.setup()
            graph = build_graph(args.steps, saver)
            config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
            graph.invoke({"messages": []}, {**config, "recursion_limit": args.steps + 10})
        payload = args.steps * PAYLOAD
        rows = []
        for key in client.scan_iter(match=f"*{prefix}*", count=1000):
            kind = client.type(key)
            mem = client.memory_usage(key, samples=0) or 0
            n, fb, vb = _raw(client, key, kind)
            name = key.decode().rsplit("}", 1)[-1] or key.decode()
            rows.append((mem, name, kind.decode(), n, fb, vb))
        total = sum(r[0] for r in rows)
        print(f"steps={args.steps} payload={payload} total={total} total_x={total / payload:.2f}")
        print(f"{'key':<10} {'type':<5} {'entries':>7} {'memory_x':>8} {'fields_x':>8} "
              f"{'values_x':>8} {'overhead_x':>10} {'bytes/entry':>11}")
        for mem, name, kind, n, fb, vb in sorted(rows, reverse=True):
            print(
                f"{name:<10} {kind:<5} {n:>7} {mem / payload:>8.2f} {fb / payload:>8.2f} "
                f"{vb / payload:>8.2f} {(mem - fb - vb) / payload:>10.2f} {mem / max(n, 1):>11.0f}"
            )
    finally:
        client.close()
        _redis_cleanup(url, prefix)


if __name__ == "__main__":
    main()
