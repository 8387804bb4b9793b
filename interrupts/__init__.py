"""Interrupt helpers: approvals with deadlines, batches, compensation, activities.

Approvals (work with any LangGraph saver; our savers add indexed fast paths)::

    from langgraph_durable.interrupts import (
        ApprovalSweeper, approve, pending_approvals, request_approval,
    )

    def review(state):
        d = request_approval({"action": "refund"}, timeout=timedelta(minutes=15))
        return {"approved": d.approved}

Compensation (sagas) and idempotent activities::

    from langgraph_durable.interrupts import compensable, add_compensation, Compensate, activity

    @compensable(undo=refund_card)
    def charge_card(state): ...

    graph = add_compensation(builder, max_attempts=3).compile(checkpointer=saver)

Run recovery (our savers hold a lease on each running thread)::

    from langgraph_durable.interrupts import RecoveryWorker, heartbeat, thread_state

    RecoveryWorker(graph, max_recoveries=3).run_once()  # resume runs whose process died
"""

from langgraph_durable.checkpointers import AuditBreak, AuditVerification
from langgraph_durable.interrupts._activity import Activity, activity, idempotency_key
from langgraph_durable.interrupts._approve import aapprove, approve, areject, reject
from langgraph_durable.interrupts._audit import (
    AuditEntry,
    aaudit_log,
    apurge_audit,
    audit_log,
    averify_audit,
    purge_audit,
    verify_audit,
)
from langgraph_durable.interrupts._authz import (
    REQUESTER,
    Authorize,
    AuthRequest,
    Decider,
    NotAuthorized,
    default_authorize,
    set_authorization,
)
from langgraph_durable.interrupts._batch import adecide, decide
from langgraph_durable.interrupts._batch_models import BatchDecision, DecideResult, ItemDecision
from langgraph_durable.interrupts._batch_node import (
    arequest_batch_approval,
    request_batch_approval,
)
from langgraph_durable.interrupts._clock import CLOCK_CONFIG_KEY, Clock
from langgraph_durable.interrupts._compensable import compensable
from langgraph_durable.interrupts._compensation import add_compensation, compensate_command
from langgraph_durable.interrupts._compensator import Backoff
from langgraph_durable.interrupts._edit import aedit, arespond, edit, respond
from langgraph_durable.interrupts._embedded import start_embedded_postgres
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    AmbiguousApproval,
    AuditNotVerifiable,
    DecisionNotAllowed,
    InterruptsError,
    InvalidInput,
    NoPendingApproval,
    NotParked,
    ResumeNotUnderstood,
    StaleApproval,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._heartbeat import heartbeat
from langgraph_durable.interrupts._identity import DECIDER_KEY
from langgraph_durable.interrupts._inbox import (
    aapproval_health,
    apending_approvals,
    approval_health,
    pending_approvals,
)
from langgraph_durable.interrupts._models import (
    ApprovalHealth,
    ApprovalItem,
    BatchItemState,
    Decision,
    Escalate,
    Escalation,
    OnTimeout,
)
from langgraph_durable.interrupts._notify import ApprovalEvent, Notifier, set_notifier
from langgraph_durable.interrupts._operator_calls import (
    acancel,
    aextend,
    areassign,
    aremind,
    cancel,
    extend,
    reassign,
    remind,
)
from langgraph_durable.interrupts._recovery import (
    ParkedThread,
    RecoveryPass,
    RecoveryWorker,
    aunpark_thread,
    unpark_thread,
)
from langgraph_durable.interrupts._registry import register_undo
from langgraph_durable.interrupts._report import (
    ErrorInfo,
    RecoveryAction,
    RecoveryReport,
    StepInfo,
    is_recovery_value,
    resume_recovery,
)
from langgraph_durable.interrupts._request import arequest_approval, request_approval
from langgraph_durable.interrupts._saga_state import (
    COMPENSATE_NODE,
    SAGA_KEY,
    Compensate,
    SagaState,
)
from langgraph_durable.interrupts._sweeper import ApprovalSweeper
from langgraph_durable.interrupts._thread_states import (
    RunHealth,
    ThreadState,
    parked_threads,
    run_health,
    running_threads,
    thread_state,
)
from langgraph_durable.interrupts._timeline import (
    TimelineEntry,
    TimelineInterrupt,
    plot_timeline,
    thread_timeline,
)
from langgraph_durable.interrupts._tool_review import areview_tool_call, review_tool_call

__all__ = [
    "CLOCK_CONFIG_KEY",
    "COMPENSATE_NODE",
    "DECIDER_KEY",
    "REQUESTER",
    "SAGA_KEY",
    "Activity",
    "AlreadyDecided",
    "AmbiguousApproval",
    "ApprovalEvent",
    "ApprovalHealth",
    "ApprovalItem",
    "ApprovalSweeper",
    "AuditBreak",
    "AuditEntry",
    "AuditNotVerifiable",
    "AuditVerification",
    "AuthRequest",
    "Authorize",
    "Backoff",
    "BatchDecision",
    "BatchItemState",
    "Clock",
    "Compensate",
    "DecideResult",
    "Decider",
    "Decision",
    "DecisionNotAllowed",
    "ErrorInfo",
    "Escalate",
    "Escalation",
    "InterruptsError",
    "InvalidInput",
    "ItemDecision",
    "NoPendingApproval",
    "NotAuthorized",
    "NotParked",
    "Notifier",
    "OnTimeout",
    "ParkedThread",
    "RecoveryAction",
    "RecoveryPass",
    "RecoveryReport",
    "RecoveryWorker",
    "ResumeNotUnderstood",
    "RunHealth",
    "SagaState",
    "StaleApproval",
    "StepInfo",
    "ThreadState",
    "TimelineEntry",
    "TimelineInterrupt",
    "UnknownBatchItem",
    "aapproval_health",
    "aapprove",
    "aaudit_log",
    "acancel",
    "activity",
    "add_compensation",
    "adecide",
    "aedit",
    "aextend",
    "apending_approvals",
    "approval_health",
    "approve",
    "apurge_audit",
    "areassign",
    "areject",
    "aremind",
    "arequest_approval",
    "arequest_batch_approval",
    "arespond",
    "areview_tool_call",
    "audit_log",
    "aunpark_thread",
    "averify_audit",
    "cancel",
    "compensable",
    "compensate_command",
    "decide",
    "default_authorize",
    "edit",
    "extend",
    "heartbeat",
    "idempotency_key",
    "is_recovery_value",
    "parked_threads",
    "pending_approvals",
    "plot_timeline",
    "purge_audit",
    "reassign",
    "register_undo",
    "reject",
    "remind",
    "request_approval",
    "request_batch_approval",
    "respond",
    "resume_recovery",
    "review_tool_call",
    "run_health",
    "running_threads",
    "set_authorization",
    "set_notifier",
    "start_embedded_postgres",
    "thread_state",
    "thread_timeline",
    "unpark_thread",
    "verify_audit",
]
