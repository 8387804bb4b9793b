"""The audit entries of decision attempts: refused, recorded, and the sweeper's rules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph_durable.checkpointers import audit_entry
from langgraph_durable.interrupts._authz import NotAuthorized


def refusal_entry(
    thread_id: str,
    approval_id: str,
    *,
    by: str,
    action: str,
    at: Any,
    fingerprint: str | None,
    outcome: str,
    reason: str,
    item: str | None = None,
) -> dict[str, Any]:
    """The audit entry of a refused decision attempt."""
    return audit_entry(
        at=at,
        thread_id=thread_id,
        approval_id=approval_id,
        item=item,
        actor=by,
        action=action,
        fingerprint=fingerprint,
        outcome=outcome,
        reason=reason,
    )


def already_reason(decision: dict[str, Any] | None) -> str:
    """Why an attempt lost: who decided first, and when."""
    d = decision or {}
    if d.get("type") == "amend":
        what = "reassigned" if d.get("operator_action") == "reassign" else "deadline moved"
        return f"{what} by {d.get('by')!s} at {d.get('at')!s}: it is being asked again"
    how = " (timeout rule)" if d.get("timed_out") else ""
    return f"already decided by {d.get('by')!s} at {d.get('at')!s}{how}"


def decided_entry(
    thread_id: str,
    record: dict[str, Any],
    *,
    action: str,
    reason: str | None,
    item: str | None = None,
) -> dict[str, Any]:
    """The audit entry stored with a decision record (same atomic unit)."""
    return audit_entry(
        at=datetime.fromisoformat(record["at"]),
        thread_id=thread_id,
        approval_id=record["approval_id"],
        item=item,
        actor=record["by"],
        action=action,
        fingerprint=record.get("fingerprint"),
        outcome="recorded",
        reason=reason,
    )


def timeout_entry(
    thread_id: str, record: dict[str, Any], deadline: datetime | None, item: str | None = None
) -> dict[str, Any]:
    """The audit entry of a timeout rule the sweeper applied (actor ``system``)."""
    if record["type"] == "escalate":
        action = "escalate"
        to = ", ".join(record.get("to") or []) or "anyone"
        reason = f"{record['rule']}: asked {to} at level {record['level']}"
    else:
        action = "approve" if record.get("approved") else "reject"
        reason = str(record.get("rule"))
    if deadline is not None:
        reason += f"; deadline {deadline.isoformat()} passed"
    return decided_entry(thread_id, record, action=action, reason=reason, item=item)


def roles_reason(roles: Sequence[str]) -> str | None:
    """The reason of an allowed human decision: the roles the decider used."""
    return f"roles: {', '.join(roles)}" if roles else None


def refusal_reason(refused: Exception) -> str:
    if isinstance(refused, NotAuthorized):
        return f"{refused.reason}; allowed: {', '.join(refused.approvers) or 'anyone'}"
    return str(refused)


def api_reason(record: dict[str, Any]) -> str | None:
    """The reason of a decision made through the API: roles used, an edit's fingerprints."""
    parts = []
    if record.get("roles"):
        parts.append(f"roles: {', '.join(record['roles'])}")
    if record.get("edited_fingerprint"):
        parts.append(f"edited: {record.get('fingerprint')} -> {record.get('edited_fingerprint')}")
    return "; ".join(parts) or None
