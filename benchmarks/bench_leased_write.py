"""Benchmark: what a run's lease costs the write it rides with (Postgres).

One ``put_writes`` of two small writes on one connection, three ways, alternating
in rounds of ``--calls`` calls: ``plain`` (no lease), ``pipeline`` (the write and
the lease acquire as two statements in one psycopg pipeline, as before the fold)
and ``folded`` (the acquire as a CTE of the write's statement,
``checkpointers/postgres/_lease_fold.py``). Reports the client's CPU, the server
backend's CPU (``/proc``, local server only) and the wall time per call.

Usage::

    python benchmarks/bench_leased_write.py --calls 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from benchmarks.bench_approvals import Area  # noqa: E402
from langgraph_durable.checkpointers.postgres import PostgresSaver  # noqa: E402
from langgraph_durable.checkpointers.postgres._stmt import CONNECT_KWARGS  # noqa: E402


def _backend_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    area = Area("postgres")
    try:
        with psycopg.connect(area.url, **CONNECT_KWARGS) as conn:
            saver = PostgresSaver(conn, schema=area.options["schema"], leases=False)
            saver.setup()
            pid = conn.info.backend_pid
            ttl = timedelta(seconds=30)

            def call(how: str, key: str) -> None:
                cfg: dict[str, Any] = {
                    "configurable": {"thread_id": key, "checkpoint_ns": "", "checkpoint_id": "c1"}
                }
                op = saver.core.put_writes(cfg, [("a", {"v": 1}), ("b", "x")], "task", "")
                lease = (
                    "acquire_lease",
                    {
                        "thread_id": key,
                        "owner": "bench",
                        "now": datetime.now(timezone.utc),
                        "ttl": ttl,
                    },
                )
                if how == "plain":
                    saver._runner.run("put_writes", op)
                elif how == "pipeline":
                    saver._runner.run_together(
                        "put_writes", saver.leases._with_lease_ops(op, lease, None)
                    )
                else:
                    saver.leases.run_with_lease("put_writes", op, lease, None)

            for rnd in range(a.rounds):
                for how in ("plain", "pipeline", "folded"):
                    server0 = _backend_cpu_s(pid)
                    cpu0, t0 = time.process_time(), time.perf_counter()
                    for i in range(a.calls):
                        call(how, f"{how}-{rnd}-{i}")
                    n = a.calls
                    print(
                        json.dumps(
                            {
                                "round": rnd + 1,
                                "write": how,
                                "client_cpu_ms": round((time.process_time() - cpu0) / n * 1000, 3),
                                "server_cpu_ms": round(
                                    (_backend_cpu_s(pid) - server0) / n * 1000, 3
                                ),
                                "wall_ms": round((time.perf_counter() - t0) / n * 1000, 3),
                            }
                        ),
                        flush=True,
                    )
    finally:
        area.drop()


if __name__ == "__main__":
    main()
