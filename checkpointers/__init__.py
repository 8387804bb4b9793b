"""LangGraph checkpoint savers for PostgreSQL and Redis.

The savers live in :mod:`langgraph_durable.checkpointers.postgres` and
:mod:`langgraph_durable.checkpointers.redis`;
importing this package imports neither driver.
"""

from langgraph_durable.checkpointers._activities import ActivityRecord, ActivityStore
from langgraph_durable.checkpointers._audit import (
    AUDIT_FIELDS,
    AsyncAuditLog,
    AsyncVerifiableAudit,
    AuditLog,
    DeferredAudit,
    VerifiableAudit,
    audit_entry,
)
from langgraph_durable.checkpointers._audit_chain import AuditBreak, AuditVerification
from langgraph_durable.checkpointers._delta_policy import DeltaPolicy
from langgraph_durable.checkpointers._errors import (
    CheckpointerError,
    CorruptCheckpointError,
    InvalidConfigError,
    LayoutVersionError,
    MissingGrantError,
    PoolTimeoutError,
    StorageRefusedError,
    StorageUnavailableError,
    ThreadBusy,
    UnreadableValueError,
    UnstorableValueError,
)
from langgraph_durable.checkpointers._features import STORE_ATTRIBUTES, feature
from langgraph_durable.checkpointers._leases import (
    AsyncLeaseStore,
    LeaseCounts,
    LeaseRecord,
    LeaseSettings,
    LeaseStore,
)
from langgraph_durable.checkpointers._multitask import MULTITASK_KEY, MULTITASK_TIMEOUT_KEY
from langgraph_durable.checkpointers._otel import SCOPE as TELEMETRY_SCOPE
from langgraph_durable.checkpointers._otel import configure_telemetry
from langgraph_durable.checkpointers._outbox import (
    EVENT_KINDS,
    AsyncOutbox,
    Outbox,
    OutboxCounts,
    OutboxEvent,
    event_id,
)
from langgraph_durable.checkpointers._puts_in_flight import CheckpointPuts, PutFailed
from langgraph_durable.checkpointers._serde import default_serde
from langgraph_durable.checkpointers._waits import (
    WAIT_KEY,
    AsyncDecisionStore,
    AsyncWaitClaims,
    AsyncWaitIndex,
    DecisionStore,
    WaitClaims,
    WaitEntry,
    WaitIndex,
    WaitInfo,
    decision_claim_time,
    extract_wait,
    wait_dict,
    wait_marker,
)

__all__ = [
    "AUDIT_FIELDS",
    "EVENT_KINDS",
    "MULTITASK_KEY",
    "MULTITASK_TIMEOUT_KEY",
    "STORE_ATTRIBUTES",
    "TELEMETRY_SCOPE",
    "WAIT_KEY",
    "ActivityRecord",
    "ActivityStore",
    "AsyncAuditLog",
    "AsyncDecisionStore",
    "AsyncLeaseStore",
    "AsyncOutbox",
    "AsyncVerifiableAudit",
    "AsyncWaitClaims",
    "AsyncWaitIndex",
    "AuditBreak",
    "AuditLog",
    "AuditVerification",
    "CheckpointPuts",
    "CheckpointerError",
    "CorruptCheckpointError",
    "DecisionStore",
    "DeferredAudit",
    "DeltaPolicy",
    "InvalidConfigError",
    "LayoutVersionError",
    "LeaseCounts",
    "LeaseRecord",
    "LeaseSettings",
    "LeaseStore",
    "MissingGrantError",
    "Outbox",
    "OutboxCounts",
    "OutboxEvent",
    "PoolTimeoutError",
    "PutFailed",
    "StorageRefusedError",
    "StorageUnavailableError",
    "ThreadBusy",
    "UnreadableValueError",
    "UnstorableValueError",
    "VerifiableAudit",
    "WaitClaims",
    "WaitEntry",
    "WaitIndex",
    "WaitInfo",
    "audit_entry",
    "configure_telemetry",
    "decision_claim_time",
    "default_serde",
    "event_id",
    "extract_wait",
    "feature",
    "wait_dict",
    "wait_marker",
]
