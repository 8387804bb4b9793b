"""``setup(partitions=N)``: the argument's checks and what a schema already has."""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.migrations.postgres import MAX_PARTITIONS


def check_partitions(partitions: Any) -> None:
    """Refuse anything but ``None`` or an int in ``1..MAX_PARTITIONS``."""
    if partitions is None:
        return
    if (
        isinstance(partitions, bool)
        or not isinstance(partitions, int)
        or not 1 <= partitions <= MAX_PARTITIONS
    ):
        raise InvalidConfigError(
            field="partitions",
            reason=f"expected None or an int in 1..{MAX_PARTITIONS}, got {partitions!r}",
        )


def partitions_of(schema: str, found: Any, wanted: int | None) -> int | None:
    """The partition count to lay steps out with, from ``SETUP_PARTITIONS``' rows.

    A schema without tables takes ``wanted``; one with tables keeps what it has,
    and ``wanted`` must agree with it (a table is not partitioned in place).

    Raises:
        InvalidConfigError: ``wanted`` differs from the schema's layout.
    """
    if not found:
        return wanted
    is_partitioned, count = found[0]
    has = int(count) if is_partitioned else None
    if wanted is not None and has != wanted:
        shown = f"{has} partitions" if has else "unpartitioned tables"
        raise InvalidConfigError(
            field="partitions",
            reason=f"schema {schema!r} already has {shown}; setup(partitions={wanted}) "
            "only lays out a new schema (copy the threads into a new partitioned schema "
            "to change it)",
        )
    return has
