"""Retention on PostgreSQL, I/O-free: the policy, its report and one batch as an ``Op``.

Idle threads are found through ``durable_thread_activity`` (layout step 12):
one row per thread, stamped by a trigger whenever a checkpoint is inserted,
read from the old end of its ``(active_at, thread_id)`` index. A batch is one
short transaction: it locks up to ``batch_size`` idle rows (``SKIP LOCKED``:
a thread being written right now is skipped), leaves alone every one that is
waiting or held by a run, and deletes or prunes the others by thread id, so
its cost follows the threads it touches, not the size of the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt

RETRIED_CODES = frozenset(("40P01", "40001"))
"""SQLSTATEs after which a batch is run again: deadlock detected, serialization failure."""

BATCH_ATTEMPTS = 4
"""How many times one batch is tried before its deadlock or conflict is raised."""

RETRY_PAUSE = 0.05
"""Seconds before the second attempt (doubling after each): the winner commits meanwhile."""

MARK_SLACK = timedelta(minutes=1)
"""How stale a thread's activity mark may be (the trigger skips marks within it)."""

# The idle threads after the cursor, oldest first, each with what keeps it:
# a wait-index entry or a pending interrupt on a namespace's latest checkpoint
# (any interrupt, marked or not), or a run lease that is running (live or an
# orphan awaiting recovery), parked, or ended at a breakpoint. Each check is a
# LATERAL probe with LIMIT, so it is an index lookup per thread: an EXISTS
# could be planned as one hash of a whole table.
_CANDIDATES = """
SELECT a.thread_id, a.active_at, w.found IS NOT NULL OR i.found IS NOT NULL,
       l.found IS NOT NULL, n.checkpoints
FROM (
    SELECT a.thread_id, a.active_at FROM {s}.durable_thread_activity AS a
    WHERE a.active_at < now() - %(idle)s::interval{unpruned}
      AND (a.active_at, a.thread_id) > (%(after_at)s::timestamptz, %(after_id)s::text)
    ORDER BY a.active_at, a.thread_id
    LIMIT %(limit)s{lock}
) AS a
LEFT JOIN LATERAL (
    SELECT 1 AS found FROM {s}.durable_waits AS w WHERE w.thread_id = a.thread_id LIMIT 1
) AS w ON true
LEFT JOIN LATERAL (
    SELECT 1 AS found FROM {s}.checkpoint_writes AS cw
    WHERE cw.thread_id = a.thread_id AND cw.channel = '__interrupt__'
      AND cw.checkpoint_id = (
          SELECT max(c.checkpoint_id) FROM {s}.checkpoints AS c
          WHERE c.thread_id = cw.thread_id AND c.checkpoint_ns = cw.checkpoint_ns)
    LIMIT 1
) AS i ON true
LEFT JOIN LATERAL (
    SELECT 1 AS found FROM {s}.durable_run_leases AS l
    WHERE l.thread_id = a.thread_id
      AND (l.state IN ('running', 'parked') OR l.reason = 'interrupted')
    LIMIT 1
) AS l ON true
CROSS JOIN LATERAL (
    SELECT count(*) AS checkpoints FROM {s}.checkpoints AS c WHERE c.thread_id = a.thread_id
) AS n
ORDER BY a.active_at, a.thread_id"""
# What a deleted thread leaves in the lease table (a finished or failed run).
_DELETE_LEASES = """
DELETE FROM {s}.durable_run_leases
WHERE thread_id = ANY(%(thread_ids)s::text[]) AND state = 'released'
  AND reason IS DISTINCT FROM 'interrupted'"""
_MARK_PRUNED = """
UPDATE {s}.durable_thread_activity SET pruned = true
WHERE thread_id = ANY(%(thread_ids)s::text[])"""
_COUNT = "SELECT count(*) FROM {s}.checkpoints WHERE thread_id = ANY(%(thread_ids)s::text[])"
_START = ("-infinity", "")


@dataclass(frozen=True)
class RetentionPolicy:
    """Which idle threads retention removes, and how.

    A thread is idle once no checkpoint was written to it for ``older_than``.
    Whatever its age, a thread is kept whole while it waits at an interrupt
    (an approval, a batch, any ``interrupt()``, a breakpoint), while a run
    holds its lease (or its run died and awaits recovery), and while it is
    parked for an operator.

    Attributes:
        older_than: How long a thread must have been idle (a ``timedelta``
            or seconds; more than zero).
        keep_latest: ``False`` (default): delete the whole thread (its
            checkpoints, writes, decisions, activity results, finished lease).
            ``True``: keep only the latest checkpoint of each of its
            namespaces (and what that checkpoint needs to read back), as
            ``prune(strategy="keep_latest")`` does; a pruned thread is pruned
            again only after it was written to.
        batch_size: Threads per transaction (each batch locks only those).
    """

    older_than: timedelta | float
    keep_latest: bool = False
    batch_size: int = 500

    def __post_init__(self) -> None:
        age = self.older_than
        if isinstance(age, bool) or not isinstance(age, (int, float, timedelta)):
            raise InvalidConfigError(
                field="older_than", reason=f"expected a timedelta or seconds, got {age!r}"
            )
        seconds = age.total_seconds() if isinstance(age, timedelta) else float(age)
        if not seconds > 0:
            raise InvalidConfigError(field="older_than", reason=f"must be > 0, got {age!r}")
        object.__setattr__(self, "older_than", timedelta(seconds=seconds))
        if not isinstance(self.keep_latest, bool):
            raise InvalidConfigError(
                field="keep_latest", reason=f"expected True or False, got {self.keep_latest!r}"
            )
        size = self.batch_size
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 100_000:
            raise InvalidConfigError(
                field="batch_size", reason=f"expected an int in 1..100000, got {size!r}"
            )

    @property
    def idle(self) -> timedelta:
        """The age compared with a thread's mark (``older_than`` plus the mark's slack)."""
        assert isinstance(self.older_than, timedelta)
        return self.older_than + MARK_SLACK


