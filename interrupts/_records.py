"""The decision record: what the store keeps and what a resumed node receives.

A record is a JSON-able dict, compare-and-set once per key in the
:class:`~langgraph_durable.checkpointers.DecisionStore`::

    {
      "v": 1,
      "decision_id": "…",          # unique per attempt: tells the CAS winner
      "type": "decision",          # | "escalate" | "batch_complete"
      "approval_id": "…",          # the interrupt id decided
      "approved": true,            # None for an escalation
      "by": "alice", "roles": [],  # who (the decision policy checks these)
      "at": "2026-…+00:00",
      "comment": null,
      "timed_out": false, "rule": null,   # the sweeper's timeout rule
      "level": 0,                  # escalation level decided
      "fingerprint": "sha256:…",   # of the request payload the decider saw
      "extra": {}                  # extensions (on_reject, audit ids, …)
    }

Escalations also carry ``to``, ``deadline`` and ``timeout_s``. Keys: an
approval's interrupt id; a batch item's ``f"{batch_id}/{item_key}"``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import WAIT_KEY, WaitEntry, wait_dict
from langgraph_durable.interrupts._shapes import unwrap_args

RECORD_VERSION = 1
SYSTEM = "system"


def fingerprint(payload: Any) -> str:
    """A stable fingerprint of a JSON-able payload (key order does not matter)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def item_key(batch_id: str, key: str) -> str:
    """The decision-store key of one batch item."""
    return f"{batch_id}/{key}"


def new_record(
    *,
    type: str,
    approval_id: str,
    by: str,
    at: datetime,
    approved: bool | None = None,
    comment: str | None = None,
    timed_out: bool = False,
    rule: str | None = None,
    level: int = 0,
    fingerprint: str | None = None,
    roles: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """A fresh decision record with its own ``decision_id``."""
    return {
        "v": RECORD_VERSION,
        "decision_id": secrets.token_hex(16),
        "type": type,
        "approval_id": approval_id,
        "approved": approved,
        "by": by,
        "roles": list(roles or []),
        "at": at.isoformat(),
        "comment": comment,
        "timed_out": timed_out,
        "rule": rule,
        "level": level,
        "fingerprint": fingerprint,
        "extra": dict(extra or {}),
        **more,
    }


def won(stored: dict[str, Any], mine: dict[str, Any]) -> bool:
    """Whether the CAS stored ``mine``."""
    return bool(stored.get("decision_id") == mine["decision_id"])


def age_at_least(record: dict[str, Any], now: datetime, lease: timedelta) -> bool:
    """Whether ``record`` was made at least ``lease`` before ``now``.

    A deferred decision (recorded with ``resume=False``) counts as old at once:
    its maker is not resuming the run, so a sweeper must not wait for them.
    """
    if record.get("deferred"):
        return True
    return datetime.fromisoformat(record["at"]) + lease <= now


def section(value: Any) -> dict[str, Any]:
    """The helper's own part of an interrupt value (``approval`` or ``batch``)."""
    value = wait_dict(value)
    if value is None:
        return {}
    marker = value.get(WAIT_KEY) or {}
    kind = marker.get("kind", "approval")
    got = value.get(kind)
    return got if isinstance(got, dict) else {}


def entry_kind(entry: WaitEntry) -> str:
    """``"approval"`` or ``"batch"``."""
    return entry.info.kind


def timeout_record(value: Any, approval_id: str, now: datetime) -> dict[str, Any]:
    """What the sweeper records when an approval's deadline passed."""
    sec = section(value)
    policy = sec.get("on_timeout") or {"action": "reject"}
    level = int(((wait_dict(value) or {}).get(WAIT_KEY) or {}).get("escalation_level", 0))
    action = policy.get("action", "reject")
    if action == "escalate":
        timeout = timedelta(seconds=float(policy["timeout_s"]))
        return new_record(
            type="escalate",
            approval_id=approval_id,
            by=SYSTEM,
            at=now,
            timed_out=True,
            rule="on_timeout=escalate",
            level=level + 1,
            fingerprint=sec.get("fingerprint"),
            to=list(policy.get("to") or []),
            deadline=(now + timeout).isoformat(),
            timeout_s=timeout.total_seconds(),
            then=policy.get("then") or {"action": "reject"},
        )
    return new_record(
        type="decision",
        approval_id=approval_id,
        by=SYSTEM,
        at=now,
        approved=action == "approve",
        timed_out=True,
        rule=f"on_timeout={action}",
        level=level,
        fingerprint=sec.get("fingerprint"),
    )


def decision_fields(answer: dict[str, Any], request: Any) -> dict[str, Any]:
    """The record fields of a normalized answer (edit: the edited arguments, fingerprinted)."""
    kind = answer["type"]
    out: dict[str, Any] = {"action": kind, "approved": kind in ("approve", "edit")}
    if kind in ("edit", "reject") and answer.get("args") is not None:
        # an edit runs these; a rejection keeps them as what the decider would accept
        edited = unwrap_args(request, answer["args"])
        out["edited"] = edited
        out["edited_fingerprint"] = fingerprint(edited)
    elif kind == "respond":
        out["response"] = answer["message"]
    message = answer.get("message") if kind == "reject" else None
    out["comment"] = message if message is not None else answer.get("comment")
    return out


def decision_reason(record: dict[str, Any], via: str) -> str:
    """The audit reason of a recorded decision: how it came, roles, an edit's fingerprints."""
    parts = [f"via {via}"]
    if record.get("roles"):
        parts.append(f"roles: {', '.join(record['roles'])}")
    if record.get("edited_fingerprint"):
        parts.append(f"edited: {record.get('fingerprint')} -> {record.get('edited_fingerprint')}")
    return "; ".join(parts)
