"""Interrupt helpers: approvals with deadlines, batches, compensation, activities.

The public names come in four roles, and ``__all__`` lists them the same way:

* **in a node, or building the graph**: :func:`request_approval`,
  :func:`request_batch_approval`, :func:`review_tool_call`, :func:`activity`,
  :func:`compensable`, :func:`add_compensation`, :func:`heartbeat`;
* **an operator, from outside the graph**: :func:`approve`, :func:`reject`,
  :func:`edit`, :func:`respond`, :func:`decide` (batches), :func:`extend`,
  :func:`reassign`, :func:`remind`, :func:`cancel`, :func:`pending_approvals`,
  :func:`audit_log`, :func:`thread_state`, :func:`unpark_thread`, :func:`thread_timeline`;
* **a worker process**: :class:`ApprovalSweeper` (deadlines), :class:`RecoveryWorker`
  (runs whose process died), :class:`NotificationDispatcher`;
* **process-wide policies and hooks**: :func:`set_authorization`, :func:`set_notifier`,
  :class:`NotifyConfig`;

then the errors, all under :class:`InterruptsError`. A function that does I/O has an
async twin named with an ``a`` in front (``approve`` / ``aapprove``).

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
from langgraph_durable.interrupts._activity_wait import CheckpointNotStored
from langgraph_durable.interrupts._audit import AuditEntry
from langgraph_durable.interrupts._audit_calls import audit_log, purge_audit, verify_audit
from langgraph_durable.interrupts._audit_calls_async import (
    aaudit_log,
    apurge_audit,
    averify_audit,
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
from langgraph_durable.interrupts._batch_calls import decide
from langgraph_durable.interrupts._batch_calls_async import adecide
from langgraph_durable.interrupts._batch_models import BatchDecision, DecideResult, ItemDecision
from langgraph_durable.interrupts._batch_request_calls import request_batch_approval
from langgraph_durable.interrupts._batch_request_calls_async import arequest_batch_approval
from langgraph_durable.interrupts._clock import CLOCK_CONFIG_KEY, Clock
from langgraph_durable.interrupts._compensable import compensable
from langgraph_durable.interrupts._compensation import add_compensation, compensate_command
from langgraph_durable.interrupts._compensator import Backoff
from langgraph_durable.interrupts._decision_calls import approve, reject
from langgraph_durable.interrupts._decision_calls_async import aapprove, areject
from langgraph_durable.interrupts._dispatch import DispatchPass, NotificationDispatcher
from langgraph_durable.interrupts._dispatch_async import AsyncNotificationDispatcher
from langgraph_durable.interrupts._edit import edit, respond
from langgraph_durable.interrupts._edit_async import aedit, arespond
from langgraph_durable.interrupts._embedded import start_embedded_postgres
from langgraph_durable.interrupts._errors import (
    AlreadyDecided,
    AmbiguousApproval,
    AuditNotVerifiable,
    DecisionNotAllowed,
    InterruptsError,
    InvalidInput,
    MissingExtra,
    NoPendingApproval,
    NotParked,
    ResumeNotUnderstood,
    StaleApproval,
    UnknownBatchItem,
)
from langgraph_durable.interrupts._heartbeat import heartbeat
from langgraph_durable.interrupts._identity import DECIDER_KEY
from langgraph_durable.interrupts._inbox_calls import approval_health, pending_approvals
from langgraph_durable.interrupts._inbox_calls_async import aapproval_health, apending_approvals
from langgraph_durable.interrupts._link_calls import decision_link
from langgraph_durable.interrupts._link_calls_async import adecision_link
from langgraph_durable.interrupts._links import LinkRefused
from langgraph_durable.interrupts._metrics import metrics_app
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
from langgraph_durable.interrupts._operator_calls import cancel, extend, reassign, remind
from langgraph_durable.interrupts._operator_calls_async import (
    acancel,
    aextend,
    areassign,
    aremind,
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
    StepInfo,
    UndoAction,
    UndoReport,
    is_undo_report,
    resume_undo,
)
from langgraph_durable.interrupts._request_calls import request_approval
from langgraph_durable.interrupts._request_calls_async import arequest_approval
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
    thread_timeline,
)
from langgraph_durable.interrupts._timeline_plot import plot_timeline
from langgraph_durable.interrupts._tool_review import review_tool_call
from langgraph_durable.interrupts._tool_review_async import areview_tool_call
from langgraph_durable.interrupts._webhook import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    DecisionLinks,
    DeliveryRetry,
    NotifyConfig,
    WebhookTarget,
    load_notify_config,
    verify_signature,
)

__all__ = [
    # What a node calls, and what builds the graph
    "COMPENSATE_NODE",
    "SAGA_KEY",
    "Activity",
    "Backoff",
    "Compensate",
    "Decision",
    "Escalate",
    "Escalation",
    "OnTimeout",
    "SagaState",
    "activity",
    "add_compensation",
    "arequest_approval",
    "arequest_batch_approval",
    "areview_tool_call",
    "compensable",
    "compensate_command",
    "heartbeat",
    "idempotency_key",
    "register_undo",
    "request_approval",
    "request_batch_approval",
    "review_tool_call",
]

__all__ += [
    # What an operator calls, from outside the graph
    "ApprovalHealth",
    "ApprovalItem",
    "AuditBreak",
    "AuditEntry",
    "AuditVerification",
    "BatchDecision",
    "BatchItemState",
    "DecideResult",
    "ErrorInfo",
    "ItemDecision",
    "RunHealth",
    "StepInfo",
    "ThreadState",
    "TimelineEntry",
    "TimelineInterrupt",
    "UndoAction",
    "UndoReport",
    "aapproval_health",
    "aapprove",
    "aaudit_log",
    "acancel",
    "adecide",
    "adecision_link",
    "aedit",
    "aextend",
    "apending_approvals",
    "approval_health",
    "approve",
    "apurge_audit",
    "areassign",
    "areject",
    "aremind",
    "arespond",
    "audit_log",
    "aunpark_thread",
    "averify_audit",
    "cancel",
    "decide",
    "decision_link",
    "edit",
    "extend",
    "is_undo_report",
    "metrics_app",
    "parked_threads",
    "pending_approvals",
    "plot_timeline",
    "purge_audit",
    "reassign",
    "reject",
    "remind",
    "respond",
    "resume_undo",
    "run_health",
    "running_threads",
    "thread_state",
    "thread_timeline",
    "unpark_thread",
    "verify_audit",
]

__all__ += [
    # What a worker process runs
    "ApprovalSweeper",
    "AsyncNotificationDispatcher",
    "DispatchPass",
    "NotificationDispatcher",
    "ParkedThread",
    "RecoveryPass",
    "RecoveryWorker",
    "start_embedded_postgres",
]

__all__ += [
    # Process-wide policies, hooks and settings
    "CLOCK_CONFIG_KEY",
    "DECIDER_KEY",
    "EVENT_ID_HEADER",
    "REQUESTER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "ApprovalEvent",
    "AuthRequest",
    "Authorize",
    "Clock",
    "Decider",
    "DecisionLinks",
    "DeliveryRetry",
    "Notifier",
    "NotifyConfig",
    "WebhookTarget",
    "default_authorize",
    "load_notify_config",
    "set_authorization",
    "set_notifier",
    "verify_signature",
]

__all__ += [
    # Errors
    "AlreadyDecided",
    "AmbiguousApproval",
    "AuditNotVerifiable",
    "CheckpointNotStored",
    "DecisionNotAllowed",
    "InterruptsError",
    "InvalidInput",
    "LinkRefused",
    "MissingExtra",
    "NoPendingApproval",
    "NotAuthorized",
    "NotParked",
    "ResumeNotUnderstood",
    "StaleApproval",
    "UnknownBatchItem",
]
