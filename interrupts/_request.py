"""``request_approval``: the node side of an approval.

The node raises a marked interrupt and LangGraph re-runs the node on every
resume, replaying earlier answers in order. So the function is a small state
machine over the answers it receives: an escalation answer re-asks the next
level (a new interrupt, so a new id and deadline); a decision for a payload that
has since changed is stale and re-asks (or raises); any other decision returns.
The calls a node makes, ``request_approval`` / ``arequest_approval``, are in
:mod:`._request_calls_async` (and its generated sync module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from langgraph.config import get_config

from langgraph_durable.checkpointers import wait_marker
from langgraph_durable.interrupts._audit import node_audit
from langgraph_durable.interrupts._authz import requested_by_of_run, thread_of_run
from langgraph_durable.interrupts._clock import Clock, clock_from_config, now_of
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._errors import InvalidInput, StaleApproval
from langgraph_durable.interrupts._inputs import (
    check_forbid,
    check_names,
    check_optional_text,
    check_timeout,
    requester_check,
)
from langgraph_durable.interrupts._models import Decision, Escalation, OnTimeout, policy_to_json
from langgraph_durable.interrupts._pregel import saga_wired
from langgraph_durable.interrupts._records import SYSTEM, fingerprint
from langgraph_durable.interrupts._resume import Ask, node_env
from langgraph_durable.interrupts._saga_state import Compensate
from langgraph_durable.interrupts._shapes import (
    UiShape,
    action_args,
    action_name,
    check_allowed,
    check_ui,
    shaped_value,
)

OnStale = Literal["reask", "raise"]
OnReject = Literal["return", "compensate"]


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _decision(
    answer: dict[str, Any], escalations: list[Escalation], history: list[dict[str, Any]], level: int
) -> Decision:
    return Decision(
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
        type=str(answer.get("action") or ""),
        edited=answer.get("edited"),
        response=answer.get("response"),
        via=str(answer.get("via") or ("sweeper" if answer.get("timed_out") else "api")),
    )


@dataclass(frozen=True)
class AskOptions:
    """What an approval and a batch ask with alike, checked by :func:`checked_options`."""

    forbidden: list[str]
    asked: list[str]
    on_stale: str
    allowed: list[str]
    action: str
    description: str | None
    ui: UiShape
    requested_by: str | None
    now: datetime


@dataclass(frozen=True)
class _Ask(AskOptions):
    """A checked request: everything the node-side flow needs, no I/O done."""

    request: Any
    wait: timedelta | None
    policy: dict[str, Any]
    on_reject: str


def _value(ask: _Ask, state: dict[str, Any]) -> Any:
    fp = fingerprint(ask.request)
    sec = {
        "request": ask.request,
        "fingerprint": fp,
        "requested_at": state["requested_at"].isoformat(),
        "on_timeout": state["policy"],
        "timeout_s": state["timeout_s"],
        "round": state["round"],
        "escalations": [e.model_dump(mode="json") for e in state["escalations"]],
        "forbid": ask.forbidden,
        "requested_by": ask.requested_by,
        "allowed_decisions": ask.allowed,
        "action": ask.action,
        "description": ask.description,
    }
    marker = wait_marker("approval", state["deadline"], state["asked"], state["level"])
    actions = [(ask.action, action_args(ask.request), ask.description, ask.allowed)]
    return shaped_value(marker, "approval", sec, actions, ask.ui)


def approval_flow(ask: _Ask, thread_id: str | None, helper: str) -> Flow[Decision]:
    """The node side of an approval, written once: ask, read the answer, re-ask or return."""
    from langgraph_durable.interrupts._resume import (
        approval_answer_flow,
        is_record,
        verify_record_flow,
    )

    fp = fingerprint(ask.request)
    timeout_s = None if ask.wait is None else ask.wait.total_seconds()
    state: dict[str, Any] = {
        "level": 0,
        "asked": ask.asked,
        "policy": ask.policy,
        "timeout_s": timeout_s,
        "requested_at": ask.now,
        "deadline": None if ask.wait is None else ask.now + ask.wait,
        "escalations": [],
        "round": 0,
    }
    history: list[dict[str, Any]] = []
    while True:
        value = _value(ask, state)
        answer = yield from Ask(value=value, audit=_ask_audit(ask, state, fp))
        if is_record(answer):
            yield from verify_record_flow(answer, thread_id)
        else:
            answer = yield from approval_answer_flow(answer, value, at=now_of(None), helper=helper)
        if answer["type"] == "escalate":
            _escalated(state, answer)
            continue
        if answer["type"] == "amend":
            _amended(state, answer)
            continue
        if answer.get("fingerprint") not in (None, fp):
            stale_decision(ask.on_stale, answer, answer, ask.request, fp)
            history.append(answer)
            _next_round(state, answer)
            continue
        decision = _decision(answer, state["escalations"], history, state["level"])
        if decision.type == "cancel" and saga_wired():
            raise Compensate(_rejection_reason(decision))
        if ask.on_reject == "compensate" and decision.type in ("reject", "cancel"):
            raise Compensate(_rejection_reason(decision))
        return decision


def _ask_audit(ask: _Ask, state: dict[str, Any], fp: str) -> dict[str, Any]:
    """What the audit entry of this round's request says."""
    return {
        "at": state["requested_at"],
        "actor": ask.requested_by,
        "fingerprint": fp,
        "approvers": state["asked"],
        "deadline": state["deadline"],
        "level": state["level"],
        "refuse": requester_check(ask.forbidden, ask.requested_by),
    }


