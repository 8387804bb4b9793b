"""Our savers store activity results (PG table, Redis hash) and delete them with the thread."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
import redis
from langgraph.graph import START, StateGraph
from psycopg import sql
from typing_extensions import TypedDict

from langgraph_durable.checkpointers import ActivityStore
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver
from langgraph_durable.interrupts import activity
from tests._parts import part_of
from tests._saga_savers import NATIVE, open_saver, saver_area

pytestmark = pytest.mark.timeout(120)


class State(TypedDict, total=False):
    receipt: dict[str, Any]


def _stored_keys(kind: str, url: str, area: str, thread: str) -> list[str]:
    if kind == "postgres":
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                sql.SQL("SELECT key FROM {}.durable_activities WHERE thread_id = %s").format(
                    sql.Identifier(area)
                ),
                (thread,),
            ).fetchall()
        return [r[0] for r in rows]
    client = redis.Redis.from_url(url)
    try:
        return [k.decode() for k in client.hkeys(f"{area}:{{t:{thread}}}:act")]
    finally:
        client.close()


@pytest.mark.parametrize("kind", NATIVE)
def test_results_live_in_the_saver_and_go_with_the_thread(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = saver_area(kind, request)
    calls: list[str] = []

    def charge(amount: int, *, idempotency_key: str) -> dict[str, Any]:
        calls.append(idempotency_key)
        return {"id": "ch_1", "amount": amount}

    pay = activity(charge, name="pay")

    def node(state: State) -> dict[str, Any]:
        return {"receipt": pay(12)}

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    with open_saver(kind, url, area) as saver:
        assert isinstance(saver, ActivityStore) or hasattr(
            part_of(saver, "activities"), "put_activity"
        )
        graph = builder.compile(checkpointer=saver)
        graph.invoke({}, {"configurable": {"thread_id": "t-1"}})
        graph.invoke({}, {"configurable": {"thread_id": "t-2"}})

        (key,) = _stored_keys(kind, url, area, "t-1")
        assert key == calls[0]
        record = part_of(saver, "activities").get_activity(thread_id="t-1", key=key)
        assert record is not None and record.value == {"id": "ch_1", "amount": 12}
        # first writer wins: a second put returns the first value
        again = part_of(saver, "activities").put_activity(
            thread_id="t-1", key=key, value={"id": "other"}
        )
        assert again.value == {"id": "ch_1", "amount": 12}
        assert part_of(saver, "activities").get_activity(thread_id="t-1", key="nope") is None

        saver.delete_thread("t-1")
        assert _stored_keys(kind, url, area, "t-1") == []
        assert part_of(saver, "activities").get_activity(thread_id="t-1", key=key) is None
        assert len(_stored_keys(kind, url, area, "t-2")) == 1


@pytest.mark.parametrize("kind", NATIVE)
def test_async_savers_store_and_race_first_writer_wins(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url, area = saver_area(kind, request)

    async def main() -> None:
        if kind == "postgres":
            ctx: Any = AsyncPostgresSaver.from_conn_string(url, schema=area)
        else:
            ctx = AsyncRedisSaver.from_conn_string(url, prefix=area)
        async with ctx as saver:
            await saver.setup()
            results = await asyncio.gather(
                *(
                    part_of(saver, "activities").aput_activity(
                        thread_id="t", key="k", value={"n": i}
                    )
                    for i in range(8)
                )
            )
            assert len({r.value["n"] for r in results}) == 1
            stored = await part_of(saver, "activities").aget_activity(thread_id="t", key="k")
            assert stored is not None and stored.value == results[0].value
            await saver.adelete_thread("t")
            assert await part_of(saver, "activities").aget_activity(thread_id="t", key="k") is None

    asyncio.run(main())
