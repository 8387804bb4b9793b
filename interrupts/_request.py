"""``request_approval``: the node side of an approval.

The node raises a marked interrupt and LangGraph re-runs the node on every
resume, replaying earlier answers in order. So the function is a small state
machine over the answers it receives: an escalation answer re-asks the next
level (a new interrupt, so a new id and deadline); a decision for a payload that
has since changed is stale and re-asks (or raises); any other decision returns.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal

from langgraph.config import get_config

from langgraph_durable.checkpointers import WAIT_KEY, wait_marker
from langgraph_durable.interrupts._audit import ask, node_audit
from langgraph_durable.interrupts._authz import requested_by_of_run, thread_of_run
from langgraph_durable.interrupts._clock import Clock, clock_from_config, now_of
from langgraph_durable.interrupts._errors import InvalidInput, StaleApproval
from langgraph_durable.interrupts._inputs import (
    check_forbid,
    check_names,
    check_optional_text,
    check_timeout,
    requester_check,
)
from langgraph_durable.interrupts._models import Decision, Escalation, OnTimeout, policy_to_json
from langgraph_durable.interrupts._records import SYSTEM, fingerprint
from langgraph_durable.interrupts._saga_state import Compensate

OnStale = Literal["reask", "raise"]
OnReject = Literal["return", "compensate"]


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _check_answer(answer: Any) -> dict[str, Any]:
    if not isinstance(answer, dict) or "type" not in answer or "decision_id" not in answer:
        raise TypeError(
            "an approval must be resumed through langgraph_durable.approve()/reject() or the "
            f"sweeper, not Command(resume={answer!r})"
        )
    return answer


def request_approval(
    request: Any,
    *,
    timeout: timedelta | float | None = None,
    on_timeout: OnTimeout = "reject",
    approvers: str | Iterable[str] = (),
    on_stale: OnStale = "reask",
    clock: Clock | None = None,
    forbid: str | Iterable[str] = (),
    on_reject: OnReject = "return",
) -> Decision:
    """Pause the run until a human approves or rejects ``request``; call inside a node.

    Args:
        request: JSON-able payload shown to the approver (and fingerprinted).
        timeout: How long to wait before ``on_timeout`` applies: a ``timedelta`` or a
            number of seconds, positive and at most 100 years; ``None`` waits forever.
        on_timeout: ``"reject"``, ``"approve"`` or ``Escalate``; applied
            by :class:`~langgraph_durable.interrupts.ApprovalSweeper` once the deadline passes.
        approvers: Routing labels or user ids asked (the inbox filters on them); a
            string is one approver.
        on_stale: When the node re-runs and computes a different ``request`` than the one
            decided: ``"reask"`` (default) asks again with the new payload, ``"raise"``
            raises :class:`~langgraph_durable.interrupts.StaleApproval`.
        forbid: Separation of duties: ``["requester"]`` refuses decisions by whoever
            started the run (``config["configurable"]["requested_by"]``, which the run
            must then set).
        clock: Time source; defaults to the clock the run was given
            (``approve(..., clock=)``, ``ApprovalSweeper(clock=)``), else real UTC time.
        on_reject: ``"return"`` (default) returns the rejection; ``"compensate"``
            raises :class:`~langgraph_durable.interrupts.Compensate`, so a graph wired with
            :func:`~langgraph_durable.interrupts.add_compensation` undoes its committed steps (the
            reason names who rejected, or the timeout, and the comment).

    Returns:
        The :class:`~langgraph_durable.interrupts.Decision`.

    Raises:
        InvalidInput: an argument is wrong (names it; nothing is asked), or
            ``forbid=["requester"]`` on a run that did not say who requested it.
        StaleApproval: with ``on_stale="raise"``, when the decided payload changed.
        Compensate: with ``on_reject="compensate"``, when the request was rejected.
    """
    if on_reject not in ("return", "compensate"):
        raise InvalidInput(
            parameter="on_reject", reason=f'expected "return" or "compensate", got {on_reject!r}'
        )
    if on_stale not in ("reask", "raise"):
        raise InvalidInput(
            parameter="on_stale", reason=f'expected "reask" or "raise", got {on_stale!r}'
        )
    wait = check_timeout(timeout)
    policy = policy_to_json(on_timeout)
    forbidden = check_forbid(forbid)
    asked = check_names(approvers, "approvers")
    requested_by = check_optional_text(requested_by_of_run(), "requested_by")
    now = now_of(clock or clock_from_config(get_config()))
    fp = fingerprint(request)
    level = 0
    timeout_s = None if wait is None else wait.total_seconds()
    requested_at = now
    deadline = None if wait is None else now + wait
    escalations: list[Escalation] = []
    history: list[dict[str, Any]] = []
    round_ = 0
    while True:
        value = {
            WAIT_KEY: wait_marker("approval", deadline, asked, level),
            "approval": {
                "request": request,
                "fingerprint": fp,
                "requested_at": requested_at.isoformat(),
                "on_timeout": policy,
                "timeout_s": timeout_s,
                "round": round_,
                "escalations": [e.model_dump(mode="json") for e in escalations],
                "forbid": forbidden,
                "requested_by": requested_by,
            },
        }
        answer = _check_answer(
            ask(
                value,
                at=requested_at,
                actor=requested_by,
                fingerprint=fp,
                approvers=asked,
                deadline=deadline,
                level=level,
                refuse=requester_check(forbidden, requested_by),
            )
        )
        if answer["type"] == "escalate":
            at = datetime.fromisoformat(answer["at"])
            deadline = _parse(answer.get("deadline"))
            escalations.append(
                Escalation(
                    level=int(answer["level"]),
                    at=at,
                    from_approvers=asked,
                    to=list(answer.get("to") or []),
                    deadline=deadline,
                )
            )
            level = int(answer["level"])
            asked = list(answer.get("to") or [])
            policy = answer.get("then") or {"action": "reject"}
            timeout_s = answer.get("timeout_s")
            requested_at = at
            continue
        if answer.get("fingerprint") not in (None, fp):
            then = "asked again" if on_stale == "reask" else "StaleApproval raised"
            node_audit(
                at=datetime.fromisoformat(answer["at"]),
                approval_id=str(answer.get("approval_id")),
                actor=SYSTEM,
                action="reask",
                fingerprint=answer.get("fingerprint"),
                outcome="stale",
                reason=f"payload changed since it was decided (now {fp}); {then}",
                dedupe_key=f"stale:{answer.get('decision_id')}",
            )
            if on_stale == "raise":
                raise StaleApproval(
                    approval_id=str(answer.get("approval_id")),
                    decided_request=answer.get("request"),
                    current_request=request,
                    decision=answer,
                    thread_id=thread_of_run(),
                )
            history.append(answer)
            round_ += 1
            requested_at = datetime.fromisoformat(answer["at"])
            deadline = None if timeout_s is None else requested_at + timedelta(seconds=timeout_s)
            continue
        decision = Decision(
            approved=bool(answer.get("approved")),
            by=str(answer.get("by", "")),
            at=datetime.fromisoformat(answer["at"]),
            comment=answer.get("comment"),
            timed_out=bool(answer.get("timed_out", False)),
            escalations=escalations,
            approval_id=answer.get("approval_id"),
            level=int(answer.get("level", level)),
            roles=list(answer.get("roles") or []),
            rule=answer.get("rule"),
            history=history,
            extra=dict(answer.get("extra") or {}),
        )
        if on_reject == "compensate" and not decision.approved:
            raise Compensate(_rejection_reason(decision))
        return decision


def _rejection_reason(decision: Decision) -> str:
    who = "timeout" if decision.timed_out else (decision.by or "an approver")
    reason = f"approval rejected by {who}"
    return f"{reason}: {decision.comment}" if decision.comment else reason
