"""Threads written by langgraph-checkpoint-postgres are version 0; a 0 -> 1 step upgrades them."""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver as OfficialSaver
from langgraph.types import Command

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.migrations import StateMigrations, upgrade_all
from tests._parts import part_of
from tests._seed_graphs import build_v1, build_v2

CFG = {"configurable": {"thread_id": "legacy"}}

# official_setup_note: the official saver's setup() runs CREATE INDEX CONCURRENTLY,
# which waits for every older transaction in the same database; a database of the
# test's own keeps it from waiting on whatever else runs on the shared server.


def _money_v1() -> StateMigrations:
    m = StateMigrations(version=1)

    @m.upgrade(from_version=0)
    def price_to_money(values: dict[str, Any]) -> dict[str, Any]:
        values["price"] = {"amount": values["price"], "currency": "USD"}
        return values

    m.rename_node(from_version=0, old="review", new="human_review")
    return m


def _official_pauses(url: str, schema: str, thread: str = "legacy") -> None:
    with psycopg.connect(
        url, autocommit=True, prepare_threshold=0, options=f"-c search_path={schema}"
    ) as conn:
        official = OfficialSaver(conn)
        official.setup()
        out = build_v1(official).invoke(
            {"price": 10, "log": []}, {"configurable": {"thread_id": thread}}
        )
        assert "__interrupt__" in out


def test_official_thread_resumes_through_a_0_to_1_step(pg_database: str) -> None:
    url, schema = pg_database, "public"  # own database: see official_setup_note
    _official_pauses(url, schema)
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=_money_v1()) as saver:
        saver.setup()  # adopts the official tables in place
        status = {s.schema_version: s for s in part_of(saver, "migration_store").migration_status()}
        assert status[0].threads == 1 and status[0].paused_threads == 1
        app = build_v2(saver)
        snap = app.get_state(CFG)
        assert snap.values["price"] == {"amount": 11, "currency": "USD"}
        assert snap.next == ("human_review",)
        out = app.invoke(Command(resume=True), CFG)
        assert out["log"] == ["plan", "human_review", "done v2 11 USD"]
        assert saver.schema_version(CFG) == 1
        assert "schema_version" not in saver.get_tuple(CFG).metadata


def test_upgrade_all_rewrites_official_threads_in_place(pg_database: str) -> None:
    url, schema = pg_database, "public"  # own database: see official_setup_note
    for i in range(3):
        _official_pauses(url, schema, f"legacy-{i}")
    m = _money_v1()
    with PostgresSaver.from_conn_string(url, schema=schema, migrations=m) as saver:
        saver.setup()
        result = upgrade_all(saver, m)
        assert (result.upgraded, result.failed, result.by_version) == (3, 0, {0: 3})
        again = upgrade_all(saver, m)
        assert again.upgraded == 0  # idempotent
        status = {s.schema_version: s for s in part_of(saver, "migration_store").migration_status()}
        assert status[1].threads == 3 and status[1].paused_threads == 3
        app = build_v2(saver)
        for i in range(3):
            cfg = {"configurable": {"thread_id": f"legacy-{i}"}}
            (intr,) = app.get_state(cfg).interrupts
            out = app.invoke(Command(resume={intr.id: True}), cfg)
            assert out["log"][-1] == "done v2 11 USD"
    # the official saver still reads what we rewrote (additive columns only)
    with psycopg.connect(
        url, autocommit=True, prepare_threshold=0, options=f"-c search_path={schema}"
    ) as conn:
        tup = OfficialSaver(conn).get_tuple({"configurable": {"thread_id": "legacy-0"}})
        assert tup.checkpoint["channel_values"]["price"] == {"amount": 11, "currency": "USD"}
