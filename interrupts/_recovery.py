"""Recovery of orphaned runs: threads whose run lease expired while running.

A run whose process died (a deploy, an OOM kill, a lost pod) leaves its thread
neither finished nor waiting: its lease record still says ``running`` but
nobody renews it. :class:`RecoveryWorker` finds such threads through the
saver's index of running leases, claims each with compare-and-set (so exactly
one worker recovers it), and resumes it from its last checkpoint with
``invoke(None, config)``. A thread whose recovered runs keep dying is parked
after ``max_recoveries`` and reported with its last recorded error.
"""

from __future__ import annotations

from langgraph_durable.checkpointers import AsyncLeaseStore, LeaseStore, feature
from langgraph_durable.checkpointers.runs import LeaseTarget, adrive, drive, unpark
from langgraph_durable.interrupts._errors import NotParked
from langgraph_durable.interrupts._recovery_pass import recover_orphans
from langgraph_durable.interrupts._recovery_pass_async import arecover_orphans
from langgraph_durable.interrupts._recovery_report import (
    Clock,
    ParkedThread,
    RecoveryPass,
    log,
    utc_now,
)
from langgraph_durable.interrupts._types import CompiledGraph, Saver

__all__ = ["ParkedThread", "RecoveryPass", "RecoveryWorker", "aunpark_thread", "unpark_thread"]


class RecoveryWorker:
    """Finds runs whose process died and resumes them from their last checkpoint.

    Args:
        graph: The compiled graph, with one of our savers (leases on) as checkpointer.
        max_recoveries: Consecutive recoveries (each dying again) after which a
            thread is parked instead of resumed.
        clock: Returns the current UTC time (injectable for tests).
        batch: How many orphaned threads one pass looks at.

    Example:
        >>> worker = RecoveryWorker(graph, max_recoveries=3)  # doctest: +SKIP
        >>> report = worker.run_once()  # doctest: +SKIP
    """

    def __init__(
        self,
        graph: CompiledGraph,
        *,
        max_recoveries: int = 3,
        clock: Clock | None = None,
        batch: int = 100,
    ) -> None:
        if max_recoveries < 0:
            raise ValueError("max_recoveries must be >= 0")
        self.graph = graph
        self.max_recoveries = max_recoveries
        self.clock: Clock = clock or utc_now
        self.batch = batch
        self.recovered_total = 0
        self.parked_total = 0

    def run_once(self) -> RecoveryPass:
        """One pass: park poison threads, claim and resume the other orphans.

        A thread whose latest checkpoint shows it finished or waiting at an
        interrupt, or waiting at one of the graph's static breakpoints, is never
        resumed: its lease is released (``closed``).
        """
        return recover_orphans(self)

    async def arun_once(self) -> RecoveryPass:
        """The async twin of :meth:`run_once` (for graphs with an async saver)."""
        return await arecover_orphans(self)


def unpark_thread(saver: Saver, thread_id: str, *, clock: Clock | None = None) -> str:
    """Give a parked (poison) thread another chance (operator action; sync savers).

    If the thread's latest checkpoint shows it finished or waiting at an
    interrupt, it is only released (nothing is left to run). Otherwise it is
    put back as an orphan whose lease expired now, with its count of
    recoveries in a row reset: the next :meth:`RecoveryWorker.run_once` (for
    example the ``worker`` command) resumes it, and parks it again only after
    another ``max_recoveries`` deaths. ``langgraph-durable unpark THREAD`` calls this.

    Args:
        saver: One of our savers (it holds the lease store).
        thread_id: The parked thread.
        clock: Returns the current UTC time (injectable for tests).

    Returns:
        ``"queued"`` (the next recovery pass resumes it) or ``"released"``.

    Raises:
        NotParked: the thread is not parked (its state is named); nothing changed.
    """
    target = LeaseTarget(saver, feature(saver, LeaseStore))
    outcome, _ = drive(target, unpark(thread_id, (clock or utc_now)()))
    if outcome is None:
        from langgraph_durable.interrupts._thread_states import thread_state

        raise NotParked(thread_id=thread_id, state=thread_state(saver, thread_id).state)
    log.info("unparked thread %r (%s)", thread_id, outcome)
    return outcome


async def aunpark_thread(saver: Saver, thread_id: str, *, clock: Clock | None = None) -> str:
    """The async twin of :func:`unpark_thread` (for our async savers).

    Raises:
        NotParked: the thread is not parked (named by its lease record's state,
            or ``unknown`` without one); nothing changed.
    """
    target = LeaseTarget(saver, feature(saver, AsyncLeaseStore))
    outcome, record = await adrive(target, unpark(thread_id, (clock or utc_now)()))
    if outcome is None:
        raise NotParked(
            thread_id=thread_id, state="unknown" if record is None else str(record.state)
        )
    log.info("unparked thread %r (%s)", thread_id, outcome)
    return outcome
