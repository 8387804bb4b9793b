"""Edge cases of the pure upgrade, on checkpoints written by real graphs (in-memory saver)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt

from langgraph_durable.migrations import (
    MigrationError,
    StateMigrations,
    is_migrated_version,
    upgrade_checkpoint,
    versions_to_store,
)
from tests._migrating_memory import MigratingMemorySaver

CFG = {"configurable": {"thread_id": "t"}}


class Fan(TypedDict, total=False):
    items: Annotated[list[Any], operator.add]
    done: bool


def _fan_graph(saver: Any, worker: str) -> Any:
    """Sends one ``worker`` task per item; ``gate`` pauses before fanning out."""

    def gate(s: Fan) -> dict[str, Any]:
        interrupt("go?")
        return {}

    def route(s: Fan) -> list[Send]:
        return [Send(worker, {"n": n}) for n in (1, 2, 3)]

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        return {"items": [arg["n"] * 10]}

    g = StateGraph(Fan)
    g.add_node("gate", gate)
    g.add_node(worker, work)
    g.add_edge(START, "gate")
    g.add_conditional_edges("gate", route, [worker])
    g.add_edge(worker, END)
    return g.compile(checkpointer=saver)


def test_renamed_send_target_runs_under_its_new_name() -> None:
    # pause *after* the Sends were emitted: they are pending writes to __pregel_tasks
    v1 = MigratingMemorySaver(migrations=StateMigrations(version=1))

    g = StateGraph(Fan)
    g.add_node("prep", lambda s: {"items": [0]})
    g.add_node("old_worker", lambda a: {"items": [a["n"] * 10]})
    g.add_node("hold", lambda s: {"done": interrupt("hold")})
    g.add_edge(START, "prep")
    g.add_conditional_edges(
        "prep", lambda s: [Send("old_worker", {"n": 1}), Send("hold", {})], ["old_worker", "hold"]
    )
    g.add_edge("old_worker", END)
    g.add_edge("hold", END)
    g.compile(checkpointer=v1).invoke({"items": []}, CFG)
    raw = v1.get_tuple(CFG)
    sends = raw.checkpoint["channel_values"]["__pregel_tasks"]
    assert [s.node for s in sends] == ["old_worker", "hold"]
    # old_worker finished before hold paused: its write is pending under its task id
    assert ("items", [10]) in [(c, v) for _, c, v in raw.pending_writes]

    m = StateMigrations(version=2)
    m.rename_node(from_version=1, old="old_worker", new="new_worker")
    v2 = MigratingMemorySaver(migrations=m, share=v1)
    tup = v2.get_tuple(CFG)
    sends = tup.checkpoint["channel_values"]["__pregel_tasks"]
    assert [s.node for s in sends] == ["new_worker", "hold"]

    g2 = StateGraph(Fan)
    g2.add_node("prep", lambda s: {"items": [0]})
    g2.add_node("new_worker", lambda a: {"items": [a["n"] * 100]})
    g2.add_node("hold", lambda s: {"done": interrupt("hold")})
    g2.add_edge(START, "prep")
    g2.add_conditional_edges(
        "prep", lambda s: [Send("new_worker", {"n": 1}), Send("hold", {})], ["new_worker", "hold"]
    )
    g2.add_edge("new_worker", END)
    g2.add_edge("hold", END)
    out = g2.compile(checkpointer=v2).invoke(Command(resume=True), CFG)
    assert out["done"] is True
    # the finished task's write is kept under the renamed task: it does not run again
    assert out["items"] == [0, 10]


def test_renaming_onto_an_existing_node_is_a_migration_error() -> None:
    v1 = MigratingMemorySaver(migrations=StateMigrations(version=1))
    _fan_graph(v1, "worker").invoke({"items": []}, CFG)
    m2 = StateMigrations(version=2)
    m2.rename_node(from_version=1, old="gate", new="start_alias")
    raw = v1.get_tuple(CFG)
    raw.checkpoint["versions_seen"]["start_alias"] = {}  # as if the node existed
    assert "branch:to:gate" in raw.checkpoint["channel_versions"]
    with pytest.raises(MigrationError, match="already exists"):
        upgrade_checkpoint(raw, 1, m2.validate())


def test_step_returning_none_or_internal_keys_is_refused() -> None:
    v1 = MigratingMemorySaver(migrations=StateMigrations(version=1))
    _fan_graph(v1, "worker").invoke({"items": [5]}, CFG)
    raw = v1.get_tuple(CFG)
    for bad, match in (
        (lambda v: None, "forget `return values`"),
        (lambda v: {**v, "branch:to:x": 1}, "not state keys"),
    ):
        m = StateMigrations(version=2)
        m.upgrade(from_version=1)(bad)
        with pytest.raises(MigrationError, match=match):
            upgrade_checkpoint(raw, 1, m)


def test_failed_upgrade_leaves_the_input_tuple_untouched() -> None:
    v1 = MigratingMemorySaver(migrations=StateMigrations(version=1))
    _fan_graph(v1, "worker").invoke({"items": [5]}, CFG)
    raw = v1.get_tuple(CFG)
    snapshot = (repr(raw.checkpoint), repr(raw.metadata), repr(raw.pending_writes))
    m = StateMigrations(version=3)

    @m.upgrade(from_version=1)
    def mutate(values: dict) -> dict:
        values["items"].append("changed in place")
        return values

    @m.upgrade(from_version=2)
    def fail(values: dict) -> dict:
        raise RuntimeError("boom")

    with pytest.raises(MigrationError, match=r"fail \(2->3\)"):
        upgrade_checkpoint(raw, 1, m)
    assert (repr(raw.checkpoint), repr(raw.metadata), repr(raw.pending_writes)) == snapshot


def test_changed_channels_get_migrated_versions_that_puts_store() -> None:
    v1 = MigratingMemorySaver(migrations=StateMigrations(version=1))
    _fan_graph(v1, "worker").invoke({"items": [5]}, CFG)
    raw = v1.get_tuple(CFG)
    m = StateMigrations(version=2)

    @m.upgrade(from_version=1)
    def add_flag(values: dict) -> dict:
        values["done"] = False  # a new key; "items" unchanged
        return values

    up = upgrade_checkpoint(raw, 1, m)
    assert set(up.new_versions) == {"done"}
    versions = up.tuple.checkpoint["channel_versions"]
    assert is_migrated_version(versions["done"])
    assert versions["items"] == raw.checkpoint["channel_versions"]["items"]
    assert versions_to_store(up.tuple.checkpoint, {}) == {"done": versions["done"]}
    assert up.tuple.metadata["schema_version"] == 2
