"""Interrupt helpers: approvals with deadlines, batches, compensation, activities.

Approvals (work with any LangGraph saver; our savers add indexed fast paths)::

    from interrupts import request_approval, approve, pending_approvals, ApprovalSweeper

    def review(state):
        d = request_approval({"action": "refund"}, timeout=timedelta(minutes=15))
        return {"approved": d.approved}
"""

from interrupts._approve import aapprove, approve, areject, reject
from interrupts._batch import (
    BatchDecision,
    DecideResult,
    ItemDecision,
    adecide,
    decide,
    request_batch_approval,
)
from interrupts._clock import CLOCK_CONFIG_KEY, Clock
from interrupts._embedded import start_embedded_postgres
from interrupts._errors import (
    AlreadyDecided,
    AmbiguousApproval,
    InterruptsError,
    NoPendingApproval,
    StaleApproval,
    UnknownBatchItem,
)
from interrupts._inbox import (
    aapproval_health,
    apending_approvals,
    approval_health,
    pending_approvals,
)
from interrupts._models import (
    ApprovalHealth,
    ApprovalItem,
    BatchItemState,
    Decision,
    Escalate,
    Escalation,
    OnTimeout,
)
from interrupts._request import request_approval
from interrupts._sweeper import ApprovalSweeper
from interrupts._timeline import TimelineEntry, TimelineInterrupt, plot_timeline, thread_timeline

__all__ = [
    "CLOCK_CONFIG_KEY",
    "AlreadyDecided",
    "AmbiguousApproval",
    "ApprovalHealth",
    "ApprovalItem",
    "ApprovalSweeper",
    "BatchDecision",
    "BatchItemState",
    "Clock",
    "DecideResult",
    "Decision",
    "Escalate",
    "Escalation",
    "InterruptsError",
    "ItemDecision",
    "NoPendingApproval",
    "OnTimeout",
    "StaleApproval",
    "TimelineEntry",
    "TimelineInterrupt",
    "UnknownBatchItem",
    "aapproval_health",
    "aapprove",
    "adecide",
    "apending_approvals",
    "approval_health",
    "approve",
    "areject",
    "decide",
    "pending_approvals",
    "plot_timeline",
    "reject",
    "request_approval",
    "request_batch_approval",
    "start_embedded_postgres",
    "thread_timeline",
]