def _next_round(state: dict[str, Any], answer: dict[str, Any]) -> None:
    """A stale answer was set aside: ask again from its time, with the same timeout."""
    state["round"] += 1
    state["requested_at"] = datetime.fromisoformat(answer["at"])
    ts = state["timeout_s"]
    state["deadline"] = None if ts is None else state["requested_at"] + timedelta(seconds=ts)


def _escalated(state: dict[str, Any], answer: dict[str, Any]) -> None:
    at = datetime.fromisoformat(answer["at"])
    deadline = _parse(answer.get("deadline"))
    state["escalations"].append(
        Escalation(
            level=int(answer["level"]),
            at=at,
            from_approvers=state["asked"],
            to=list(answer.get("to") or []),
            deadline=deadline,
        )
    )
    state["deadline"] = deadline
    state["level"] = int(answer["level"])
    state["asked"] = list(answer.get("to") or [])
    state["policy"] = answer.get("then") or {"action": "reject"}
    state["timeout_s"] = answer.get("timeout_s")
    state["requested_at"] = at


def _amended(state: dict[str, Any], answer: dict[str, Any]) -> None:
    """An operator moved the deadline or reassigned the approvers: ask again, same level."""
    if "deadline" in answer:
        state["deadline"] = _parse(answer.get("deadline"))
    if answer.get("to") is not None:
        state["asked"] = list(answer["to"])
    state["round"] += 1


def stale_decision(
    on_stale: str,
    answer: dict[str, Any],
    record: dict[str, Any],
    current_request: Any,
    fp: str,
    item: str | None = None,
) -> None:
    """Audit a decision ``record`` made for a payload that has changed since (now ``fp``).

    ``answer`` is the resume that carried it: the record itself for an approval,
    the batch's answer for an ``item``. With ``on_stale="raise"`` it then raises
    :class:`~langgraph_durable.interrupts.StaleApproval`; else the node asks again.
    """
    then = "asked again" if on_stale == "reask" else "StaleApproval raised"
    node_audit(
        at=datetime.fromisoformat(answer["at"]),
        approval_id=str(answer.get("approval_id")),
        item=item,
        actor=SYSTEM,
        action="reask",
        fingerprint=record.get("fingerprint"),
        outcome="stale",
        reason=f"payload changed since it was decided (now {fp}); {then}",
        dedupe_key=f"stale:{record.get('decision_id')}",
    )
    if on_stale == "raise":
        raise StaleApproval(
            approval_id=str(answer.get("approval_id")),
            decided_request=record.get("request"),
            current_request=current_request,
            decision=record,
            item=item,
            thread_id=thread_of_run(),
        )


def check_choice(value: Any, parameter: str, choices: tuple[str, str]) -> None:
    """Refuse (``InvalidInput``) a ``value`` that is neither of ``choices``."""
    if value not in choices:
        first, second = choices
        raise InvalidInput(
            parameter=parameter, reason=f'expected "{first}" or "{second}", got {value!r}'
        )


def checked_options(
    *,
    on_stale: str,
    approvers: str | Iterable[str],
    clock: Clock | None,
    forbid: str | Iterable[str],
    allowed_decisions: Sequence[str],
    action: str | None,
    description: str | None,
    ui: UiShape,
    name_action: Callable[[str | None], str],
) -> dict[str, Any]:
    """The :class:`AskOptions` fields, checked in order (``InvalidInput`` names a bad one).

    ``name_action`` turns the checked ``action`` (or ``None``) into the action's name.
    """
    return {
        "forbidden": check_forbid(forbid),
        "asked": check_names(approvers, "approvers"),
        "on_stale": on_stale,
        "allowed": check_allowed(allowed_decisions),
        "action": name_action(check_optional_text(action, "action")),
        "description": check_optional_text(description, "description"),
        "ui": check_ui(ui),
        "requested_by": check_optional_text(requested_by_of_run(), "requested_by"),
        "now": now_of(clock or clock_from_config(get_config())),
    }


def checked_ask(
    request: Any,
    *,
    timeout: timedelta | float | None,
    on_timeout: OnTimeout,
    on_stale: OnStale,
    on_reject: OnReject,
    **shared: Any,
) -> _Ask:
    """The request and its options, checked (``InvalidInput`` names a bad one).

    ``shared``: the options an approval shares with a batch (:func:`checked_options`).
    """
    check_choice(on_reject, "on_reject", ("return", "compensate"))
    check_choice(on_stale, "on_stale", ("reask", "raise"))
    wait = check_timeout(timeout)
    policy = policy_to_json(on_timeout)
    options = checked_options(
        on_stale=on_stale, name_action=lambda checked: action_name(request, checked), **shared
    )
    return _Ask(request=request, wait=wait, policy=policy, on_reject=on_reject, **options)


def node_env_for(helper: str) -> Env:
    """The running node's environment; ``InvalidInput`` outside a node with a saver."""
    env = node_env()
    if env is None:
        raise InvalidInput(
            parameter=helper, reason="call it inside a node of a graph compiled with a saver"
        )
    return env


def _rejection_reason(decision: Decision) -> str:
    who = "timeout" if decision.timed_out else (decision.by or "an approver")
    verb = "cancelled" if decision.type == "cancel" else "rejected"
    reason = f"approval {verb} by {who}"
    return f"{reason}: {decision.comment}" if decision.comment else reason
