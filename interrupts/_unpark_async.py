"""Unparking a parked (poison) thread, written once for both modes.

The sync module (:mod:`._unpark`) is generated from this one by
``tools/async_to_sync.py``; both are exported from :mod:`._recovery`.
"""

from __future__ import annotations

from langgraph_durable.checkpointers import AsyncLeaseStore, feature
from langgraph_durable.checkpointers.runs import LeaseTarget, adrive, unpark
from langgraph_durable.interrupts._errors import NotParked
from langgraph_durable.interrupts._recovery_report import Clock, log, utc_now
from langgraph_durable.interrupts._thread_read_async import aread_thread_state
from langgraph_durable.interrupts._types import Saver


async def aunpark_thread(saver: Saver, thread_id: str, *, clock: Clock | None = None) -> str:
    """Give a parked (poison) thread another chance (operator action).

    If the thread's latest checkpoint shows it finished or waiting at an
    interrupt, it is only released (nothing is left to run). Otherwise it is
    put back as an orphan whose lease expired now, with its count of
    recoveries in a row reset: the next :meth:`RecoveryWorker.arun_once` (for
    example the ``worker`` command) resumes it, and parks it again only after
    another ``max_recoveries`` deaths. ``langgraph-durable unpark THREAD`` calls
    ``unpark_thread``.

    Args:
        saver: One of our savers (it holds the lease store).
        thread_id: The parked thread.
        clock: Returns the current UTC time (injectable for tests).

    Returns:
        ``"queued"`` (the next recovery pass resumes it) or ``"released"``.

    Raises:
        NotParked: the thread is not parked; nothing changed. The error names
            the thread's state as ``thread_state`` reads it (``running``,
            ``orphaned``, ``waiting``, ``finished``, ``failed``, or
            ``unknown`` for no such thread).
    """
    now = (clock or utc_now)()
    target = LeaseTarget(saver, feature(saver, AsyncLeaseStore))
    outcome, _ = await adrive(target, unpark(thread_id, now))
    if outcome is None:
        state = await aread_thread_state(saver, thread_id, now)
        raise NotParked(thread_id=thread_id, state=state.state)
    log.info("unparked thread %r (%s)", thread_id, outcome)
    return outcome
