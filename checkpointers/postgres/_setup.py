"""``setup()``: the pending storage-layout steps, each in one locked transaction (no I/O)."""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._layout_partitions import (
    check_partitions,
    partitions_of,
)
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, _Queries
from langgraph_durable.migrations.postgres import LayoutStep, layout_steps, partitioned


def op_setup(q: _Queries, partitions: int | None = None) -> Op[Any]:
    """Apply the pending layout steps, each in one locked transaction.

    ``partitions``: create the per-thread tables hash-partitioned (a new
    schema only); a schema laid out so goes on so whatever is passed.
    """
    check_partitions(partitions)
    schema = q.schema
    steps: tuple[LayoutStep, ...] = layout_steps()
    lock = {"schema": schema}
    # nothing of setup is prepared: each statement runs once per process,
    # and psycopg drops its prepared statements when an ALTER or DROP of a
    # step completes, which in pipeline mode may be after the next
    # statement was sent under its old name
    while True:
        yield Stmt(_sql.BEGIN)
        yield Stmt(_sql.SETUP_LOCK, lock, prepare=False)
        yield Stmt(q.setup_schema)
        yield Stmt(q.setup_prepare)
        rows = yield Stmt(q.setup_current, None, fetch=True)
        current = int(rows[0][0]) if rows else 0
        pending = [s for s in steps if s.version > current]
        if not pending:
            if partitions is not None:
                found = yield Stmt(_sql.SETUP_PARTITIONS, lock, fetch=True, prepare=False)
                partitions_of(schema, found, partitions)
            yield Stmt(_sql.COMMIT)
            return current
        step = pending[0]
        found = yield Stmt(_sql.SETUP_PARTITIONS, lock, fetch=True, prepare=False)
        layout = partitions_of(schema, found, partitions)
        # search_path only for this transaction: the step files name tables
        # unqualified, and pg_catalog stays resolvable.
        yield Stmt(_sql.SETUP_SEARCH_PATH, {"path": _search_path(schema)}, prepare=False)
        statements = step.statements if layout is None else partitioned(step.statements, layout)
        # statement by statement: a connection in pipeline mode refuses a script
        for statement in statements:
            yield Stmt(statement)
        record = {"version": step.version, "name": step.name}
        yield Stmt(q.setup_record, record, prepare=False)
        yield Stmt(_sql.COMMIT)


def _search_path(schema: str) -> str:
    # set_config takes the list as text: quote the schema as an identifier
    return '"' + schema.replace('"', '""') + '", pg_catalog'
