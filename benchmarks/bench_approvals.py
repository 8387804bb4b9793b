"""Benchmark: approvals at scale on the Postgres and Redis savers.

1. ``find``: with W threads waiting (deadlines in the future) and 1,000 due,
   the time the sweeper's claim takes to find and claim all the due ones, at
   W = 10,000 and W = 100,000. The due threads are real paused graph runs; the
   other waits are copies of a real wait entry under other thread ids (so the
   index holds W entries without running W graphs).
2. ``throughput``: N real paused threads all due; 2 sweeper processes (each
   ``concurrency`` resumes in flight) resolve them; approvals/s = N / slowest
   sweeper's ``run_once`` wall time (process start-up excluded).
3. ``batch``: a batch of 1,000 items decided in 100 ``decide`` calls of 10:
   median time of a call when 0-90 items were already decided vs 900-990
   (and the same for a batch of 100 items).

Usage::

    python benchmarks/bench_approvals.py --backend postgres
    python benchmarks/bench_approvals.py --backend redis --parts find,batch
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interrupts import CLOCK_CONFIG_KEY, ApprovalSweeper, decide  # noqa: E402
from tests._approval_graphs import T0, FakeClock, review_graph  # noqa: E402
from tests._approval_savers import open_sync  # noqa: E402
from tests._servers import postgres_url, redis_url  # noqa: E402


class Area:
    """An isolated schema (Postgres) or key prefix (Redis), removed afterwards."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.name = f"bench_{uuid.uuid4().hex[:10]}"
        if backend == "postgres":
            import psycopg
            from psycopg import sql

            self.url = postgres_url()
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.name)))
            self.options: dict[str, Any] = {"schema": self.name}
        else:
            self.url = redis_url()
            self.options = {"prefix": self.name}

    def drop(self) -> None:
        if self.backend == "postgres":
            import psycopg
            from psycopg import sql

            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(self.name)))
        else:
            import redis

            client = redis.Redis.from_url(self.url)
            keys = list(client.scan_iter(match=f"*{self.name}*", count=5000))
            for i in range(0, len(keys), 1000):
                client.delete(*keys[i : i + 1000])
            client.close()


def pause_threads(saver: Any, n: int, prefix: str, clock: FakeClock) -> Any:
    graph = review_graph(saver, timeout=timedelta(minutes=15))
    for i in range(n):
        graph.invoke({"amount": i}, {"configurable": {"thread_id": f"{prefix}{i}",
                                                      CLOCK_CONFIG_KEY: clock}})
    return graph


def add_waiting(area: Area, saver: Any, template: str, count: int, start: int) -> None:
    """``count`` more not-due wait entries, copies of ``template``'s, 30 days out."""
    if area.backend == "postgres":
        import psycopg
        from psycopg import sql

        with psycopg.connect(area.url, autocommit=True) as conn:
            conn.execute(sql.SQL("""
                INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns,
                    checkpoint_id, task_id, kind, deadline, approvers, escalation_level,
                    value_type, value, created_at)
                SELECT 'waiting-' || g, w.interrupt_id, w.checkpoint_ns, w.checkpoint_id,
                       w.task_id, w.kind,
                       w.deadline + interval '30 days', w.approvers, w.escalation_level,
                       w.value_type, w.value, w.created_at
                FROM {s}.durable_waits AS w, generate_series(%s::int, %s::int) AS g
                WHERE w.thread_id = %s""").format(s=sql.Identifier(area.name)),
                (start, start + count - 1, template))
            conn.execute(sql.SQL("ANALYZE {}.durable_waits").format(sql.Identifier(area.name)))
        return
    from checkpointers.redis._codec import SEP
    from checkpointers.redis._keys import shard_of

    keys = saver._core.keys
    client = saver.client
    (fld, entry), = client.hgetall(keys.thread(template)[8]).items()
    deadline = int((T0 + timedelta(days=30)).timestamp() * 1000)
    pipe = client.pipeline(transaction=False)
    for i in range(start, start + count):
        tid = f"waiting-{i}"
        tk = keys.thread(tid)
        pipe.hset(tk[8], fld, entry)
        pipe.zadd(tk[10], {fld: deadline})
        pipe.zadd(keys.wait_shard(shard_of(tid)), {tid + SEP + fld.decode(): deadline})
        if len(pipe) >= 3000:
            pipe.execute()
    pipe.execute()


def bench_find(backend: str, due: int, sizes: list[int]) -> list[dict[str, Any]]:
    area = Area(backend)
    out = []
    try:
        with open_sync(backend, area.url, area.options) as saver:
            clock = FakeClock()
            pause_threads(saver, due, "due-", clock)
            have = 0
            now = T0 + timedelta(hours=1)
            for size in sizes:
                add_waiting(area, saver, "due-0", size - have, have)
                have = size
                runs = []
                for _ in range(3):
                    owner = uuid.uuid4().hex
                    t = time.perf_counter()
                    got = 0
                    while True:
                        page = saver.claim_due_waits(now=now, owner=owner,
                                                     lease=timedelta(minutes=1), limit=100)
                        got += len(page)
                        if len(page) < 100:
                            break
                    runs.append(time.perf_counter() - t)
                    assert got >= due, (got, runs, size)
                    # past the lease: the next run claims them all again
                    now += timedelta(minutes=2)
                out.append({"backend": backend, "waiting": size, "due": due,
                            "claim_all_due_s": round(statistics.median(runs), 3)})
                print(json.dumps(out[-1]), flush=True)
    finally:
        area.drop()
    return out


