"""A run's lease statement folded into the write it rides with: one statement.

A run's first write takes its lease and its last write gives it back
(:mod:`langgraph_durable.checkpointers._run_leases`). Sent as two statements in a pipeline, that
cost a sweeper's resume two extra statements and two pipelines (psycopg's
pipeline mode costs more client CPU than a plain statement; the server runs
one more statement each time). Here the lease statement becomes a
data-modifying CTE of the write's own statement: the same single transaction
and round trip, one statement.

Only a write with exactly one lease statement is folded (a run that starts and
ends in one write keeps the pipeline: its acquire and release change the same
row, which one statement cannot do twice). In a ``put`` the lease CTE runs only
when the checkpoint is written (``ok``): when a delta's base is gone the first
statement writes nothing, and the core's retry (whole values) then carries the
lease, so the lease changes exactly with the write, as in the pipeline.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._leases_sql import ACQUIRE, COLS, RELEASE, record
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, key_to_store

# the statements whose lease steps are folded, and how
ACQUIRE_STEP = "acquire_lease"
RELEASE_STEP = "release_lease"
_PUT_FINAL = "\nINSERT INTO {s}.checkpoints "
_WRITES_FINAL = "\nINSERT INTO {s}.durable_waits "

_PARAM = re.compile(r"%\((\w+)\)s")


def _lease_cte(step: str, gated: bool) -> str:
    """The lease statement as a CTE body, its parameters prefixed ``lease_``."""
    if step == ACQUIRE_STEP:
        # INSERT ... SELECT instead of VALUES, so it can be gated on the write
        body = ACQUIRE.replace(
            "VALUES (%(thread_id)s, 'running', %(owner)s, 1, %(now)s, %(now)s, %(expires)s,"
            " %(now)s)",
            "SELECT %(thread_id)s::text, 'running', %(owner)s::text, 1,"
            " %(now)s::timestamptz, %(now)s::timestamptz, %(expires)s::timestamptz,"
            " %(now)s::timestamptz" + (" WHERE (SELECT ok FROM ok)" if gated else ""),
        )
        if body == ACQUIRE:
            raise AssertionError("ACQUIRE changed: update its folded form")
    else:
        body = RELEASE.replace(
            "AND owner = %(owner)s",
            "AND owner = %(owner)s" + (" AND (SELECT ok FROM ok)" if gated else ""),
        )
        if gated and body == RELEASE:
            raise AssertionError("RELEASE changed: update its folded form")
    return _PARAM.sub(r"%(lease_\1)s", body.strip())


def _fold(write: str, final: str, step: str, gated: bool, select: str) -> str:
    head, sep, dml = write.partition(final)
    if not sep:
        raise AssertionError("write statement changed: update its folded form")
    return (
        f"{head},\nwritten AS ({sep.strip()} {dml.strip()}\n),"
        f"\nlease AS ({_lease_cte(step, gated)}\n)\n{select}"
    )


def folded_templates() -> dict[tuple[str, str], str]:
    """``(write template, lease step) -> folded template`` of the hot writes."""
    out: dict[tuple[str, str], str] = {}
    for step in (ACQUIRE_STEP, RELEASE_STEP):
        # put: one row, whether the checkpoint was written, and the lease's row
        out[(_sql.PUT, step)] = _fold(
            _sql.PUT,
            _PUT_FINAL,
            step,
            True,
            "SELECT ok.ok, lease.* FROM ok LEFT JOIN lease ON true",
        )
        for writes in (_sql.PUT_WRITES_UPSERT, _sql.PUT_WRITES_INSERT):
            out[(writes, step)] = _fold(
                writes, _WRITES_FINAL, step, False, "SELECT lease.* FROM lease"
            )
    return out


class FoldedQueries:
    """The folded statements of one schema, keyed by the rendered write statement."""

    def __init__(self, schema: str) -> None:
        self._by_query: dict[tuple[str, str], str] = {}
        for (template, step), folded in folded_templates().items():
            write = _sql.render(template, schema)
            self._by_query[(write, step)] = _sql.render(folded, schema, cols=COLS)

    def get(self, query: str, step: str) -> str | None:
        return self._by_query.get((query, step))


def foldable(pre: Step | None, post: Step | None) -> Step | None:
    """The one lease step of a write, if it can ride inside the write's statement."""
    if (pre is None) == (post is None):
        return None
    step = pre if pre is not None else post
    assert step is not None
    return step if step[0] in (ACQUIRE_STEP, RELEASE_STEP) else None


def fold_op(op: Op[Any], step: Step, queries: FoldedQueries) -> Op[Any]:
    """Run the write ``op`` with ``step`` folded into its statement.

    Returns ``(write result, lease result)``: the lease result is what the
    lease op alone returns (a :class:`LeaseRecord` or ``None`` for an acquire,
    ``True``/``False`` for a release).
    """
    name, args = step
    params = {f"lease_{k}": v for k, v in args.items() if k != "ttl"}
    check = key_to_store if name == ACQUIRE_STEP else check_id
    params["lease_thread_id"] = check("thread_id", args["thread_id"])
    if name == ACQUIRE_STEP:
        params["lease_expires"] = args["now"] + args["ttl"]
    lease: Any = None if name == ACQUIRE_STEP else False
    try:
        stmt = next(op)
    except StopIteration as done:
        return done.value, lease
    while True:
        query = queries.get(stmt.query, name)
        if query is None:
            raise AssertionError(f"no folded form of this write for {name}")
        rows = yield Stmt(
            query, {**(stmt.params or {}), **params}, fetch=True, prepare=stmt.prepare
        )
        reply, got = _unfold(rows or [], stmt.fetch, name)
        if got is not None:
            lease = got
        try:
            stmt = op.send(reply)
        except StopIteration as done:
            return done.value, lease


def _unfold(rows: list[tuple[Any, ...]], write_fetch: bool, step: str) -> tuple[Any, Any]:
    """The write's own rows (as its op expects them) and the lease result, if it ran."""
    if write_fetch:  # put: (ok, lease columns...)
        written = bool(rows and rows[0][0])
        reply: Any = [(True,)] if written else []
        lease_row = rows[0][1:] if rows and rows[0][1] is not None else None
        if not written:
            return reply, None  # the lease CTE was gated off: the retry carries it
    else:
        reply = None
        lease_row = rows[0] if rows else None
    if step == ACQUIRE_STEP:
        return reply, record(lease_row) if lease_row is not None else None
    return reply, lease_row is not None
