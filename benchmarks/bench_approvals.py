"""Benchmark: approvals at scale on the Postgres and Redis savers.

1. ``find``: the sweeper's claim of every due approval (1,000, pages of 100)
   with W = 10,000 and W = 100,000 other approvals waiting (deadlines 30 days
   out). Two storage areas, one per W, each built from one real paused graph
   run whose wait entry is copied under other thread ids (due copies keep its
   deadline, waiting copies get +30 days); claims alternate between the two
   areas (5 rounds), so machine load hits both alike. Median and ratio.
2. ``throughput``: N real paused threads, all due; 2 sweeper processes (each
   ``concurrency`` resumes in flight) started together resolve them;
   approvals/s = resolved / the slower sweeper's sweep wall time (process
   start-up excluded). ``--mode``: ``async`` (``arun_once`` on an async saver:
   ``graph.ainvoke``, resumes as tasks of one event loop) and/or ``sync``
   (``run_once``: ``graph.invoke``, a thread per resume in flight), alternating
   ``--rounds`` times; ``--durability exit`` sweeps with
   ``ApprovalSweeper(durability="exit")``; ``--cas each`` records the timeout
   decisions one per approval (as before the page's were recorded together).
   Each sweeper also reports its CPU time, and the server's: on Postgres the
   CPU time of the sweepers' own backends (``/proc``, local server only), on
   Redis the whole server's (``INFO cpu``: an upper bound when others use it
   too): CPU ms per approval, and the rate that much
   CPU would allow on 2 idle cores.
3. ``resume``: the cost of the resume alone (what the sweeper does per
   approval after its claim): ``graph.invoke(Command(resume=...))`` of the
   same paused 2-node graph, one at a time, on ``InMemorySaver`` (LangGraph's
   own cost), on our saver with run leases off, and with leases on (default).
4. ``batch``: ``decide`` calls of 10 items on batches of 100 and of 1,000
   items: median time of a call while 0-10% of the batch is decided vs while
   80-90% is (the completing call excluded: it resumes the run). Timed calls
   alternate early/late and 100/1,000 (batches prepared beforehand), so load
   drift on a shared machine hits every cell alike; 10 samples per cell.
5. ``batchops`` (not in the default parts): the storage operations one
   ``decide`` makes (``get_state``, ``count_decisions`` over the batch's keys,
   one item's ``record_decision``) on a fresh 1,000-item batch vs one with 800
   items decided, alternating, median of 30.

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

from langgraph_durable.interrupts import CLOCK_CONFIG_KEY, ApprovalSweeper, decide  # noqa: E402
from tests._approval_graphs import T0, FakeClock, review_graph  # noqa: E402
from tests._approval_savers import open_sync  # noqa: E402
from tests._parts import part_of  # noqa: E402
from tests._servers import postgres_url, redis_url  # noqa: E402

APP_NAME = "bench_approvals_sweeper"


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
        graph.invoke(
            {"amount": i}, {"configurable": {"thread_id": f"{prefix}{i}", CLOCK_CONFIG_KEY: clock}}
        )
    return graph


def add_waiting(
    area: Area,
    saver: Any,
    template: str,
    count: int,
    start: int,
    prefix: str = "waiting-",
    days: int = 30,
) -> None:
    """``count`` copies of ``template``'s wait entry, deadline moved by ``days``."""
    if area.backend == "postgres":
        import psycopg
        from psycopg import sql

        with psycopg.connect(area.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("""
                INSERT INTO {s}.durable_waits (thread_id, interrupt_id, checkpoint_ns,
                    checkpoint_id, task_id, kind, deadline, approvers, escalation_level,
                    value_type, value, created_at)
                SELECT %s || g, w.interrupt_id, w.checkpoint_ns, w.checkpoint_id,
                       w.task_id, w.kind,
                       w.deadline + make_interval(days => %s), w.approvers,
                       w.escalation_level, w.value_type, w.value, w.created_at
                FROM {s}.durable_waits AS w, generate_series(%s::int, %s::int) AS g
                WHERE w.thread_id = %s""").format(s=sql.Identifier(area.name)),
                (prefix, days, start, start + count - 1, template),
            )
            conn.execute(sql.SQL("ANALYZE {}.durable_waits").format(sql.Identifier(area.name)))
        return
    import ormsgpack

    from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES, shard_of
    from langgraph_durable.checkpointers.redis._metadata_index import SEP

    wt, wd = THREAD_SUFFIXES.index("wt"), THREAD_SUFFIXES.index("wd")
    keys = saver.core.keys
    client = saver.client
    ((fld, entry),) = client.hgetall(keys.thread(template)[wt]).items()
    fields = ormsgpack.unpackb(entry)
    deadline = int((T0 + timedelta(minutes=15, days=days)).timestamp() * 1000)
    pipe = client.pipeline(transaction=False)
    for i in range(start, start + count):
        tid = f"{prefix}{i}"
        tk = keys.thread(tid)
        # the stored entry names its thread: each copy names its own
        pipe.hset(tk[wt], fld, ormsgpack.packb({**fields, "thread_id": tid}))
        pipe.zadd(tk[wd], {fld: deadline})
        pipe.zadd(keys.wait_shard(shard_of(tid)), {tid + SEP + fld.decode(): deadline})
        if len(pipe) >= 3000:
            pipe.execute()
    pipe.execute()


