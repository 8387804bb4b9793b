"""A badly registered chain fails when the app starts, not when a thread resumes."""

from __future__ import annotations

import pytest

from langgraph_durable.migrations import MigrationChainError, MigrationsError, StateMigrations
from tests._migrating_memory import MigratingMemorySaver


def _noop(values: dict) -> dict:
    return values


def test_gap_in_chain_fails_when_saver_is_constructed() -> None:
    m = StateMigrations(version=3)
    m.upgrade(from_version=0)(_noop)
    m.upgrade(from_version=2)(_noop)
    with pytest.raises(MigrationChainError, match=r"no step from version\(s\) \[1\]"):
        MigratingMemorySaver(migrations=m)


def test_contiguous_chain_validates_and_then_freezes() -> None:
    m = StateMigrations(version=3)
    m.upgrade(from_version=1)(_noop)
    m.rename_node(from_version=2, old="a", new="b")
    assert m.validate() is m
    assert m.steps_from(1) is not None and len(m.steps_from(1)) == 2
    assert m.steps_from(0) is None  # older than the oldest step: no path
    assert m.steps_from(4) is None  # newer than the code
    with pytest.raises(MigrationChainError, match="before the first saver"):
        m.upgrade(from_version=0)(_noop)


@pytest.mark.parametrize(
    "register",
    [
        lambda m: m.upgrade(from_version=2)(_noop),  # not below version
        lambda m: m.upgrade(from_version=-1)(_noop),
        lambda m: (m.upgrade(from_version=0)(_noop), m.upgrade(from_version=0)(_noop)),
        lambda m: m.rename_node(from_version=0, old="a", new="a"),
        lambda m: m.rename_node(from_version=0, old="a:b", new="c"),
        lambda m: m.rename_node(from_version=0, old="__start__", new="c"),
        lambda m: (
            m.rename_node(from_version=0, old="a", new="c"),
            m.rename_node(from_version=0, old="b", new="c"),
        ),
    ],
)
def test_bad_registrations_are_refused_immediately(register) -> None:
    m = StateMigrations(version=2)
    with pytest.raises(MigrationChainError):
        register(m)


def test_errors_share_one_root_and_keyword_only_fields() -> None:
    from langgraph_durable.migrations import MigrationError, SchemaVersionError

    for cls in (MigrationChainError, MigrationError, SchemaVersionError):
        assert issubclass(cls, MigrationsError)
    with pytest.raises(TypeError):
        SchemaVersionError("t", 1, 2, "x")  # type: ignore[misc]
    err = SchemaVersionError(thread_id="t", stored_version=3, code_version=2, reason="r")
    assert "thread 't'" in str(err) and "3" in str(err) and "2" in str(err)


def test_bad_version_is_refused() -> None:
    with pytest.raises(MigrationChainError):
        StateMigrations(version=-1)
    with pytest.raises(MigrationChainError):
        StateMigrations(version="2")  # type: ignore[arg-type]


def test_upgrade_all_refuses_a_saver_without_the_protocol_and_bad_arguments() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_durable.migrations import aupgrade_all, upgrade_all

    m = StateMigrations(version=1)
    with pytest.raises(MigrationsError, match="MigrationStore"):
        upgrade_all(InMemorySaver(), m)
    with pytest.raises(ValueError, match="batch_size"):
        upgrade_all(InMemorySaver(), m, batch_size=0)
    import asyncio

    with pytest.raises(MigrationsError, match="AsyncMigrationStore"):
        asyncio.run(aupgrade_all(InMemorySaver(), m))