def bench_throughput(backend: str, n: int, concurrency: int) -> dict[str, Any]:
    area = Area(backend)
    try:
        with open_sync(backend, area.url, area.options) as saver:
            pause_threads(saver, n, "t", FakeClock())
        args = {"backend": backend, "url": area.url, "options": area.options,
                "now": (T0 + timedelta(hours=1)).isoformat(), "concurrency": concurrency}
        procs = [subprocess.Popen([sys.executable, __file__, "--sweeper", json.dumps(args)],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
                 for _ in range(2)]
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        resolved = sum(r["resolved"] for r in results)
        wall = max(r["seconds"] for r in results)
        out = {"backend": backend, "approvals": n, "resolved": resolved, "sweepers": 2,
               "concurrency": concurrency, "seconds": round(wall, 2),
               "approvals_per_s": round(resolved / wall, 1)}
        print(json.dumps(out), flush=True)
        return out
    finally:
        area.drop()


def sweeper_process(args: dict[str, Any]) -> None:
    from contextlib import ExitStack
    from datetime import datetime

    now = datetime.fromisoformat(args["now"])
    with ExitStack() as stack:
        if args["backend"] == "postgres":
            # a pool without the per-checkout health check: one round trip less per call
            from psycopg_pool import ConnectionPool

            from checkpointers.postgres import PostgresSaver

            pool = stack.enter_context(ConnectionPool(
                args["url"], min_size=args["concurrency"] + 2, max_size=args["concurrency"] + 2,
                kwargs={"autocommit": True}, open=True))
            saver = PostgresSaver(pool, **args["options"])
        else:
            saver = stack.enter_context(open_sync(args["backend"], args["url"], args["options"]))
        graph = review_graph(saver)
        sweeper = ApprovalSweeper(graph, clock=lambda: now, concurrency=args["concurrency"],
                                  page_size=50)
        t = time.perf_counter()
        resolved = sweeper.run_once()
        print(json.dumps({"resolved": resolved, "seconds": time.perf_counter() - t}))


def bench_batch(backend: str, sizes: list[int]) -> list[dict[str, Any]]:
    from langgraph.graph import END, START, StateGraph

    from interrupts import request_batch_approval

    def review(state: dict[str, Any]) -> dict[str, Any]:
        res = request_batch_approval(state["items"], key=lambda o: o["id"])
        return {"items": state["items"], "approved": len(res.approved)}

    from typing import TypedDict

    class S(TypedDict, total=False):
        items: list[dict[str, Any]]
        approved: int

    out = []
    area = Area(backend)
    try:
        with open_sync(backend, area.url, area.options) as saver:
            b = StateGraph(S)
            b.add_node("review", review)
            b.add_edge(START, "review")
            b.add_edge("review", END)
            graph = b.compile(checkpointer=saver)
            for size in sizes:
                cfg = {"configurable": {"thread_id": f"batch{size}"}}
                graph.invoke({"items": [{"id": f"i{k}", "v": k} for k in range(size)]}, cfg)
                times = []
                for c in range(0, size, 10):
                    t = time.perf_counter()
                    decide(graph, cfg, {f"i{k}": True for k in range(c, c + 10)}, by="bench")
                    times.append(time.perf_counter() - t)
                tenth = max(1, len(times) // 10)
                row = {"backend": backend, "items": size, "calls": len(times),
                       "first_10pct_ms": round(statistics.median(times[:tenth]) * 1000, 1),
                       "last_10pct_but_final_ms": round(
                           statistics.median(times[-tenth - 1:-1] or times[-1:]) * 1000, 1),
                       "final_call_ms": round(times[-1] * 1000, 1)}
                out.append(row)
                print(json.dumps(row), flush=True)
    finally:
        area.drop()
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--sweeper":
        sweeper_process(json.loads(sys.argv[2]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["postgres", "redis"], default="postgres")
    p.add_argument("--parts", default="find,throughput,batch")
    p.add_argument("--due", type=int, default=1000)
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--approvals", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=8)
    a = p.parse_args()
    parts = a.parts.split(",")
    if "find" in parts:
        bench_find(a.backend, a.due, [int(s) for s in a.sizes.split(",")])
    if "throughput" in parts:
        bench_throughput(a.backend, a.approvals, a.concurrency)
    if "batch" in parts:
        bench_batch(a.backend, [100, 1000])


if __name__ == "__main__":
    main()
