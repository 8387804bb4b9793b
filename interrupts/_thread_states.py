"""What each thread is doing: running, waiting, orphaned, parked, finished or failed.

For ``status`` and ``inspect`` (and dashboards): :func:`thread_state` reads one
thread from a saver's lease record, wait index and latest checkpoint;
:func:`run_health` counts running, orphaned and parked threads with indexed
queries only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph_durable.checkpointers import feature
from langgraph_durable.checkpointers.runs import (
    PARKED,
    RUNNING,
    LeaseCounts,
    LeaseRecord,
    LeaseStore,
)
from langgraph_durable.interrupts._types import Saver

RUNNING_STATE = "running"
WAITING = "waiting"
ORPHANED = "orphaned"
PARKED_STATE = "parked"
FINISHED = "finished"
FAILED = "failed"
UNKNOWN = "unknown"
THREAD_STATES = (RUNNING_STATE, WAITING, ORPHANED, PARKED_STATE, FINISHED, FAILED, UNKNOWN)

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class ThreadState:
    """One thread's state.

    Attributes:
        thread_id: The thread.
        state: ``running``, ``waiting``, ``orphaned`` (its run's process died),
            ``parked`` (gave up after repeated recoveries), ``finished``,
            ``failed`` (the last run raised) or ``unknown`` (no such thread).
        owner: Lease owner of the running (or orphaned, parked) run.
        age: Running: since the run took the lease. Orphaned: since the lease
            expired. Parked: since it was parked.
        heartbeat_age: Since the last heartbeat (running and orphaned).
        deadline: Waiting: the earliest deadline of its marked interrupts.
        waiting_for: Waiting: the kinds of its marked interrupts.
        recoveries: How many times the thread was recovered.
        progress: The last ``heartbeat()`` note of the running run.
        last_error: The last recorded error.
        lease: The raw lease record, if any.
        schema_version: The schema version the thread's latest root checkpoint
            is stored with (:func:`thread_state` with one of our savers;
            ``None`` otherwise or without a checkpoint).
    """

    thread_id: str
    state: str
    owner: str | None = None
    age: timedelta | None = None
    heartbeat_age: timedelta | None = None
    deadline: datetime | None = None
    waiting_for: tuple[str, ...] = ()
    recoveries: int = 0
    progress: str | None = None
    last_error: str | None = None
    lease: LeaseRecord | None = None
    schema_version: int | None = None


@dataclass(frozen=True)
class RunHealth:
    """Counts of running, orphaned and parked threads.

    Attributes:
        running: Threads whose run holds a live lease.
        orphaned: Threads whose run's lease expired (a recovery worker resumes them).
        parked: Poison threads parked after ``max_recoveries``.
        checked_at: When this was measured (UTC).
    """

    running: int
    orphaned: int
    parked: int
    checked_at: datetime


def _now(clock: Clock | None) -> datetime:
    return (clock or (lambda: datetime.now(timezone.utc)))()


def _store(saver: Any) -> LeaseStore | None:
    return feature(saver, LeaseStore)


def _since(now: datetime, then: datetime | None) -> timedelta | None:
    return None if then is None else max(now - then, timedelta(0))


def thread_state(saver: Saver, thread_id: str, *, clock: Clock | None = None) -> ThreadState:
    """The state of one thread in ``saver`` (one of our sync savers, or any saver).

    With a saver that has no run leases, running threads cannot be told apart
    from finished ones: they show as ``finished`` (or ``waiting``).
    """
    # the reading is written once, async, in _thread_read_async.py (which imports
    # this module's ThreadState, hence imported here)
    from langgraph_durable.interrupts._thread_read import read_thread_state

    return read_thread_state(saver, thread_id, _now(clock))


def running_threads(
    saver: Saver, *, clock: Clock | None = None, limit: int = 100
) -> list[ThreadState]:
    """Threads whose record says running (live or orphaned), soonest expiry first."""
    store = _store(saver)
    if store is None:
        return []
    return [thread_state_of(r, clock=clock) for r in store.list_leases(state=RUNNING, limit=limit)]


def parked_threads(saver: Saver, *, limit: int = 100) -> list[ThreadState]:
    """Parked (poison) threads, oldest first, with their last error."""
    store = _store(saver)
    if store is None:
        return []
    return [thread_state_of(r) for r in store.list_leases(state=PARKED, limit=limit)]


def thread_state_of(record: LeaseRecord, *, clock: Clock | None = None) -> ThreadState:
    """The state of a thread known to be running, orphaned or parked, from its record alone."""
    now = _now(clock)
    if record.state == PARKED:
        return ThreadState(
            record.thread_id,
            PARKED_STATE,
            owner=record.owner,
            age=_since(now, record.ended_at),
            recoveries=record.recoveries,
            last_error=record.last_error,
            lease=record,
        )
    orphaned = record.is_orphaned(now)
    return ThreadState(
        record.thread_id,
        ORPHANED if orphaned else RUNNING_STATE,
        owner=record.owner,
        age=_since(now, record.expires_at if orphaned else record.acquired_at),
        heartbeat_age=_since(now, record.renewed_at),
        recoveries=record.recoveries,
        progress=record.progress,
        last_error=record.last_error,
        lease=record,
    )


def run_health(saver: Saver, *, clock: Clock | None = None) -> RunHealth:
    """Running, orphaned and parked counts (indexed: independent of finished threads)."""
    now = _now(clock)
    store = _store(saver)
    counts = store.lease_counts(now=now) if store is not None else LeaseCounts(0, 0, 0)
    return RunHealth(counts.running, counts.orphaned, counts.parked, now)
