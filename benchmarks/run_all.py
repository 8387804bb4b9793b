"""Rerun every benchmark the documentation quotes and write docs/benchmarks.md.

Each benchmark runs as its own process, one after the other (never two at
once: they would disturb each other), with the servers the tests find. The
results page gets, per benchmark, what it measures, its command, the load
average before and after it, how long it took and its summary output; above
them the machine (CPUs, memory, Python, PostgreSQL, Redis, the peers'
versions), the date, and the headline table of the default-configuration
workload with its ratios to the goals. Only current figures are written:
the page is replaced on every run.

Usage::

    python benchmarks/run_all.py                 # everything (about 2 hours on 2 loaded cores:
                                                 # scale loads 10 million checkpoints)
    python benchmarks/run_all.py --quick         # a smoke run: small sizes, one round
    python benchmarks/run_all.py --only defaults,cluster --out /tmp/b.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._results_page import job_block, merge  # noqa: E402 (after the path)


@dataclass(frozen=True)
class Job:
    """One benchmark command, its quick variant, and how much of its output to keep."""

    key: str
    what: str
    args: list[str]
    quick: list[str]
    keep_from: str = ""  # keep the output from the last line starting with this
    tail: int = 30  # ... or its last lines
    timeout: int = 1800


B = "benchmarks/"
JOBS = [
    Job(
        "defaults",
        "Every saver in its default configuration (`from_conn_string(url)`, `setup()`; "
        "plainredis `AsyncRedisSaver(url=)`) beside InMemorySaver: 20 threads x 30 `ainvoke`s "
        "of a 3-node graph growing ~1 KiB a step, then `aget_state` and a 10-item history "
        "of each thread; `pg` opens its default pool (up to 4 connections), `pg-conn` is ours with "
        "`pool_size=None` (one connection), as the official saver's `from_conn_string`",
        [B + "bench_defaults.py", "--rounds", "3"],
        [B + "bench_defaults.py", "--rounds", "1", "--threads", "4", "--steps", "5"],
        keep_from="medians",
    ),
    Job(
        "cluster",
        "Our Redis saver on a 3-master Redis Cluster started by the benchmark, beside one "
        "redis-server it starts with the same settings (same workload)",
        [
            B + "bench_defaults.py",
            "--savers",
            "redis-single,redis-cluster",
            "--ratios",
            "redis-single",
            "--rounds",
            "3",
        ],
        [
            B + "bench_defaults.py",
            "--savers",
            "redis-single,redis-cluster",
            "--ratios",
            "redis-single",
            "--rounds",
            "1",
            "--threads",
            "4",
            "--steps",
            "5",
        ],
        keep_from="medians",
    ),
    Job(
        "profile",
        "Where the time goes (pyinstrument samples of the event loop's thread, by package; "
        "saver calls and driver sends per `ainvoke`; Postgres again with "
        "`synchronous_commit=off` for its own sessions: the difference is the commits' WAL flush)",
        [B + "profile_savers.py", "--sync-commit-off"],
        [B + "profile_savers.py", "--threads", "4", "--steps", "5"],
        tail=60,
    ),
    Job(
        "pg-pools",
        "Both Postgres savers on pools of 10 connections (the same workload)",
        [B + "bench_savers.py", "--rounds", "3"],
        [B + "bench_savers.py", "--rounds", "1", "--threads", "4", "--steps", "5"],
        keep_from="medians",
    ),
    Job(
        "pg-one",
        "Both Postgres savers, one thread on one connection",
        [B + "bench_savers.py", "--rounds", "9", "--threads", "1", "--pool", "1"],
        [B + "bench_savers.py", "--rounds", "1", "--threads", "1", "--pool", "1", "--steps", "5"],
        keep_from="medians",
    ),
    Job(
        "pg-explain",
        "`list(None, filter=..., limit=10)` on 100,000 checkpoints: its plan",
        [B + "bench_savers.py", "--explain"],
        [B + "bench_savers.py", "--explain"],
        tail=40,
    ),
    Job(
        "redis",
        "Both Redis savers on the workload, and a 10-item history on threads of 30 and 300 "
        "checkpoints",
        [B + "bench_redis.py", "--savers", "redis,plainredis", "--rounds", "3", "--growth"],
        [B + "bench_redis.py", "--savers", "redis,plainredis", "--rounds", "1", "--steps", "5"],
        tail=20,
    ),
    Job(
        "growth",
        "Storage of a growing message list (1 KiB a step) and reads of its latest state",
        [B + "growth.py", "--steps", "300", "--savers", "ours-pg", "pg", "ours-redis", "redis"],
        [B + "growth.py", "--steps", "30", "--repeat", "3"],
        tail=25,
    ),
    Job(
        "list-memory",
        "`list()` of a whole history without a limit: time to the first tuple, to the last, "
        "and the process's peak memory",
        [B + "list_memory.py", "--steps", "300", "3000"],
        [B + "list_memory.py", "--steps", "100"],
        tail=25,
    ),
    Job(
        "migrations",
        "Bulk migrations vs LangMigrate, and a read through `migrations=` of a checkpoint "
        "already current vs a bare read",
        [B + "migrations_vs_langmigrate.py", "--threads", "1000", "--rounds", "5"],
        [
            B + "migrations_vs_langmigrate.py",
            "--threads",
            "200",
            "--read-threads",
            "50",
            "--rounds",
            "2",
        ],
        tail=25,
    ),
    Job(
        "approvals",
        "Approvals per second with two sweepers",
        [
            B + "bench_approvals.py",
            "--backend",
            "postgres",
            "--parts",
            "throughput",
            "--approvals",
            "300",
        ],
        [
            B + "bench_approvals.py",
            "--backend",
            "postgres",
            "--parts",
            "throughput",
            "--approvals",
            "100",
        ],
        tail=25,
    ),
    Job(
        "leases",
        "What run leases cost a graph run",
        [B + "bench_leases.py", "--parts", "cost", "--rounds", "3"],
        [B + "bench_leases.py", "--parts", "cost", "--rounds", "1", "--runs", "2"],
        tail=25,
    ),
    Job(
        "activity-wait",
        "What an activity's wait for its step's checkpoint costs its first call (LangGraph's "
        'default `durability="async"`), on our saver, the official saver and InMemorySaver, '
        "and what recording each put costs ours",
        [B + "bench_activity_wait.py", "--runs", "400", "--puts", "2000"],
        [B + "bench_activity_wait.py", "--runs", "20", "--puts", "50"],
        tail=8,
    ),
    Job(
        "load-200",
        "200 concurrent threads, nothing lost",
        [B + "bench_load_200_threads.py"],
        [B + "bench_load_200_threads.py", "--threads", "20", "--invokes", "2"],
        tail=25,
    ),
    Job(
        "retention",
        "How fast retention deletes idle threads, and what it costs concurrent runs",
        [
            B + "retention.py",
            "--idle",
            "20000",
            "--concurrent-idle",
            "3000",
            "--rounds",
            "5",
            "--threads",
            "8",
            "--steps",
            "10",
        ],
        [
            B + "retention.py",
            "--idle",
            "500",
            "--concurrent-idle",
            "200",
            "--rounds",
            "1",
            "--threads",
            "2",
            "--steps",
            "3",
        ],
        tail=40,
    ),
    Job(
        "scale",
        "Per-thread costs at 10,000 checkpoints and at 10 million (Postgres), and at 10,000 and "
        "3 million (Redis)",
        [B + "scale.py"],
        [
            B + "scale.py",
            "--threads",
            "3000",
            "--small-threads",
            "700",
            "--template-steps",
            "3",
            "--waits",
            "2000",
            "--small-waits",
            "700",
            "--due",
            "50",
            "--redis-checkpoints",
            "5000",
            "--redis-small",
            "1000",
            "--rounds",
            "1",
            "--repeat",
            "2",
        ],
        tail=80,
        timeout=5400,
    ),
    Job(
        "put-indexes",
        "What the `source` / `step` indexes (Postgres layout step 15) cost a `put`",
        [B + "put_with_metadata_indexes.py", "--threads", "2000", "--rounds", "15"],
        [B + "put_with_metadata_indexes.py", "--threads", "100", "--rounds", "1", "--repeat", "5"],
        tail=12,
    ),
    Job(
        "service",
        "Decisions through the approval service's HTTP API (20 clients) beside `approve()` "
        "from 20 threads",
        [B + "bench_service.py", "--backend", "postgres"],
        [B + "bench_service.py", "--backend", "postgres", "--rounds", "1", "--threads", "20"],
        tail=25,
    ),
    Job(
        "outbox",
        "What writing the notification outbox costs",
        [B + "bench_notification_outbox.py"],
        [B + "bench_notification_outbox.py", "--rounds", "1", "--calls", "20"],
        tail=25,
    ),
    Job(
        "otel",
        "What the OpenTelemetry instrumentation costs: with no SDK configured (the default), "
        "interleaved with it turned off; then with an SDK recording every span and histogram "
        "(run afterwards: an SDK cannot be unset)",
        [B + "otel_overhead.py", "--rounds", "41", "--runs", "10", "--with-sdk"],
        [B + "otel_overhead.py", "--rounds", "3", "--runs", "3", "--with-sdk"],
        tail=20,
    ),
    Job(
        "features",
        "Features checked against the official savers (needs Redis modules for "
        "langgraph-checkpoint-redis: it fails without them)",
        [B + "compare_features.py"],
        [B + "compare_features.py"],
        tail=40,
        timeout=900,
    ),
]


def _load() -> str:
    return (
        Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__().strip("[]").replace("'", "")
    )


def _server_versions() -> dict[str, str]:
    import psycopg
    import redis

    from tests._servers import postgres_url, redis_url

    found: dict[str, str] = {}
    try:
        with psycopg.connect(postgres_url()) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            found["PostgreSQL"] = str(row[0]) if row else "?"
    except psycopg.Error as exc:
        found["PostgreSQL"] = f"unreachable ({exc})"
    try:
        client = redis.Redis.from_url(redis_url())
        found["Redis"] = str(client.info("server")["redis_version"])
        client.close()
    except redis.RedisError as exc:
        found["Redis"] = f"unreachable ({exc})"
    return found


def machine() -> list[str]:
    """Lines describing the machine and the software measured."""
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    packages = [
        "langgraph",
        "langgraph-checkpoint-postgres",
        "langgraph-checkpoint-plainredis",
        "psycopg",
        "redis",
        "langmigrate",
    ]
    versions = []
    for name in packages:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    servers = ", ".join(f"{k} {v}" for k, v in _server_versions().items())
    return [
        f"- CPU: {os.cpu_count()} x {cpu}; memory {mem_kib / 1024 / 1024:.1f} GiB; "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; {servers}",
        f"- {', '.join(versions)}",
    ]


def run(job: Job, quick: bool, json_path: str | None) -> dict[str, Any]:
    """Run one job; its command, output summary, time and load."""
    argv = [sys.executable, *(job.quick if quick else job.args)]
    if json_path:
        argv += ["--json", json_path]
    shown = "python " + " ".join(job.quick if quick else job.args)
    before, t0 = _load(), time.monotonic()
    print(f"[run_all] {job.key}: {shown} (load {before})", flush=True)
    try:
        proc = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, timeout=job.timeout, check=False
        )
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        out, code = out + f"\n(stopped after {job.timeout} s)", -1
    lines = [ln for ln in out.splitlines() if "persists nothing" not in ln]
    start = max(0, len(lines) - job.tail)
    if job.keep_from:
        marks = [i for i, ln in enumerate(lines) if ln.startswith(job.keep_from)]
        start = marks[-1] if marks else start
    return {
        "job": job,
        "when": datetime.fromtimestamp(
            time.time() - (time.monotonic() - t0), timezone.utc
        ).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shown,
        "code": code,
        "seconds": time.monotonic() - t0,
        "load": (before, _load()),
        "summary": "\n".join(lines[start:]),
    }


GOALS = [
    ("pg", "official", "graph run", 0.6),
    ("pg", "memory", "graph run", 2.0),
    ("pg", "official", "get_state", 0.5),
    ("pg", "official", "history", 0.5),
    ("pg-conn", "official", "graph run", 0.6),
    ("pg-conn", "official", "get_state", 0.5),
    ("pg-conn", "official", "history", 0.5),
    ("redis", "plainredis", "graph run", 0.45),
    ("redis", "memory", "graph run", 1.5),
    ("redis", "plainredis", "get_state", 0.5),
    ("redis", "plainredis", "history", 0.5),
]


def headline(medians: dict[str, dict[str, float]]) -> list[str]:
    """The default-configuration table and the goals, from bench_defaults' medians."""
    phases = ["graph run", "get_state", "history"]
    out = ["| saver | " + " | ".join(phases) + " | graph run x InMemorySaver |", "|---" * 5 + "|"]
    floor = medians.get("memory", {}).get("graph run")
    for name, by in medians.items():
        cells = [f"{by[p] * 1000:,.1f} ms" for p in phases]
        ratio = f"{by['graph run'] / floor:.2f}" if floor else "-"
        out.append(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")
    out += ["", "| goal | measured | met |", "|---|---|---|"]
    for ours, peer, phase, goal in GOALS:
        if ours in medians and peer in medians:
            ratio = medians[ours][phase] / medians[peer][phase]
            met = "yes" if ratio <= goal else f"no (by {ratio / goal:.2f}x)"
            out.append(f"| {ours} {phase} <= {goal}x {peer} | {ratio:.2f}x | {met} |")
    return out


def migrations_goal(results: list[dict[str, Any]]) -> list[str]:
    """The goal row of a read through ``migrations=``, from the migrations benchmark's table."""
    for r in results:
        if r["job"].key != "migrations":
            continue
        found = re.search(
            r"already current \| [\d.]+ \| ([\d.]+)x wall, ([\d.]+)x client", r["summary"]
        )
        if found:
            wall, cpu = float(found.group(1)), float(found.group(2))
            met = "yes" if wall <= 1.05 else f"no (by {wall / 1.05:.2f}x)"
            return [
                f"| `get_tuple` through `migrations=` of a current checkpoint <= 1.05x a bare read "
                f"| {wall:.2f}x wall ({cpu:.2f}x client CPU) | {met} |"
            ]
    return []


def page_blocks(
    results: list[dict[str, Any]], medians: Any, quick: bool, note: str
) -> dict[str, list[str]]:
    """The blocks of the results page this run replaces."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    blocks: dict[str, list[str]] = {
        "machine": [
            f"Machine of the last run ({now}):",
            "",
            *machine(),
            *([f"- {note}"] if note else []),
            *(
                ["- **a quick smoke run** (small sizes, one round): not figures to quote"]
                if quick
                else []
            ),
        ]
    }
    if medians:
        when = next(r["when"] for r in results if r["job"].key == "defaults")
        blocks["glance"] = [
            f"### Default configuration, at a glance ({when})",
            "",
            "The medians of the `defaults` block below, and the goals they are held to.",
            "",
            *headline(medians),
        ]
    goal = migrations_goal(results)
    if goal:
        blocks["migrations-goal"] = [
            "| goal | measured | met |",
            "|---|---|---|",
            *goal,
        ]
    for r in results:
        blocks[r["job"].key] = job_block(r)
    return blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, one round: a smoke run")
    ap.add_argument(
        "--only", default="", help="comma-separated job keys: " + ",".join(j.key for j in JOBS)
    )
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--note", default="", help="a line about the machine (e.g. other work on it)")
    args = ap.parse_args()
    keys = [k for k in args.only.split(",") if k]
    unknown = set(keys) - {j.key for j in JOBS}
    if unknown:
        ap.error(f"unknown --only keys: {', '.join(sorted(unknown))}")
    jobs = [j for j in JOBS if not keys or j.key in keys]
    results, medians = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for job in jobs:
            json_path = str(Path(tmp) / "defaults.json") if job.key == "defaults" else None
            results.append(run(job, args.quick, json_path))
            if json_path and Path(json_path).exists():
                medians = json.loads(Path(json_path).read_text())
            print(results[-1]["summary"], flush=True)
    out = Path(args.out)
    page = out.read_text() if out.exists() else "# Benchmarks\n"
    order = ["machine", "glance", "migrations-goal", *(j.key for j in JOBS)]
    out.write_text(merge(page, page_blocks(results, medians, args.quick, args.note), order))
    print(f"[run_all] wrote {args.out}")
    if any(r["code"] != 0 for r in results):
        failed = ", ".join(r["job"].key for r in results if r["code"] != 0)
        print(f"[run_all] failed: {failed}")
        sys.exit(1)


if __name__ == "__main__":
    main()
