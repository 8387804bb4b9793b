"""Leasing savers, the test graph and child-process entry points for the lease tests.

Child processes run ``python -m tests._lease_support <mode> <json args>`` so a
test can SIGKILL a real process in the middle of a run.
"""

from __future__ import annotations

import json
import operator
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers._leases import LeaseSettings
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts._heartbeat import heartbeat
from tests._backends import POSTGRES

STEPS = 20


def dead_holder_owner() -> str:
    """The owner id of a run on this host whose process has exited (its pid is free)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{socket.gethostname()}:{proc.pid}:run:gone"


def steps() -> int:
    """Length of the step graph: 20, or ``LEASE_TEST_STEPS`` for the bulk tests."""
    return int(os.environ.get("LEASE_TEST_STEPS", STEPS))


def settings(lease: float, beat: float) -> LeaseSettings:
    return LeaseSettings(lease=timedelta(seconds=lease), heartbeat=timedelta(seconds=beat))


# -- savers ---------------------------------------------------------------------------


@contextmanager
def leasing_saver(
    backend: str, where: dict[str, str], lease: LeaseSettings, pool_size: int | None = None
) -> Iterator[Any]:
    """One of our sync savers, with run leases, on ``backend`` (``pg`` or ``redis``)."""
    if backend == POSTGRES:
        with PostgresSaver.from_conn_string(
            where["url"], schema=where["schema"], leases=lease, pool_size=pool_size
        ) as saver:
            saver.setup()
            try:
                yield saver
            finally:
                saver.run_leases.close()
    else:
        with RedisSaver.from_conn_string(
            where["url"], prefix=where["prefix"], leases=lease
        ) as rsaver:
            rsaver.setup()
            try:
                yield rsaver
            finally:
                rsaver.run_leases.close()


def where_of(backend: str, request: Any) -> dict[str, str]:
    """The isolated storage area of a test, from its fixtures."""
    if backend == POSTGRES:
        url, schema = request.getfixturevalue("pg_set_up_schema")
        return {"url": url, "schema": schema}
    url, prefix = request.getfixturevalue("redis_prefix")
    return {"url": url, "prefix": prefix}


# -- the graph ------------------------------------------------------------------------


class StepState(TypedDict):
    n: int
    trace: Annotated[list[str], operator.add]


def _behaviour(thread_id: str, n: int) -> None:
    """What a step does besides counting, steered by the process environment."""
    ask_at = int(os.environ.get("LEASE_TEST_ASK_AT", "-1"))
    if n == ask_at:
        from langgraph.types import interrupt

        interrupt({"step": n})  # pauses the run; a resume goes on past it
    delay = float(os.environ.get("LEASE_TEST_DELAY", "0"))
    hang_at = int(os.environ.get("LEASE_TEST_HANG_AT", "-1"))
    poison = os.environ.get("LEASE_TEST_POISON", "")
    if poison and thread_id == poison:
        os._exit(3)  # the process dies on every attempt of this thread
    if n == hang_at:
        time.sleep(3600)  # the test kills us here
    if delay:
        time.sleep(delay)


def step(state: StepState, config: RunnableConfig) -> dict[str, Any]:
    n = state["n"] + 1
    _behaviour(str(config["configurable"]["thread_id"]), n)
    return {"n": n, "trace": [f"step{n}"]}


def slow(state: StepState) -> dict[str, Any]:
    """Runs LEASE_TEST_SLOW seconds, reporting progress with heartbeat()."""
    end = time.monotonic() + float(os.environ.get("LEASE_TEST_SLOW", "0"))
    while time.monotonic() < end:
        heartbeat(f"{end - time.monotonic():.1f}s left")
        time.sleep(0.2)
    return {"n": state["n"] + 1, "trace": ["slow"]}


def _route(state: StepState) -> str:
    return "step" if state["n"] < steps() else END


def builder(with_slow: bool = False) -> StateGraph[Any]:
    g: StateGraph[Any] = StateGraph(StepState)
    g.add_node("step", step)
    if with_slow:
        g.add_node("slow", slow)
        g.add_edge(START, "slow")
        g.add_edge("slow", END)
        return g
    g.add_edge(START, "step")
    g.add_conditional_edges("step", _route)
    return g


def expected_final() -> dict[str, Any]:
    return {"n": steps(), "trace": [f"step{i}" for i in range(1, steps() + 1)]}


# -- child processes ------------------------------------------------------------------


def spawn(mode: str, args: dict[str, Any], **env: str) -> Any:
    """Start ``python -m tests._lease_support mode args`` with extra environment."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.Popen(
        [sys.executable, "-m", "tests._lease_support", mode, json.dumps(args)],
        cwd=root,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
    )


