"""``apending_approvals`` and ``aapproval_health``: the approval inbox and the health check.

The flows they drive are in :mod:`._inbox`.
"""

from __future__ import annotations

from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._driver import Env
from langgraph_durable.interrupts._inbox import (
    health_flow,
    inbox_flow,
)
from langgraph_durable.interrupts._models import ApprovalHealth, ApprovalItem
from langgraph_durable.interrupts._perform_async import adrive
from langgraph_durable.interrupts._types import Saver


async def apending_approvals(
    saver: Saver,
    *,
    approver: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
) -> list[ApprovalItem]:
    """The approval inbox: what waits for a human, oldest deadline first.

    Answers from the saver's wait index on our savers; scans every thread through
    ``saver.list(None)`` on other savers.

    Args:
        saver: The checkpoint saver the graph runs on.
        approver: Keep approvals routed to this label or user id (and unrouted ones).
        thread_id: Keep one thread's approvals.
        limit: At most this many items.

    Returns:
        ``ApprovalItem`` list; batches list their items, open and decided.
    """
    return await adrive(inbox_flow(approver, thread_id, limit), Env(saver))


async def aapproval_health(saver: Saver, *, clock: Clock | None = None) -> ApprovalHealth:
    """How many approvals wait, how many are overdue, and how overdue the oldest is.

    Healthy waiting shows ``overdue`` near zero; a growing ``oldest_overdue_age``
    means no sweeper is running (or it is failing).
    """
    return await adrive(health_flow(clock), Env(saver))
