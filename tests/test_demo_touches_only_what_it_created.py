"""`langgraph-durable demo` on an application's database touches nothing but its own area.

The application has a real pending approval (deadline in ten minutes, reject on
timeout) in the very schema or prefix the demo's ``--url`` names. The demo's
worker sweeps with a clock 21 minutes ahead (45 with ``--timeout-demo``): it
must neither decide, claim nor audit the application's approval, nor write
to its thread; and the schema or prefix the demo made is gone afterwards.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, TypedDict

import psycopg
import pytest
import redis
from langgraph.graph import END, START, StateGraph

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import audit_log, pending_approvals, request_approval
from langgraph_durable.interrupts import thread_state as state_of
from tests._parts import part_of
from tests._servers import url_with

APP_THREAD = "app-payout-7"


class PayoutState(TypedDict, total=False):
    amount: int
    approved: bool


def _review(state: PayoutState) -> dict[str, Any]:
    decision = request_approval(
        {"action": "payout", "amount": state["amount"]},
        timeout=timedelta(minutes=10),
        on_timeout="reject",
        approvers=["ops"],
    )
    return {"approved": decision.approved}


def _app_graph(saver: Any) -> Any:
    builder = StateGraph(PayoutState)
    builder.add_node("review", _review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


@contextmanager
def _app_saver(backend: str, url: str, namespace: str | None) -> Iterator[Any]:
    if backend == "postgres":
        options = {} if namespace is None else {"schema": namespace}
        with PostgresSaver.from_conn_string(url, **options) as saver:
            yield saver
    else:
        with RedisSaver.from_conn_string(url, prefix=namespace) as saver:
            yield saver


def _snapshot(saver: Any) -> dict[str, Any]:
    """Everything the demo could have changed about the application's thread."""
    config = {"configurable": {"thread_id": APP_THREAD}}
    waits = part_of(saver, "waits").list_waits(thread_id=APP_THREAD)
    state = state_of(saver, APP_THREAD)
    return {
        "checkpoints": [t.config["configurable"]["checkpoint_id"] for t in saver.list(config)],
        "waits": [(w.interrupt_id, w.info.deadline, w.claimed_by) for w in waits],
        "decisions": part_of(saver, "decisions").get_decisions(
            thread_id=APP_THREAD, keys=[w.interrupt_id for w in waits]
        ),
        "audit": [a.model_dump() for a in audit_log(saver, thread_id=APP_THREAD)],
        "lease": part_of(saver, "leases").get_lease(thread_id=APP_THREAD),
        "state": (state.state, state.owner),
        "inbox": [i.thread_id for i in pending_approvals(saver, approver="ops")],
    }


def _area(kind: str, request: pytest.FixtureRequest) -> tuple[str, str, str | None, str]:
    """``(backend, driver url, app namespace, demo --url)``."""
    if kind == "postgres-public":  # the database's default schema, as most apps have it
        url = request.getfixturevalue("pg_database")
        return "postgres", url, None, url
    if kind == "postgres-schema":  # the URL names the app's schema
        url, schema = request.getfixturevalue("pg_schema")
        return "postgres", url, schema, url_with(url, "schema", schema)
    url, prefix = request.getfixturevalue("redis_prefix")
    return "redis", url, prefix, url_with(url, "prefix", prefix)


def _demo_area_is_gone(backend: str, url: str, name: str) -> bool:
    if backend == "postgres":
        with psycopg.connect(url, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,))
            return found.fetchone() is None
    client = redis.Redis.from_url(url)
    try:
        return not any(
            True for pattern in (f"{name}:*", f"{{{name}:*") for _ in client.scan_iter(pattern)
        )
    finally:
        client.close()


@pytest.mark.parametrize(
    ("kind", "timeout_demo"),
    [("postgres-public", False), ("postgres-schema", True), ("redis", False), ("redis", True)],
)
def test_the_apps_pending_approval_is_untouched(
    kind: str, timeout_demo: bool, request: pytest.FixtureRequest
) -> None:
    backend, url, namespace, demo_url = _area(kind, request)
    with _app_saver(backend, url, namespace) as saver:
        saver.setup()
        graph = _app_graph(saver)
        graph.invoke({"amount": 900}, {"configurable": {"thread_id": APP_THREAD}})
        before = _snapshot(saver)
    assert before["inbox"] == [APP_THREAD] and before["decisions"] == {}

    extra = ["--timeout-demo"] if timeout_demo else []
    cli = [sys.executable, "-m", "langgraph_durable.interrupts.cli"]
    done = subprocess.run(
        [*cli, "demo", "--url", demo_url, *extra],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing was lost." in done.stdout
    resolved = "the sweeper resolved 1 approval(s)" if timeout_demo else "resumed 1 run(s)"
    assert resolved in done.stdout  # the demo's own approval, and only it

    with _app_saver(backend, url, namespace) as saver:
        after = _snapshot(saver)
    assert after == before

    found = re.search(r"of the demo's own: (\S+) \(removed at the end\)", done.stdout)
    assert found, done.stdout
    assert found.group(1) != namespace
    assert _demo_area_is_gone(backend, url, found.group(1))
