"""Benchmark: decisions through the approval service's HTTP API, 20 concurrent clients.

Peers, interleaved round by round so machine load hits both alike:

* ``api``: ``langgraph-durable serve`` (uvicorn, its own process) on the saver;
  ``--clients`` httpx clients (threads of this process) post
  ``POST /api/threads/{id}/decision`` for fresh waiting threads;
* ``direct``: the same number of threads of this process call ``approve()``
  on the same graph and saver (what the service does per decision, without HTTP).

Each waiting thread gets two decision attempts at once from two different
clients (alice and bob, both approvers): exactly one may win. After each round
the benchmark checks, for every thread, one ``recorded`` audit entry, one
``already_decided`` refusal, and one checkpoint where the node after the
approval ran (the graph resumed exactly once). Throughput = decided threads /
wall time of the round (seeding excluded). Medians over ``--rounds``; ratio api/direct.

Usage::

    python benchmarks/bench_service.py --backend postgres
    python benchmarks/bench_service.py --backend redis --threads 200 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from langgraph_durable.interrupts import (  # noqa: E402
    AlreadyDecided,
    approve,
    audit_log,
    thread_timeline,
)
from tests._approval_graphs import review_graph  # noqa: E402

TOKENS = {
    "bench-alice-token": {"id": "alice", "roles": ["ops"]},
    "bench-bob-token-0": {"id": "bob", "roles": ["ops"]},
}


def graph(saver: Any) -> Any:
    """The served graph: ``review`` asks ops to approve a refund, then ``act`` runs."""
    return review_graph(saver, approvers=("ops",), open_to_all=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _area(backend: str) -> tuple[str, str, dict[str, Any]]:
    name = f"bench_svc_{uuid.uuid4().hex[:8]}"
    if backend == "postgres":
        url = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
        return url, f"{url}?schema={name}", {"schema": name, "pool_size": 24}
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    return url, f"{url}?prefix={name}", {"prefix": name}


def _open(backend: str, url: str, options: dict[str, Any]) -> Any:
    if backend == "postgres":
        from langgraph_durable.checkpointers.postgres import PostgresSaver

        return PostgresSaver.from_conn_string(url, **options)
    from langgraph_durable.checkpointers.redis import RedisSaver

    return RedisSaver.from_conn_string(url, **options)


def _drop(backend: str, url: str, options: dict[str, Any]) -> None:
    if backend == "postgres":
        import psycopg
        from psycopg import sql

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                    sql.Identifier(options["schema"])
                )
            )
    else:
        import redis

        client = redis.Redis.from_url(url)
        for key in client.scan_iter(match=f"{options['prefix']}*", count=1000):
            client.delete(key)


def _serve(area_url: str, tokens: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "langgraph_durable.interrupts.cli",
            "serve",
            "--url",
            area_url,
            "--graph",
            "bench_service:graph",
            "--tokens",
            str(tokens),
            "--port",
            str(port),
        ],
        cwd=Path(__file__).parent,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the service did not start")


def _seed(g: Any, ids: list[str], clients: int) -> None:
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda t: g.invoke({"amount": 1}, {"configurable": {"thread_id": t}}), ids))


def _api_round(base: str, ids: list[str], clients: int) -> tuple[float, list[int]]:
    local = threading.local()

    def post(job: tuple[str, str]) -> int:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base, timeout=60)
        thread_id, token = job
        got = local.client.post(
            f"/api/threads/{thread_id}/decision",
            json={"decision": "approve", "comment": "bench"},
            headers={"Authorization": f"Bearer {token}"},
        )
        return got.status_code

    jobs = [(t, tok) for t in ids for tok in TOKENS]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        codes = list(pool.map(post, jobs))
    return time.perf_counter() - started, codes


def _direct_round(g: Any, ids: list[str], clients: int) -> tuple[float, list[int]]:
    def call(job: tuple[str, str]) -> int:
        thread_id, who = job
        try:
            approve(
                g,
                {"configurable": {"thread_id": thread_id}},
                by=who,
                roles=["ops"],
                comment="bench",
            )
        except AlreadyDecided:
            return 409
        return 200

    jobs = [(t, who["id"]) for t in ids for who in TOKENS.values()]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        codes = list(pool.map(call, jobs))
    return time.perf_counter() - started, codes


def _check_once(saver: Any, ids: list[str], codes: list[int]) -> None:
    assert sorted(codes) == [200] * len(ids) + [409] * len(ids), sorted(set(codes))
    for t in ids:
        outcomes = [e.outcome for e in audit_log(saver, thread_id=t)]
        assert outcomes.count("recorded") == 1, (t, outcomes)
        assert outcomes.count("already_decided") == 1, (t, outcomes)
        acted = sum("act" in e.nodes for e in thread_timeline(saver, t, audit=False))
        assert acted == 1, (t, acted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["postgres", "redis"], default="postgres")
    ap.add_argument("--threads", type=int, default=100, help="waiting threads per round")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    server_url, area_url, options = _area(args.backend)
    rates: dict[str, list[float]] = {"api": [], "direct": []}
    with tempfile.TemporaryDirectory() as tmp, _open(args.backend, server_url, options) as saver:
        saver.setup()
        g = graph(saver)
        tokens = Path(tmp) / "tokens.json"
        tokens.write_text(json.dumps(TOKENS))
        proc, base = _serve(area_url, tokens)
        try:
            for r in range(args.rounds):
                for peer in ("api", "direct") if r % 2 == 0 else ("direct", "api"):
                    ids = [f"{peer}-{r}-{n}" for n in range(args.threads)]
                    _seed(g, ids, args.clients)
                    if peer == "api":
                        took, codes = _api_round(base, ids, args.clients)
                    else:
                        took, codes = _direct_round(g, ids, args.clients)
                    _check_once(saver, ids, codes)
                    rates[peer].append(len(ids) / took)
                    print(f"round {r} {peer:6s} {len(ids) / took:7.1f} decisions/s", flush=True)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            _drop(args.backend, server_url, options)
    api, direct = statistics.median(rates["api"]), statistics.median(rates["direct"])
    print(
        f"{args.backend}: {args.clients} clients, 2 attempts per approval, "
        f"{args.threads} approvals x {args.rounds} rounds per peer; every one decided once "
        f"(one recorded, one 409, one resume)\n"
        f"median decisions/s  api {api:.1f}  direct {direct:.1f}  "
        f"ratio api/direct {api / direct:.2f}"
    )
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