def claim_all(saver: Any, now: Any, page: int = 100) -> tuple[float, int]:
    """Seconds to claim every due wait in pages of ``page`` (one new owner), and how many."""
    owner = uuid.uuid4().hex
    t = time.perf_counter()
    got = 0
    while True:
        claimed = part_of(saver, "waits").claim_due_waits(
            now=now, owner=owner, lease=timedelta(minutes=1), limit=page
        )
        got += len(claimed)
        if len(claimed) < page:
            return time.perf_counter() - t, got


def bench_find(backend: str, due: int, sizes: list[int], rounds: int = 5) -> list[dict[str, Any]]:
    from contextlib import ExitStack

    areas = {size: Area(backend) for size in sizes}
    try:
        with ExitStack() as stack:
            savers = {}
            for size, area in areas.items():
                saver = savers[size] = stack.enter_context(
                    open_sync(backend, area.url, area.options)
                )
                pause_threads(saver, 1, "due-", FakeClock())
                add_waiting(area, saver, "due-0", due - 1, 1, prefix="due-", days=0)
                add_waiting(area, saver, "due-0", size, 0)
            now = T0 + timedelta(hours=1)
            runs: dict[int, list[float]] = {size: [] for size in sizes}
            for _ in range(rounds):
                for size in sizes:
                    seconds, got = claim_all(savers[size], now)
                    assert got == due, (got, due, size)
                    runs[size].append(seconds)
                now += timedelta(minutes=2)  # past the lease: the next round claims all again
        out = []
        for size in sizes:
            out.append(
                {
                    "backend": backend,
                    "waiting": size,
                    "due": due,
                    "rounds": rounds,
                    "claim_all_due_s": round(statistics.median(runs[size]), 3),
                    "runs_s": [round(r, 3) for r in runs[size]],
                }
            )
            print(json.dumps(out[-1]), flush=True)
        first, last = out[0]["claim_all_due_s"], out[-1]["claim_all_due_s"]
        print(
            json.dumps(
                {"backend": backend, "find_ratio_largest_vs_smallest": round(last / first, 2)}
            ),
            flush=True,
        )
        return out
    finally:
        for area in areas.values():
            area.drop()


def bench_throughput(
    backend: str,
    n: int,
    concurrency: int,
    mode: str = "async",
    durability: str | None = None,
    cas: str = "page",
) -> dict[str, Any]:
    area = Area(backend)
    try:
        with open_sync(backend, area.url, area.options) as saver:
            pause_threads(saver, n, "t", FakeClock())
        args = {
            "backend": backend,
            "url": area.url,
            "options": area.options,
            "now": (T0 + timedelta(hours=1)).isoformat(),
            "concurrency": concurrency,
            "mode": mode,
            "durability": durability,
            "cas": cas,
        }
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--sweeper", json.dumps(args)],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            for _ in range(2)
        ]
        for p in procs:  # both set up (imports, pool, graph) before either sweeps
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        redis0 = redis_cpu_s(area.url) if backend == "redis" else None
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        if redis0 is not None:
            # the whole server's CPU (it may serve others too): an upper bound
            for r in results:
                r["server_cpu_s"] = (redis_cpu_s(area.url) - redis0) / len(results)
        resolved = sum(r["resolved"] for r in results)
        wall = max(r["seconds"] for r in results)
        client = sum(r["cpu_s"] for r in results) / resolved * 1000
        out: dict[str, Any] = {
            "backend": backend,
            "approvals": n,
            "resolved": resolved,
            "sweepers": 2,
            "mode": mode,
            "durability": durability or "default",
            "cas": cas,
            "concurrency": concurrency,
            "seconds": round(wall, 2),
            "approvals_per_s": round(resolved / wall, 1),
            "sweeper_cpu_ms_per_approval": round(client, 2),
        }
        if all(r.get("server_cpu_s") is not None for r in results):
            server = sum(r["server_cpu_s"] for r in results) / resolved * 1000
            out["server_cpu_ms_per_approval"] = round(server, 2)
            out["rate_2_idle_cores_allow"] = round(2000 / (client + server), 1)
        print(json.dumps(out), flush=True)
        return out
    finally:
        area.drop()


