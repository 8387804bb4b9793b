"""The hash-partitioned variant of the layout steps (``setup(partitions=N)``).

The per-thread tables are created ``PARTITION BY HASH (thread_id)`` with ``N``
partitions each, so every statement about one thread reads and writes one
partition (and, under Citus with ``thread_id`` as the distribution column, one
shard). Their primary keys all start with ``thread_id``, as a partitioned
table's unique keys must. The steps themselves stay as written: this module
rewrites the few statements that differ, text in, text out, without I/O.
"""

from __future__ import annotations

import re

PARTITIONED_TABLES = (
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "durable_waits",
    "durable_decisions",
)
"""The tables partitioned by ``thread_id`` (checkpoints, blobs, writes, waits, decisions)."""

MAX_PARTITIONS = 1024

_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+) \(", re.IGNORECASE)
_ALTER_INDEX = re.compile(r"^ALTER INDEX (\w+) SET \((.*)\)$", re.IGNORECASE | re.DOTALL)
_CLEAN = re.compile(r"^SELECT gin_clean_pending_list\('(\w+)'::regclass\)$", re.IGNORECASE)
# A storage parameter of a partitioned index is set on each partition's index
# (PostgreSQL refuses SET on the parent); the partitions all exist by then.
_EACH_CHILD = """DO $$
DECLARE child regclass;
BEGIN
    FOR child IN SELECT inhrelid::regclass FROM pg_inherits
                 WHERE inhparent = '{index}'::regclass LOOP
        EXECUTE format('{command}', child);
    END LOOP;
END
$$"""


def partition_name(table: str, remainder: int) -> str:
    """The name of partition ``remainder`` of ``table`` (``checkpoints_p0``...)."""
    return f"{table}_p{remainder}"


def partitioned(statements: tuple[str, ...], partitions: int) -> tuple[str, ...]:
    """``statements`` of one step for a layout with ``partitions`` hash partitions.

    A ``CREATE TABLE`` of a partitioned table gets ``PARTITION BY HASH
    (thread_id)`` and is followed by its partitions; ``ALTER INDEX ... SET``
    and ``gin_clean_pending_list`` of their indexes go to each partition's
    index. Every other statement is unchanged (an ``ALTER TABLE`` or ``CREATE
    INDEX`` of a partitioned table reaches its partitions by itself).
    """
    out: list[str] = []
    for statement in statements:
        code = _without_comments(statement)
        created = _CREATE.match(code)
        altered = _ALTER_INDEX.match(code)
        cleaned = _CLEAN.match(code)
        if created and created.group(1) in PARTITIONED_TABLES:
            table = created.group(1)
            out.append(f"{statement} PARTITION BY HASH (thread_id)")
            out.extend(
                f"CREATE TABLE IF NOT EXISTS {partition_name(table, r)} PARTITION OF {table}"
                f" FOR VALUES WITH (MODULUS {partitions}, REMAINDER {r})"
                for r in range(partitions)
            )
        elif altered and altered.group(1).startswith(PARTITIONED_TABLES):
            command = f"ALTER INDEX %s SET ({altered.group(2)})".replace("'", "''")
            out.append(_EACH_CHILD.format(index=altered.group(1), command=command))
        elif cleaned and cleaned.group(1).startswith(PARTITIONED_TABLES):
            command = "SELECT gin_clean_pending_list(%L::regclass)"
            out.append(_EACH_CHILD.format(index=cleaned.group(1), command=command))
        else:
            out.append(statement)
    return tuple(out)


def _without_comments(statement: str) -> str:
    return "\n".join(
        line for line in statement.splitlines() if not line.lstrip().startswith("--")
    ).strip()
