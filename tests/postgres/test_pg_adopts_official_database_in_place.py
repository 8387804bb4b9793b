"""A database langgraph-checkpoint-postgres set up is adopted in place, and back.

Uses the real langgraph-checkpoint-postgres package: it creates the tables and
writes threads (one finished, one paused at an interrupt); our ``setup()``
upgrades the layout additively; our saver reads and resumes those threads; then
the official saver reads (and resumes) what ours wrote, so a team can roll back.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver as OfficialSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.migrations.postgres import latest_version


class State(TypedDict):
    items: Annotated[list[str], operator.add]
    answer: str
    count: int


def _work(state: State) -> dict[str, Any]:
    return {"items": ["worked"], "count": state.get("count", 0) + 1}


def _ask(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "ok?"})
    return {"items": [f"answer:{answer}"], "answer": answer}


def _graph(saver: Any) -> Any:
    b = StateGraph(State)
    b.add_node("work", _work)
    b.add_node("ask", _ask)
    b.add_edge(START, "work")
    b.add_edge("work", "ask")
    b.add_edge("ask", END)
    return b.compile(checkpointer=saver)


def _cfg(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        }


def test_official_threads_resume_through_ours_and_back(pg_database) -> None:
    url = pg_database
    with OfficialSaver.from_conn_string(url) as official:
        official.setup()
        g = _graph(official)
        g.invoke({"items": ["a"], "answer": "", "count": 0}, _cfg("done"))
        g.invoke(Command(resume="first"), _cfg("done"))
        g.invoke({"items": ["p"], "answer": "", "count": 0}, _cfg("paused"))
        done_values = g.get_state(_cfg("done")).values
        done_history = [s.config for s in g.get_state_history(_cfg("done"))]
    before = _counts(url)

    with PostgresSaver.from_conn_string(url) as ours:
        ours.setup()
        assert _counts(url) == before  # additive: no row rewritten or dropped
        with psycopg.connect(url) as conn:
            layout = conn.execute("SELECT max(version) FROM langgraph_durable_layout").fetchone()
            assert layout[0] == latest_version()
        g = _graph(ours)
        assert g.get_state(_cfg("done")).values == done_values
        assert [s.config for s in g.get_state_history(_cfg("done"))] == done_history
        paused = g.get_state(_cfg("paused"))
        assert paused.next == ("ask",)
        assert paused.interrupts[0].value == {"question": "ok?"}
        out = g.invoke(Command(resume="yes"), _cfg("paused"))
        assert out == {"items": ["p", "worked", "answer:yes"], "answer": "yes", "count": 1}
        # a thread written by us, left paused
        g.invoke({"items": ["n"], "answer": "", "count": 5}, _cfg("ours"))

    # roll back: the official saver's setup() is a no-op, it reads and resumes our threads
    with OfficialSaver.from_conn_string(url) as official:
        official.setup()
        g = _graph(official)
        assert g.get_state(_cfg("paused")).values == out
        mine = g.get_state(_cfg("ours"))
        assert mine.next == ("ask",)
        assert mine.values == {"items": ["n", "worked"], "answer": "", "count": 6}
        final = g.invoke(Command(resume="back"), _cfg("ours"))
        assert final == {"items": ["n", "worked", "answer:back"], "answer": "back", "count": 6}
        assert len(list(g.get_state_history(_cfg("ours")))) >= 4
