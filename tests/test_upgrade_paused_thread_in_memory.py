"""The upgrade logic on real graphs: a thread paused under v1 resumes under v2."""

from __future__ import annotations

import pytest
from langgraph.types import Command

from langgraph_durable.migrations import MigrationError, SchemaVersionError, StateMigrations
from tests._migrating_memory import MigratingMemorySaver
from tests._seed_graphs import build_v1, build_v2, seed_migrations, v1_migrations

CFG = {"configurable": {"thread_id": "t1"}}


def _pause_v1(parallel: bool = False) -> MigratingMemorySaver:
    saver = MigratingMemorySaver(migrations=v1_migrations())
    out = build_v1(saver, parallel=parallel).invoke({"price": 10, "log": []}, CFG)
    assert "__interrupt__" in out
    return saver


def test_paused_thread_resumes_at_renamed_node_with_upgraded_state() -> None:
    old = _pause_v1()
    saver = MigratingMemorySaver(migrations=seed_migrations(), share=old)
    app = build_v2(saver)
    snap = app.get_state(CFG)
    assert snap.next == ("human_review",)
    assert snap.values["price"] == {"amount": 11, "currency": "USD"}
    assert snap.metadata["schema_version"] == 2
    (intr,) = snap.interrupts
    assert intr.value == {"ask": "approve?", "price": 11}
    # the pending interrupt now belongs to the human_review task
    assert snap.tasks[0].name == "human_review"
    assert snap.tasks[0].interrupts == (intr,)

    out = app.invoke(Command(resume=True), CFG)
    assert out["approved"] is True
    assert out["price"] == {"amount": 11, "currency": "USD"}
    assert out["log"] == ["plan", "human_review", "done v2 11 USD"]
    latest = saver.get_tuple(CFG)
    assert latest.metadata["schema_version"] == 2
    # the raw stored metadata of the new checkpoint says 2 as well
    raw = super(MigratingMemorySaver, saver).get_tuple(CFG)
    assert raw.metadata["schema_version"] == 2
    assert raw.checkpoint["channel_values"]["price"] == {"amount": 11, "currency": "USD"}


def test_resume_addressed_by_interrupt_id_reaches_renamed_node() -> None:
    old = _pause_v1()
    saver = MigratingMemorySaver(migrations=seed_migrations(), share=old)
    app = build_v2(saver)
    (intr,) = app.get_state(CFG).interrupts
    out = app.invoke(Command(resume={intr.id: False}), CFG)
    assert out["approved"] is False
    assert out["log"][-1] == "done v2 11 USD"


def test_pending_write_of_parallel_task_is_upgraded_with_the_state() -> None:
    old = _pause_v1(parallel=True)
    raw = old.get_tuple(CFG)
    # pricer finished in the step where review was interrupted: its write is pending
    assert ("price", 22) in [(c, v) for _, c, v in raw.pending_writes]
    saver = MigratingMemorySaver(migrations=seed_migrations(), share=old)
    tup = saver.get_tuple(CFG)
    prices = [v for _, c, v in tup.pending_writes if c == "price"]
    assert prices == [{"amount": 22, "currency": "USD"}]
    out = build_v2(saver, parallel=True).invoke(Command(resume=True), CFG)
    assert out["price"] == {"amount": 22, "currency": "USD"}
    assert out["log"][-1] == "done v2 22 USD"


def test_without_the_step_the_read_fails_loudly_and_storage_is_unchanged() -> None:
    old = _pause_v1()
    before = old.get_tuple(CFG)
    saver = MigratingMemorySaver(migrations=seed_migrations(with_step=False), share=old)
    app = build_v2(saver)
    with pytest.raises(SchemaVersionError) as info:
        app.invoke(Command(resume=True), CFG)
    err = info.value
    assert (err.thread_id, err.stored_version, err.code_version) == ("t1", 1, 2)
    assert "no upgrade path" in str(err)
    after = old.get_tuple(CFG)
    assert after.checkpoint == before.checkpoint
    assert after.metadata == before.metadata


def test_checkpoint_newer_than_the_code_is_refused() -> None:
    old = _pause_v1()
    rolled_back = MigratingMemorySaver(migrations=StateMigrations(version=0), share=old)
    with pytest.raises(SchemaVersionError, match="newer than the code") as info:
        rolled_back.get_tuple(CFG)
    assert (info.value.stored_version, info.value.code_version) == (1, 0)
    no_migrations = MigratingMemorySaver(share=old)
    with pytest.raises(SchemaVersionError):
        list(no_migrations.list(CFG))


def test_failing_step_raises_migration_error_naming_step_and_thread() -> None:
    old = _pause_v1()
    m = StateMigrations(version=2)

    @m.upgrade(from_version=1)
    def broken(values: dict) -> dict:
        raise KeyError("amount")

    saver = MigratingMemorySaver(migrations=m, share=old)
    with pytest.raises(MigrationError) as info:
        saver.get_tuple(CFG)
    assert info.value.step.endswith("<locals>.broken (1->2)")
    assert info.value.thread_id == "t1"
    assert isinstance(info.value.__cause__, KeyError)


def test_step_result_failing_the_state_schema_is_a_migration_error() -> None:
    from pydantic import BaseModel

    class Money(BaseModel):
        amount: int
        currency: str

    class State(BaseModel):
        price: Money
        log: list[str] = []

    old = _pause_v1()
    m = StateMigrations(version=2, state_schema=State)

    @m.upgrade(from_version=1)
    def forgot_currency(values: dict) -> dict:
        values["price"] = {"amount": values["price"]}
        return values

    saver = MigratingMemorySaver(migrations=m, share=old)
    with pytest.raises(MigrationError, match="fails validation") as info:
        saver.get_tuple(CFG)
    assert "forgot_currency (1->2)" in info.value.step
    assert info.value.thread_id == "t1"


def test_chained_steps_upgrade_version_1_to_3() -> None:
    old = _pause_v1()
    m = StateMigrations(version=3)

    @m.upgrade(from_version=1)
    def to_money(values: dict) -> dict:
        values["price"] = {"amount": values["price"], "currency": "usd"}
        return values

    @m.upgrade(from_version=2)
    def upper_currency(values: dict) -> dict:
        values["price"]["currency"] = values["price"]["currency"].upper()
        return values

    m.rename_node(from_version=1, old="review", new="check")
    m.rename_node(from_version=2, old="check", new="human_review")
    saver = MigratingMemorySaver(migrations=m, share=old)
    app = build_v2(saver)
    snap = app.get_state(CFG)
    assert snap.values["price"] == {"amount": 11, "currency": "USD"}
    assert snap.next == ("human_review",)
    (intr,) = snap.interrupts
    out = app.invoke(Command(resume={intr.id: True}), CFG)
    assert out["log"][-1] == "done v2 11 USD"
    assert saver.get_tuple(CFG).metadata["schema_version"] == 3