def redis_cpu_s(url: str) -> float:
    """CPU seconds the Redis server used so far (all its clients)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        info = client.info("cpu")
    finally:
        client.close()
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def backend_cpu_s(url: str) -> float | None:
    """CPU seconds used so far by the server backends of this benchmark's sweepers."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        pids = [
            r[0]
            for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (APP_NAME,)
            )
        ]
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None  # not a local server
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class _Timed:
    """The sweep's wall and CPU time, and its server backends' CPU (Postgres)."""

    def __init__(self, url: str, measure_server: bool) -> None:
        self.url, self.measure_server = url, measure_server

    def __enter__(self) -> _Timed:
        self.server0 = backend_cpu_s(self.url) if self.measure_server else None
        self.t, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.t
        self.cpu = time.process_time() - self.cpu
        server1 = backend_cpu_s(self.url) if self.measure_server else None
        self.server = None if self.server0 is None or server1 is None else server1 - self.server0

    def report(self, resolved: int) -> None:
        print(
            json.dumps(
                {
                    "resolved": resolved,
                    "seconds": self.seconds,
                    "cpu_s": self.cpu,
                    "server_cpu_s": self.server,
                }
            )
        )


def sweeper_process(args: dict[str, Any]) -> None:
    from datetime import datetime

    now = datetime.fromisoformat(args["now"])
    url = args["url"]
    options = dict(args["options"])
    if args["backend"] == "postgres":
        from psycopg.conninfo import make_conninfo

        # named, so the server backends' CPU can be read (backend_cpu_s)
        url = make_conninfo(url, application_name=APP_NAME)
        options["pool_size"] = args["concurrency"] + 2
    timed = _Timed(args["url"], measure_server=args["backend"] == "postgres")
    if args["cas"] == "each":  # the sweeper as before: one timeout compare-and-set per approval
        import langgraph_durable.interrupts._sweeper

        def one_by_one(entries: Any, now: Any) -> Any:
            return {}
            yield  # a flow that records nothing: each entry records its own

        langgraph_durable.interrupts._sweeper.record_timeouts_flow = one_by_one  # type: ignore[assignment]

    def sweeper_of(saver: Any) -> ApprovalSweeper:
        return ApprovalSweeper(
            review_graph(saver),
            clock=lambda: now,
            concurrency=args["concurrency"],
            page_size=50,
            durability=args["durability"],
        )

    if args["mode"] == "sync":  # run_once: graph.invoke, a thread per resume in flight
        from contextlib import ExitStack

        with ExitStack() as stack:
            if args["backend"] == "postgres":
                from langgraph_durable.checkpointers.postgres import PostgresSaver

                saver = stack.enter_context(PostgresSaver.from_conn_string(url, **options))
                saver.setup()
            else:
                saver = stack.enter_context(open_sync(args["backend"], url, options))
            sweeper = sweeper_of(saver)
            print("ready", flush=True)
            sys.stdin.readline()
            with timed:
                resolved = sweeper.run_once()
            timed.report(resolved)
        return

    import asyncio

    async def main() -> None:  # arun_once: graph.ainvoke, tasks on one event loop
        saver_cls: Any
        if args["backend"] == "postgres":
            from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver as saver_cls
        else:
            from langgraph_durable.checkpointers.redis import AsyncRedisSaver as saver_cls
        async with saver_cls.from_conn_string(url, **options) as saver:
            await saver.setup()
            sweeper = sweeper_of(saver)
            print("ready", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            with timed:
                resolved = await sweeper.arun_once()
            timed.report(resolved)

    asyncio.run(main())


def bench_resume(backend: str, n: int) -> list[dict[str, Any]]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from langgraph_durable.interrupts._records import timeout_record

    def run(saver: Any, label: str) -> dict[str, Any]:
        clock = FakeClock()
        graph = pause_threads(saver, n, "r", clock)
        # each thread's own interrupt and timeout decision (another thread's
        # decision is stale there: the node would ask again instead of resuming)
        answers = []
        for i in range(n):
            intr = graph.get_state({"configurable": {"thread_id": f"r{i}"}}).interrupts[0]
            answers.append({intr.id: timeout_record(intr.value, intr.id, T0 + timedelta(hours=1))})
        t, cpu = time.perf_counter(), time.process_time()
        for i in range(n):
            out = graph.invoke(
                Command(resume=answers[i]),
                {"configurable": {"thread_id": f"r{i}", CLOCK_CONFIG_KEY: clock}},
            )
            assert "__interrupt__" not in out, out  # resumed to the end
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        row = {
            "backend": label,
            "resumes": n,
            "wall_ms_per_resume": round(seconds / n * 1000, 2),
            "client_cpu_ms_per_resume": round(cpu / n * 1000, 2),
        }
        print(json.dumps(row), flush=True)
        return row

    out = [run(InMemorySaver(), "memory (LangGraph alone)")]
    for leases in (False, True):
        area = Area(backend)
        try:
            with open_sync(backend, area.url, {**area.options, "leases": leases}) as saver:
                out.append(run(saver, f"{backend} leases={leases}"))
        finally:
            area.drop()
    return out


def bench_batch(backend: str, sizes: list[int], samples: int = 10) -> list[dict[str, Any]]:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from langgraph_durable.interrupts import request_batch_approval

    def review(state: dict[str, Any]) -> dict[str, Any]:
        res = request_batch_approval(state["items"], key=lambda o: o["id"])
        return {"items": state["items"], "approved": len(res.approved)}

    class S(TypedDict, total=False):
        items: list[dict[str, Any]]
        approved: int

    early: dict[int, list[float]] = {size: [] for size in sizes}
    late: dict[int, list[float]] = {size: [] for size in sizes}
    area = Area(backend)
    try:
        with open_sync(backend, area.url, area.options) as saver:
            b = StateGraph(S)
            b.add_node("review", review)
            b.add_edge(START, "review")
            b.add_edge("review", END)
            graph = b.compile(checkpointer=saver)

            def call(thread: str, first: int) -> float:
                t = time.perf_counter()
                decide(
                    graph,
                    {"configurable": {"thread_id": thread}},
                    {f"i{k}": True for k in range(first, first + 10)},
                    by="bench",
                )
                return time.perf_counter() - t

            # (thread, first item) of each timed call: "early" calls find 0-10% of
            # their batch decided, "late" ones 80-90% (decided beforehand, untimed)
            plan: dict[int, tuple[list[tuple[str, int]], list[tuple[str, int]]]] = {}
            for size in sizes:
                per = max(1, size // 100)  # calls of 10 in a tenth of the batch
                e_calls: list[tuple[str, int]] = []
                l_calls: list[tuple[str, int]] = []
                for n in range(-(-samples // per)):
                    for kind, calls in (("early", e_calls), ("late", l_calls)):
                        thread = f"{kind}-{size}-{n}"
                        graph.invoke(
                            {"items": [{"id": f"i{k}", "v": k} for k in range(size)]},
                            {"configurable": {"thread_id": thread}},
                        )
                        base = 0 if kind == "early" else size * 8 // 10
                        for first in range(0, base, 10):
                            call(thread, first)
                        calls += [(thread, base + 10 * j) for j in range(per)]
                plan[size] = (e_calls[:samples], l_calls[:samples])
            # early and late calls alternate, and so do the sizes: load drift hits all alike
            for i in range(samples):
                for size in sizes:
                    early[size].append(call(*plan[size][0][i]))
                    late[size].append(call(*plan[size][1][i]))
    finally:
        area.drop()
    out = []
    for size in sizes:
        e = statistics.median(early[size][:samples]) * 1000
        la = statistics.median(late[size][:samples]) * 1000
        out.append(
            {
                "backend": backend,
                "items": size,
                "samples": samples,
                "decide_ms_0_10pct_decided": round(e, 1),
                "decide_ms_80_90pct_decided": round(la, 1),
                "late_vs_early": round(la / e, 2),
            }
        )
        print(json.dumps(out[-1]), flush=True)
    print(
        json.dumps(
            {
                "backend": backend,
                "decide_ratio_largest_vs_smallest_batch": round(
                    out[-1]["decide_ms_80_90pct_decided"] / out[0]["decide_ms_80_90pct_decided"], 2
                ),
            }
        ),
        flush=True,
    )
    return out


def bench_batch_ops(backend: str, size: int = 1000, reps: int = 30) -> list[dict[str, Any]]:
    """The storage operations of one ``decide``, on a fresh batch vs one 80% decided."""
    from datetime import datetime, timezone
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from langgraph_durable.interrupts import request_batch_approval
    from langgraph_durable.interrupts._records import item_key, new_record

    def review(state: dict[str, Any]) -> dict[str, Any]:
        res = request_batch_approval(state["items"], key=lambda o: o["id"])
        return {"approved": len(res.approved)}

    class S(TypedDict, total=False):
        items: list[dict[str, Any]]
        approved: int

    area = Area(backend)
    times: dict[tuple[str, str], list[float]] = {}
    try:
        with open_sync(backend, area.url, area.options) as saver:
            b = StateGraph(S)
            b.add_node("review", review)
            b.add_edge(START, "review")
            b.add_edge("review", END)
            graph = b.compile(checkpointer=saver)
            batches = {}
            for name in ("fresh", "80pct_decided"):
                cfg = {"configurable": {"thread_id": name}}
                graph.invoke({"items": [{"id": f"i{k}", "v": k} for k in range(size)]}, cfg)
                if name != "fresh":
                    for c in range(0, size * 8 // 10, 10):
                        decide(graph, cfg, {f"i{k}": True for k in range(c, c + 10)}, by="b")
                bid = graph.get_state(cfg).interrupts[0].id
                batches[name] = (cfg, bid, [item_key(bid, f"i{k}") for k in range(size)])
            n = 0
            for _ in range(reps):  # the two batches alternate
                for name, (cfg, bid, keys) in batches.items():
                    n += 1
                    record = new_record(
                        type="decision",
                        approval_id=bid,
                        by="b",
                        approved=True,
                        at=datetime.now(timezone.utc),
                        item=f"extra{n}",
                    )
                    thread_id = cfg["configurable"]["thread_id"]
                    t0 = time.perf_counter()
                    graph.get_state(cfg)
                    t1 = time.perf_counter()
                    part_of(saver, "decisions").count_decisions(thread_id=thread_id, keys=keys)
                    t2 = time.perf_counter()
                    part_of(saver, "decisions").record_decision(
                        thread_id=thread_id, key=item_key(bid, f"extra{n}"), decision=record
                    )
                    t3 = time.perf_counter()
                    for what, took in (
                        ("get_state", t1 - t0),
                        ("count_decisions", t2 - t1),
                        ("record_decision", t3 - t2),
                    ):
                        times.setdefault((name, what), []).append(took)
    finally:
        area.drop()
    out = []
    for what in ("get_state", "count_decisions", "record_decision"):
        row = {
            "backend": backend,
            "items": size,
            "op": what,
            "reps": reps,
            **{
                f"{name}_ms": round(statistics.median(times[(name, what)]) * 1000, 2)
                for name in ("fresh", "80pct_decided")
            },
        }
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--sweeper":
        sweeper_process(json.loads(sys.argv[2]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["postgres", "redis"], default="postgres")
    p.add_argument("--parts", default="find,throughput,resume,batch")
    p.add_argument("--due", type=int, default=1000)
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--approvals", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument(
        "--mode",
        default="async,sync",
        help="throughput: the sweepers' arun_once (async) and/or run_once (sync); "
        "both alternate, --rounds times",
    )
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument(
        "--cas",
        default="page",
        help="throughput: 'page' (a page's timeout decisions in one round trip), "
        "'each' (one per approval, as before), comma-separated to alternate",
    )
    p.add_argument(
        "--durability",
        default="default",
        help="throughput: the sweepers' resume durability, comma-separated to "
        "alternate (default = the graph's own; exit = ApprovalSweeper(durability="
        "'exit'))",
    )
    p.add_argument("--resumes", type=int, default=200)
    a = p.parse_args()
    parts = a.parts.split(",")
    if "find" in parts:
        bench_find(a.backend, a.due, [int(s) for s in a.sizes.split(",")])
    if "throughput" in parts:
        for _ in range(a.rounds):
            for mode in a.mode.split(","):
                for durability in a.durability.split(","):
                    for cas in a.cas.split(","):
                        bench_throughput(
                            a.backend,
                            a.approvals,
                            a.concurrency,
                            mode,
                            None if durability == "default" else durability,
                            cas,
                        )
    if "resume" in parts:
        bench_resume(a.backend, a.resumes)
    if "batch" in parts:
        bench_batch(a.backend, [100, 1000])
    if "batchops" in parts:
        bench_batch_ops(a.backend)


if __name__ == "__main__":
    main()
