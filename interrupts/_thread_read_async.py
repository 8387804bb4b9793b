"""One thread's state, read from its saver: the lease record, the wait index, the checkpoint.

Written once: the sync module (:mod:`._thread_read`) is generated from this one
by ``tools/async_to_sync.py``. :func:`~langgraph_durable.interrupts._thread_states.thread_state`
reads with it, and unparking names a thread that is not parked by it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from langgraph.checkpoint.serde.types import INTERRUPT

from langgraph_durable.checkpointers import AsyncLeaseStore, AsyncWaitIndex, feature
from langgraph_durable.checkpointers.runs import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_INTERRUPTED,
    PARKED,
    RUNNING,
    end_shown_by,
)
from langgraph_durable.interrupts._thread_states import (
    FAILED,
    FINISHED,
    UNKNOWN,
    WAITING,
    ThreadState,
    thread_state_of,
)


async def aread_thread_state(saver: Any, thread_id: str, now: datetime) -> ThreadState:
    """The state of one thread in ``saver`` at ``now``, with its schema version if known."""
    state = await _aread_state(saver, thread_id, now)
    reader = getattr(saver, "aschema_version", None)
    if state.state == UNKNOWN or not callable(reader):
        return state
    version = await reader({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    return replace(state, schema_version=version)


async def _apending_waits(
    saver: Any, thread_id: str
) -> tuple[datetime | None, tuple[str, ...]] | None:
    """Earliest deadline and kinds of the thread's pending waits, or ``None`` if not waiting."""
    index = feature(saver, AsyncWaitIndex)
    if index is not None:
        entries = await index.alist_waits(thread_id=thread_id)
        if entries:
            deadlines = [e.info.deadline for e in entries if e.info.deadline is not None]
            return (
                min(deadlines) if deadlines else None,
                tuple(sorted({e.info.kind for e in entries})),
            )
    tup = await saver.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if tup is not None and any(w[1] == INTERRUPT for w in tup.pending_writes or ()):
        return None, ()
    return None


async def _aread_state(saver: Any, thread_id: str, now: datetime) -> ThreadState:
    store = feature(saver, AsyncLeaseStore)
    lease = await store.aget_lease(thread_id=thread_id) if store is not None else None
    if lease is not None and lease.state == PARKED:
        return thread_state_of(lease, clock=lambda: now)
    if lease is not None and lease.state == RUNNING:
        # the checkpoint is the truth about the thread: a run killed after
        # another run finished or paused the thread leaves a running lease
        # behind until it is cleared; that thread is not running
        latest = await saver.aget_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        end = end_shown_by(latest)
        if end == ENDED_FINISHED:
            return ThreadState(
                thread_id,
                FINISHED,
                recoveries=lease.recoveries,
                last_error=lease.last_error,
                lease=lease,
            )
        if end != ENDED_INTERRUPTED:
            return thread_state_of(lease, clock=lambda: now)
    recoveries = 0 if lease is None else lease.recoveries
    last_error = None if lease is None else lease.last_error
    waits = await _apending_waits(saver, thread_id)
    if waits is not None:
        return ThreadState(
            thread_id,
            WAITING,
            deadline=waits[0],
            waiting_for=waits[1],
            recoveries=recoveries,
            last_error=last_error,
            lease=lease,
        )
    if lease is not None and lease.reason == ENDED_ERROR:
        return ThreadState(
            thread_id, FAILED, recoveries=recoveries, last_error=last_error, lease=lease
        )
    if lease is None and await saver.aget_tuple({"configurable": {"thread_id": thread_id}}) is None:
        return ThreadState(thread_id, UNKNOWN)
    return ThreadState(
        thread_id, FINISHED, recoveries=recoveries, last_error=last_error, lease=lease
    )
