"""The ``migrations=`` option every saver takes (agreement 1), checked in one place."""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.migrations import StateMigrations


def check_migrations(migrations: Any) -> StateMigrations | None:
    """Validate ``migrations=`` when a saver is constructed (no I/O).

    A gap in the chain raises ``langgraph_durable.migrations.MigrationChainError`` here, when the
    app starts, rather than when an old thread resumes.

    Raises:
        InvalidConfigError: not a ``langgraph_durable.migrations.StateMigrations``.
        langgraph_durable.migrations.MigrationChainError: the chain is invalid.
    """
    if migrations is None:
        return None
    if not isinstance(migrations, StateMigrations):
        raise InvalidConfigError(
            field="migrations",
            reason=(
                "expected a langgraph_durable.migrations.StateMigrations, "
                f"got {type(migrations).__name__}"
            ),
        )
    return migrations.validate()
