"""An outbox event is stored in the same atomic unit as the fact it announces, or not at all.

A request that was never stored, a refused or losing decision, and an
interrupt that is no approval add nothing; a ``put_writes`` that fails stores
neither its wait nor its event (and an event that cannot be stored fails the
wait with it).
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from psycopg import sql

from langgraph_durable.interrupts import AlreadyDecided, NotAuthorized, approve, pending_approvals
from tests._approval_graphs import review_graph
from tests._approval_savers import open_sync, saver_url
from tests._backends import BACKENDS
from tests._parts import part_of


@pytest.fixture(params=BACKENDS)
def area(request: pytest.FixtureRequest) -> Any:
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        yield request.param, saver, url, options


def kinds(saver: Any) -> list[tuple[str, str]]:
    from datetime import datetime, timedelta, timezone

    events = part_of(saver, "outbox").claim_notifications(
        now=datetime.now(timezone.utc) + timedelta(seconds=1),
        owner="test",
        lease=timedelta(minutes=1),
        limit=100,
    )
    return sorted((e.thread_id, e.kind) for e in events)


def test_refused_and_losing_decisions_and_plain_interrupts_add_nothing(area: Any) -> None:
    _, saver, _, _ = area
    graph = review_graph(saver, open_to_all=False)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"amount": 1}, config)
    with pytest.raises(NotAuthorized):
        approve(graph, config, by="eve")
    approve(graph, config, by="olga", roles=["ops"])
    with pytest.raises(AlreadyDecided):
        approve(graph, config, by="oscar", roles=["ops"])

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        return {"answer": interrupt({"question": "no deadline convention here"})}

    builder = StateGraph(dict)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    builder.compile(checkpointer=saver).invoke({"x": 1}, {"configurable": {"thread_id": "plain"}})
    assert kinds(saver) == [("t", "decided"), ("t", "requested")]


def _pg(url: str, schema: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(statement).format(
                s=sql.Identifier(schema), fn=sql.Identifier(schema, "refuse_interrupts")
            )
        )


def _fail_storing(backend: str, saver: Any, url: str, options: dict[str, Any], what: str) -> None:
    """Make the next wait (``what="wait"``) or its event (``"event"``) fail to store."""
    if backend == "postgres":
        schema = options["schema"]
        if what == "wait":
            _pg(
                url,
                schema,
                "CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN RAISE EXCEPTION 'refused by the test'; END$$",
            )
            _pg(
                url,
                schema,
                "CREATE TRIGGER refuse AFTER INSERT ON {s}.checkpoint_writes FOR EACH ROW "
                "WHEN (NEW.channel = '__interrupt__') EXECUTE FUNCTION {fn}()",
            )
        else:
            _pg(url, schema, "ALTER TABLE {s}.durable_outbox ADD CHECK (kind <> 'requested')")
    else:
        import redis

        # an outbox of the wrong type: the script fails at the event, its first write
        with redis.Redis.from_url(url) as client:
            client.set(saver.core.keys.outbox("t"), "not a hash")


# Redis: the script writes the event before the wait, so a failing event write is the case
@pytest.mark.parametrize(
    ("area", "what"),
    [("postgres", "wait"), ("postgres", "event"), ("redis", "event")],
    indirect=["area"],
)
def test_a_failed_put_writes_stores_neither_wait_nor_event(area: Any, what: str) -> None:
    backend, saver, url, options = area
    _fail_storing(backend, saver, url, options, what)
    graph = review_graph(saver)
    with pytest.raises(Exception, match=r"refused by the test|check constraint|WRONGTYPE"):
        graph.invoke({"amount": 1}, {"configurable": {"thread_id": "t"}})
    assert pending_approvals(saver) == []
    if backend == "redis":
        import redis

        with redis.Redis.from_url(url) as client:
            client.delete(saver.core.keys.outbox("t"))
    # the outbox shard entry written ahead of the script is dropped once found empty
    assert kinds(saver) == []
    assert part_of(saver, "outbox").notification_counts().pending == 0
