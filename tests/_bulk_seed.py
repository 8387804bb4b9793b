"""Many stored checkpoints, fast: one real paused thread, cloned by the backend.

The thread is written by a real graph (4 checkpoints: input, three steps, then
an interrupt); clones differ only in thread id, which is all ``upgrade_all``
looks at. Also holds the migrations the bulk tests apply: a step that is not
idempotent (``applied`` counts how often it ran on a checkpoint; ``price``
would nest twice), so doing a checkpoint twice is visible.
"""

from __future__ import annotations

import operator
import os
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from langgraph_durable.migrations import StateMigrations


class State(TypedDict, total=False):
    price: int
    log: Annotated[list[str], operator.add]


def build(checkpointer: Any) -> Any:
    def intake(s: State) -> dict[str, Any]:
        return {"log": ["intake"]}

    def plan(s: State) -> dict[str, Any]:
        return {"price": s["price"] + 1, "log": ["plan"]}

    def review(s: State) -> dict[str, Any]:
        return {"log": [str(interrupt({"price": s["price"]}))]}

    g = StateGraph(State)
    for name, fn in (("intake", intake), ("plan", plan), ("review", review)):
        g.add_node(name, fn)
    g.add_edge(START, "intake")
    g.add_edge("intake", "plan")
    g.add_edge("plan", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=checkpointer)


v1 = StateMigrations(version=1)
m = StateMigrations(version=2)


# A worker started with DURABLE_TEST_CRASH_AFTER=N dies (no cleanup, like a
# kill -9) in the middle of a batch when the step runs for the N-th time.
_crash_after = int(os.environ.get("DURABLE_TEST_CRASH_AFTER", "0"))
_calls = 0


@m.upgrade(from_version=1)
def price_to_money(values: dict[str, Any]) -> dict[str, Any]:
    global _calls
    _calls += 1
    if _crash_after and _calls >= _crash_after:
        os._exit(3)
    if "price" in values:
        values["price"] = {"amount": values["price"], "currency": "USD"}
    values["applied"] = values.get("applied", 0) + 1
    return values


def seed_postgres(url: str, schema: str, threads: int) -> int:
    """Write one thread with a real graph, clone it to ``threads``; return checkpoints."""
    import psycopg
    from psycopg import sql

    from langgraph_durable.checkpointers.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url, schema=schema, migrations=v1) as saver:
        saver.setup()
        build(saver).invoke({"price": 10, "log": []}, {"configurable": {"thread_id": "t0"}})
    s = sql.Identifier(schema)
    with psycopg.connect(url, autocommit=True) as conn:
        for table, cols in (
            (
                "checkpoints",
                "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                "checkpoint, metadata, metadata_exact, schema_version",
            ),
            ("checkpoint_blobs", "checkpoint_ns, channel, version, type, blob"),
            (
                "checkpoint_writes",
                "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
            ),
        ):
            conn.execute(
                sql.SQL(
                    "INSERT INTO {s}.{t} (thread_id, {cols}) SELECT 't' || g, {cols} "
                    "FROM {s}.{t}, generate_series(1, %s) AS g WHERE thread_id = 't0'"
                ).format(s=s, t=sql.Identifier(table), cols=sql.SQL(cols)),
                (threads - 1,),
            )
        (n,) = conn.execute(sql.SQL("SELECT count(*) FROM {}.checkpoints").format(s)).fetchone()
    return int(n)


def check_each_upgraded_once(saver: Any) -> int:
    """Assert every stored checkpoint is on version 2 with the step applied once; count them."""
    n = 0
    for tup in saver.list(None):
        n += 1
        assert saver.schema_version(tup.config) == 2, tup.config
        values = tup.checkpoint["channel_values"]
        if "price" in values:
            assert values["applied"] == 1, (tup.config, values)
            assert isinstance(values["price"]["amount"], int), (tup.config, values)
        for _, channel, value in tup.pending_writes or ():
            if channel == "price":
                assert isinstance(value["amount"], int), (tup.config, value)
    return n


# The same upgrade, except that it refuses a price of 13 (the "bad" thread).
picky = StateMigrations(version=2)


@picky.upgrade(from_version=1)
def refuse_13(values: dict[str, Any]) -> dict[str, Any]:
    if values.get("price") == 13:
        raise ValueError("price 13 is not allowed")
    if "price" in values:
        values["price"] = {"amount": values["price"], "currency": "USD"}
    return values


def add_bad_thread(saver: Any) -> None:
    """One more v1 thread whose price (13) ``picky`` refuses."""
    build(saver).invoke({"price": 12, "log": []}, {"configurable": {"thread_id": "bad"}})


def seed_redis(url: str, prefix: str, threads: int) -> int:
    """As :func:`seed_postgres`, on Redis: clones made with ``copy_thread``."""
    from concurrent.futures import ThreadPoolExecutor

    from langgraph_durable.checkpointers.redis import RedisSaver

    with RedisSaver.from_conn_string(url, prefix=prefix, migrations=v1) as saver:
        saver.setup()
        build(saver).invoke({"price": 10, "log": []}, {"configurable": {"thread_id": "t0"}})
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: saver.copy_thread("t0", f"t{i}"), range(1, threads)))
    return 4 * threads