@dataclass
class RetentionReport:
    """What a retention run did (or, dry, would do).

    Attributes:
        deleted: Threads deleted (or that would be).
        pruned: Threads pruned to their latest checkpoints (or that would be).
        checkpoints: Checkpoints removed; dry: the candidate threads' checkpoints.
        kept_waiting: Idle threads kept because they wait at an interrupt.
        kept_held: Idle threads kept because of their run lease.
        batches: Transactions run.
        dry_run: Whether nothing was changed.
        cursor: Where a later call with ``after=cursor`` goes on; ``None``
            once every idle thread was seen.
    """

    deleted: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    checkpoints: int = 0
    kept_waiting: int = 0
    kept_held: int = 0
    batches: int = 0
    dry_run: bool = False
    cursor: tuple[Any, str] | None = None


@dataclass(frozen=True)
class _Queries:
    candidates: dict[tuple[bool, bool], str]
    delete_leases: str
    mark_pruned: str
    count: str


@cache
def _queries(schema: str) -> _Queries:
    def r(template: str) -> str:
        return _sql.render(template, schema)

    candidates = {
        (keep, lock): _sql.render(
            _CANDIDATES,
            schema,
            unpruned=" AND NOT a.pruned" if keep else "",
            lock=" FOR UPDATE SKIP LOCKED" if lock else "",
        )
        for keep in (False, True)
        for lock in (False, True)
    }
    return _Queries(candidates, r(_DELETE_LEASES), r(_MARK_PRUNED), r(_COUNT))


def candidates_query(schema: str, *, keep_latest: bool, locked: bool = True) -> str:
    """The statement that finds a batch's idle threads (for EXPLAIN in tests and docs)."""
    return _queries(schema).candidates[(keep_latest, locked)]


def candidates_params(policy: RetentionPolicy, after: Any = None) -> dict[str, Any]:
    """The parameters of :func:`candidates_query` for ``policy`` after ``after``."""
    after_at, after_id = after if after is not None else _START
    return {
        "idle": policy.idle,
        "after_at": after_at,
        "after_id": after_id,
        "limit": policy.batch_size,
    }


def retention_batch(
    saver: Any, policy: RetentionPolicy, after: Any, report: RetentionReport
) -> Op[Any]:
    """One batch on ``saver``: its outcome goes into ``report``; returns the next cursor."""
    q = _queries(saver.queries.schema)
    dry = report.dry_run
    params = candidates_params(policy, after)
    if not dry:
        yield Stmt(_sql.BEGIN)
    query = q.candidates[(policy.keep_latest, not dry)]
    rows = yield Stmt(query, params, fetch=True, prepare=False)
    rows = rows or []
    ids: list[str] = []
    counted = kept_waiting = kept_held = 0
    for thread_id, _, waiting, held, count in rows:
        if waiting:
            kept_waiting += 1
        elif held:
            kept_held += 1
        else:
            ids.append(thread_id)
            counted += int(count)
    if ids and not dry:
        if policy.keep_latest:
            yield from saver._prune_to_heads(ids)
            yield Stmt(q.mark_pruned, {"thread_ids": ids}, prepare=False)
            left = yield Stmt(q.count, {"thread_ids": ids}, fetch=True, prepare=False)
            counted -= int(left[0][0]) if left else 0
        else:
            yield Stmt(saver.queries.delete_threads, {"thread_ids": ids})
            yield Stmt(q.delete_leases, {"thread_ids": ids}, prepare=False)
    if not dry:
        yield Stmt(_sql.COMMIT)
        for t in ids:
            saver._chains.forget(t)
    # only a committed batch is reported (one rolled back may run again)
    (report.pruned if policy.keep_latest else report.deleted).extend(ids)
    report.checkpoints += counted
    report.kept_waiting += kept_waiting
    report.kept_held += kept_held
    report.batches += 1
    if len(rows) < policy.batch_size:
        return None
    return (rows[-1][1], rows[-1][0])
