# Generated from interrupts/_inbox_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``pending_approvals`` and ``approval_health``: the approval inbox and the health check.

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
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._types import Saver


def pending_approvals(
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
    return drive(inbox_flow(approver, thread_id, limit), Env(saver))


def approval_health(saver: Saver, *, clock: Clock | None = None) -> ApprovalHealth:
    """How many approvals wait, how many are overdue, and how overdue the oldest is.

    Healthy waiting shows ``overdue`` near zero; a growing ``oldest_overdue_age``
    means no sweeper is running (or it is failing).
    """
    return drive(health_flow(clock), Env(saver))
