"""Where the Redis saver's bytes go for the thread of ``growth.py``.

Runs the same graph (one node appending a 1 KiB message per step) on our
Redis saver, then reports ``MEMORY USAGE`` per key of the thread (each key
holds one kind of record: checkpoints, refs, values, writes, indexes) and,
per hash or sorted set, the raw bytes of its fields and values, so the
per-entry overhead of Redis shows apart from what we store. All figures are
multiples of the payload. With ``--runs N`` it builds N threads one after
the other and prints one line each: the total, the message deltas that copied
their items instead of naming the pending writes (LangGraph sent the step's
put before its writes landed: the race that moves where snapshots fall) and
the snapshots' sizes.

    python benchmarks/redis_bytes.py --steps 300
    python benchmarks/redis_bytes.py --steps 300 --runs 10
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


def _races(client: redis.Redis, prefix: str) -> tuple[int, list[int]]:
    """(message deltas that copied their items, snapshot sizes) of the thread."""
    from langgraph_durable.checkpointers._delta import DELTA_TYPE, delta_writes

    copied, snapshots = 0, []
    for key in client.scan_iter(match=f"{prefix}:*:b", count=1000):
        for field, value in client.hgetall(key).items():
            if b"\x00messages\x00" not in field:
                continue
            if value.startswith(b"delta2\x00"):
                copied += not delta_writes(DELTA_TYPE, value[len(b"delta2\x00") :])
            elif not value.startswith(b"delta\x00"):
                snapshots.append(len(value))
    return copied, sorted(snapshots)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.runs):
        _one(args.steps, detail=args.runs == 1)


def _one(steps: int, *, detail: bool) -> None:
    from langgraph_durable.checkpointers.redis import RedisSaver

    url, prefix = redis_url(), f"bench{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(url)
    try:
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            saver.setup()
            graph = build_graph(steps, saver)
            config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
            graph.invoke({"messages": []}, {**config, "recursion_limit": steps + 10})
        payload = steps * PAYLOAD
        rows = []
        for key in client.scan_iter(match=f"*{prefix}*", count=1000):
            kind = client.type(key)
            mem = client.memory_usage(key, samples=0) or 0
            n, fb, vb = _raw(client, key, kind)
            name = key.decode().rsplit("}", 1)[-1] or key.decode()
            rows.append((mem, name, kind.decode(), n, fb, vb))
        total = sum(r[0] for r in rows)
        if not detail:
            copied, snaps = _races(client, prefix)
            keys = " ".join(f"{n}={m / payload:.2f}" for m, n, *_ in sorted(rows)[::-1][:6])
            print(
                f"steps={steps} total_x={total / payload:.2f} copied_deltas={copied} "
                f"snapshots_kib={[n // 1024 for n in snaps]} {keys}",
                flush=True,
            )
            return
        print(f"steps={steps} payload={payload} total={total} total_x={total / payload:.2f}")
        print(
            f"{'key':<10} {'type':<5} {'entries':>7} {'memory_x':>8} {'fields_x':>8} "
            f"{'values_x':>8} {'overhead_x':>10} {'bytes/entry':>11}"
        )
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