def _run(args: dict[str, Any]) -> None:
    """Start runs of the 20-step graph for ``threads`` (concurrently) and wait."""
    from concurrent.futures import ThreadPoolExecutor

    lease = settings(args["lease"], args["beat"])
    threads = args["threads"]
    pool = min(len(threads), 10) if len(threads) > 1 else None
    with leasing_saver(args["backend"], args["where"], lease, pool_size=pool) as saver:
        host = os.environ.get("LEASE_TEST_OWNER_HOST")
        if host:  # look like a run on another host (its death cannot be seen from here)
            saver.run_leases.owner = f"{host}:{os.getpid()}:run:{os.urandom(4).hex()}"
        graph = builder().compile(checkpointer=saver)
        with ThreadPoolExecutor(max_workers=max(1, len(threads))) as pool:
            futures = [
                pool.submit(graph.invoke, {"n": 0, "trace": []}, {"configurable": {"thread_id": t}})
                for t in threads
            ]
            for f in futures:
                f.result()
    print(json.dumps({"done": threads}), flush=True)


def _recover(args: dict[str, Any]) -> None:
    """Run recovery passes until nothing runs or is orphaned (or ``until`` seconds)."""
    from langgraph_durable.interrupts._recovery import RecoveryWorker

    lease = settings(args["lease"], args["beat"])
    recovered: list[str] = []
    parked: list[str] = []
    with leasing_saver(args["backend"], args["where"], lease) as saver:
        graph = builder().compile(checkpointer=saver)
        worker = RecoveryWorker(
            graph, max_recoveries=args.get("max_recoveries", 3), batch=args.get("batch", 100)
        )
        _wait_for_the_start(args.get("start_file"))
        deadline = time.monotonic() + args["until"]
        while time.monotonic() < deadline:
            report = worker.run_once()
            recovered += report.recovered
            parked += [p.thread_id for p in report.parked]
            # publish progress as we go: a poison thread may kill us any moment
            print(
                json.dumps(
                    {"recovered": report.recovered, "parked": [p.thread_id for p in report.parked]}
                ),
                flush=True,
            )
            if not report.found:
                counts = saver.run_leases.store.lease_counts(now=worker.clock())
                if counts.running == 0 and counts.orphaned == 0:
                    return
                time.sleep(0.1)


def _wait_for_the_start(start_file: str | None) -> None:
    """With ``start_file``: say ready (``<start_file>.<pid>``), then wait for the file itself.

    Workers started together begin their first pass together whatever each one's start-up
    took (a loaded machine can take seconds to import), so they really share the work.
    """
    if not start_file:
        return
    with open(f"{start_file}.{os.getpid()}", "w"):
        pass
    deadline = time.monotonic() + 300
    while not os.path.exists(start_file):
        if time.monotonic() > deadline:
            raise SystemExit(f"no start signal at {start_file} within 300 s")
        time.sleep(0.02)


def _resume(args: dict[str, Any]) -> None:
    """Resume ``threads`` with ``invoke(None)`` (a fresh process after a crash) and exit."""
    lease = settings(args["lease"], args["beat"])
    with leasing_saver(args["backend"], args["where"], lease) as saver:
        graph = builder().compile(checkpointer=saver)
        for t in args["threads"]:
            graph.invoke(None, {"configurable": {"thread_id": t}})
    print(json.dumps({"done": args["threads"]}), flush=True)


if __name__ == "__main__":
    mode, raw = sys.argv[1], sys.argv[2]
    {"run": _run, "recover": _recover, "resume": _resume}[mode](json.loads(raw))


CLI_GRAPH = builder()
