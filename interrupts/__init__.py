"""Interrupt helpers: approvals with deadlines, batches, compensation, activities.

Approvals (work with any LangGraph saver; our savers add indexed fast paths)::

    from interrupts import request_approval, approve, pending_approvals, ApprovalSweeper

    def review(state):
        d = request_approval({"action": "refund"}, timeout=timedelta(minutes=15))
        return {"approved": d.approved}

Run recovery (our savers hold a lease on each running thread)::

    from interrupts import RecoveryWorker, heartbeat, thread_state

    RecoveryWorker(graph, max_recoveries=3).run_once()  # resume runs whose process died
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
from interrupts._heartbeat import heartbeat
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
from interrupts._recovery import ParkedThread, RecoveryReport, RecoveryWorker
from interrupts._request import request_approval
from interrupts._sweeper import ApprovalSweeper
from interrupts._thread_states import (
    RunHealth,
    ThreadState,
    parked_threads,
    run_health,
    running_threads,
    thread_state,
)
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
    "ParkedThread",
    "RecoveryReport",
    "RecoveryWorker",
    "RunHealth",
    "StaleApproval",
    "ThreadState",
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
    "heartbeat",
    "parked_threads",
    "pending_approvals",
    "plot_timeline",
    "reject",
    "request_approval",
    "request_batch_approval",
    "run_health",
    "running_threads",
    "start_embedded_postgres",
    "thread_state",
    "thread_timeline",
]
