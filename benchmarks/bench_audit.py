"""Benchmark: what the audit trail costs a decision, on the Postgres and Redis savers.

A decision's audit entry is written by the decision's own statement (Postgres)
or script (Redis). This measures ``record_decision`` with and without the
``audit=`` entry, interleaved in one process (so both see the same machine
load), and prints the medians and their ratio; then ``append_audit`` of one
refusal entry on its own (what a refused attempt costs), and ``audit_log`` of
one thread (20 entries at ``--n 500``).

Usage::

    python benchmarks/bench_audit.py --backend postgres --n 500
    python benchmarks/bench_audit.py --backend redis --n 500

The URL comes from ``POSTGRES_URL`` / ``REDIS_URL`` or the local defaults; the
run uses a schema / key prefix of its own and removes it afterwards.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langgraph_durable.checkpointers import audit_entry  # noqa: E402
from langgraph_durable.interrupts import audit_log  # noqa: E402
from tests._approval_savers import open_sync  # noqa: E402
from tests._parts import part_of  # noqa: E402
from tests._servers import postgres_url, redis_url  # noqa: E402


@contextmanager
def area(backend: str) -> Any:
    """``(url, options)`` of a fresh schema / prefix, removed afterwards."""
    name = f"bench_audit_{uuid.uuid4().hex[:8]}"
    if backend == "postgres":
        import psycopg
        from psycopg import sql

        url = postgres_url()
        yield url, {"schema": name}
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
    else:
        import redis

        url = redis_url()
        yield url, {"prefix": name}
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(match=f"*{name}*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
        client.close()


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["postgres", "redis"], required=True)
    parser.add_argument("--n", type=int, default=500)
    args = parser.parse_args()
    now = datetime.now(timezone.utc)
    with area(args.backend) as (url, options), open_sync(args.backend, url, options) as saver:
        plain: list[float] = []
        audited: list[float] = []
        refusals: list[float] = []
        for i in range(args.n):
            thread = f"bench-{i % 50}"
            for with_audit in (False, True) if i % 2 else (True, False):
                key = uuid.uuid4().hex
                decision = {
                    "decision_id": key,
                    "at": now.isoformat(),
                    "by": "alice",
                    "approval_id": key,
                    "fingerprint": "sha256:" + "0" * 64,
                }
                entry = audit_entry(
                    at=now,
                    thread_id=thread,
                    approval_id=key,
                    actor="alice",
                    action="approve",
                    outcome="recorded",
                    fingerprint=decision["fingerprint"],
                )
                ms = timed(
                    lambda d=decision, e=entry, k=key, t=thread, a=with_audit: part_of(
                        saver, "decisions"
                    ).record_decision(thread_id=t, key=k, decision=d, audit=e if a else None)
                )
                (audited if with_audit else plain).append(ms)
            refusal = audit_entry(
                at=now,
                thread_id=thread,
                approval_id="x",
                actor="eve",
                action="approve",
                outcome="not_authorized",
                reason="bench",
            )
            refusals.append(
                timed(lambda r=refusal: part_of(saver, "audit").append_audit(entries=[r]))
            )
        reads = [timed(lambda: audit_log(saver, thread_id="bench-0")) for _ in range(50)]
        count = len(audit_log(saver, thread_id="bench-0"))
    p, a = statistics.median(plain), statistics.median(audited)
    print(f"backend {args.backend}, n={args.n} (interleaved, one process)")
    print(f"record_decision without audit: median {p:.2f} ms")
    print(f"record_decision with audit:    median {a:.2f} ms  (ratio {a / p:.2f})")
    print(f"append_audit of a refusal:     median {statistics.median(refusals):.2f} ms")
    print(f"audit_log of {count} entries:      median {statistics.median(reads):.2f} ms")


if __name__ == "__main__":
    main()
