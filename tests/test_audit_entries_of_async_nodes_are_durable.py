"""A sync helper in an async node audits its request durably, on the async savers.

``request_approval`` is sync; called inside an ``async def`` node it runs on the
async saver's event loop, where it can neither block on the saver nor await it.
Its "request" entry must still be stored no later than the interrupt it
audits: the entry of a run that ``ainvoke`` returned from is never lost when
the event loop ends right after, and an interrupt is never stored without it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, TypedDict

import psycopg
import pytest
import redis
from langgraph.graph import END, START, StateGraph
from psycopg import sql

from langgraph_durable.checkpointers import CheckpointerError
from langgraph_durable.interrupts import aaudit_log, apending_approvals, request_approval

REQUEST = {"action": "refund", "amount": 5}


class State(TypedDict, total=False):
    approved: bool


def async_review_graph(saver: Any) -> Any:
    async def review(state: State) -> State:
        decision = request_approval(REQUEST, approvers=["ops"])  # the sync helper
        return {"approved": decision.approved}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_postgres_entry_outlives_an_event_loop_that_ends_with_the_run(
    pg_schema: tuple[str, str],
) -> None:
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

    url, schema = pg_schema

    async def run_once() -> list[str]:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema, pool_size=4) as saver:
            await saver.setup()
            await async_review_graph(saver).ainvoke({}, cfg("t1"))
            return [p.thread_id for p in await apending_approvals(saver)]

    async def read_back() -> list[Any]:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
            return await aaudit_log(saver, thread_id="t1")

    async def set_up() -> None:
        async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
            await saver.setup()

    asyncio.run(set_up())
    # Appends to the audit table wait for a second: the run itself does not
    # touch the table, so it returns (and its event loop ends) meanwhile.
    with psycopg.connect(url) as holder:
        holder.execute(
            sql.SQL("LOCK TABLE {}.durable_audit IN SHARE MODE").format(sql.Identifier(schema))
        )
        release = threading.Timer(1.0, holder.commit)
        release.start()
        try:
            pending = asyncio.run(run_once())
        finally:
            release.join()
    assert pending == ["t1"]
    entries = asyncio.run(read_back())
    assert [(e.action, e.outcome) for e in entries] == [("request", "waiting")]
    assert entries[0].reason is not None and "ops" in entries[0].reason


async def test_redis_interrupt_is_not_stored_without_its_entry(
    redis_prefix: tuple[str, str],
) -> None:
    from langgraph_durable.checkpointers.redis import AsyncRedisSaver

    url, prefix = redis_prefix
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()
        stream = saver.core.keys.audit("t1")[0]
        client = redis.Redis.from_url(url)
        try:
            client.set(stream, "not a stream")  # every append to the audit fails
            graph = async_review_graph(saver)
            with pytest.raises(CheckpointerError):
                await graph.ainvoke({}, cfg("t1"))
            assert await apending_approvals(saver) == []  # no interrupt without its entry
            client.delete(stream)
        finally:
            client.close()
        await graph.ainvoke(None, cfg("t1"))  # the run goes on where it failed
        (pending,) = await apending_approvals(saver)
        entries = await aaudit_log(saver, thread_id="t1")
        # the failed attempt's request is audited too (it was raised, then its
        # run failed); the interrupt now waiting has its own entry
        assert {(e.action, e.outcome) for e in entries} == {("request", "waiting")}
        assert pending.approval_id in {e.approval_id for e in entries}
