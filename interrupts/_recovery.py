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

from langgraph_durable.interrupts._recovery_pass import recover_orphans
from langgraph_durable.interrupts._recovery_pass_async import arecover_orphans
from langgraph_durable.interrupts._recovery_report import (
    Clock,
    ParkedThread,
    RecoveryPass,
    utc_now,
)
from langgraph_durable.interrupts._types import CompiledGraph
from langgraph_durable.interrupts._unpark import unpark_thread
from langgraph_durable.interrupts._unpark_async import aunpark_thread

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
