"""``request_batch_approval``: the node side of a batch, and a batch answered by a resume.

The node asks for every open item in one interrupt whose value carries one
HITL action request per item (so Agent Inbox and Studio list them). A
``Command(resume=...)`` gives one decision per item, in order (a plain
``True``/``False`` decides them all alike); it is authorized once for the
batch, each item compare-and-set like ``decide()``'s, then the batch's
completion. Items someone else decided first keep their decision; a resume
that completes nothing (the batch was completed first) raises ``AlreadyDecided``.
The calls a node makes, ``request_batch_approval`` / ``arequest_batch_approval``,
are in :mod:`._batch_request_calls_async` (and its generated sync module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph.config import get_config

from langgraph_durable.checkpointers import wait_marker
from langgraph_durable.interrupts._audit import node_audit
from langgraph_durable.interrupts._authz import (
    requested_by_of_run,
    thread_of_run,
)
from langgraph_durable.interrupts._batch_models import BatchDecision, ItemDecision
from langgraph_durable.interrupts._batch_resume import batch_answer_flow
from langgraph_durable.interrupts._clock import Clock, clock_from_config, now_of
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._errors import (
    InvalidInput,
    StaleApproval,
)
from langgraph_durable.interrupts._inputs import (
    check_forbid,
    check_names,
    check_optional_text,
    check_text,
    check_timeout,
    requester_check,
)
from langgraph_durable.interrupts._records import (
    SYSTEM,
    fingerprint,
    section,
)
from langgraph_durable.interrupts._resume import (
    Ask,
    is_record,
    node_env,
    verify_record_flow,
)
from langgraph_durable.interrupts._shapes import (
    UiShape,
    action_args,
    check_allowed,
    check_ui,
    shaped_value,
)


@dataclass(frozen=True)
class _BatchAsk:
    by_key: dict[str, Any]
    fps: dict[str, str]
    timeout_s: float | None
    on_timeout: str
    on_stale: str
    forbidden: list[str]
    asked: list[str]
    allowed: list[str]
    action: str
    description: str | None
    ui: UiShape
    requested_by: str | None
    now: datetime


def _value(ask: _BatchAsk, open_keys: list[str], requested_at: datetime, round_: int) -> Any:
    ts = ask.timeout_s
    deadline = None if ts is None else requested_at + timedelta(seconds=ts)
    sec = {
        "items": [{"key": k, "item": ask.by_key[k], "fingerprint": ask.fps[k]} for k in open_keys],
        "requested_at": requested_at.isoformat(),
        "on_timeout": {"action": ask.on_timeout},
        "timeout_s": ts,
        "round": round_,
        "forbid": ask.forbidden,
        "requested_by": ask.requested_by,
        "allowed_decisions": ask.allowed,
        "action": ask.action,
        "description": ask.description,
    }
    actions = [
        (ask.action, {"key": k, **action_args(ask.by_key[k])}, ask.description, ask.allowed)
        for k in open_keys
    ]
    return shaped_value(wait_marker("batch", deadline, ask.asked, 0), "batch", sec, actions, ask.ui)


def batch_flow(ask: _BatchAsk, thread_id: str | None, helper: str) -> Flow[BatchDecision]:
    """The node side of a batch, written once: ask the open items until all are decided."""
    decided: dict[str, dict[str, Any]] = {}
    history: dict[str, list[dict[str, Any]]] = {}
    open_keys = list(ask.by_key)
    requested_at, round_ = ask.now, 0
    while open_keys:
        value = _value(ask, open_keys, requested_at, round_)
        sec = section(value)
        ts = ask.timeout_s
        audit = {
            "at": requested_at,
            "actor": ask.requested_by,
            "fingerprint": fingerprint([i["fingerprint"] for i in sec["items"]]),
            "approvers": ask.asked,
            "deadline": None if ts is None else requested_at + timedelta(seconds=ts),
            "level": 0,
            "refuse": requester_check(ask.forbidden, ask.requested_by),
        }
        answer = yield from Ask(value=value, audit=audit)
        if is_record(answer):
            yield from verify_record_flow(answer, thread_id)
        else:
            answer = yield from batch_answer_flow(answer, value, at=now_of(None), helper=helper)
        if answer.get("type") != "batch_complete":
            raise TypeError("a batch is answered by decide(), a resume, or the sweeper")
        open_keys = _sort(ask, answer, open_keys, decided, history)
        requested_at = datetime.fromisoformat(answer["at"])
        round_ += 1
    return _result(ask, decided, history)


def _sort(
    ask: _BatchAsk,
    answer: dict[str, Any],
    open_keys: list[str],
    decided: dict[str, dict[str, Any]],
    history: dict[str, list[dict[str, Any]]],
) -> list[str]:
    """File each open item's decision; the keys to ask again (stale or missing)."""
    stale = []
    for k in open_keys:
        rec = (answer.get("decisions") or {}).get(k)
        if rec is None:
            stale.append(k)
        elif rec.get("fingerprint") not in (None, ask.fps[k]):
            then = "asked again" if ask.on_stale == "reask" else "StaleApproval raised"
            node_audit(
                at=datetime.fromisoformat(answer["at"]),
                approval_id=str(answer.get("approval_id")),
                item=k,
                actor=SYSTEM,
                action="reask",
                fingerprint=rec.get("fingerprint"),
                outcome="stale",
                reason=f"payload changed since it was decided (now {ask.fps[k]}); {then}",
                dedupe_key=f"stale:{rec.get('decision_id')}",
            )
            if ask.on_stale == "raise":
                raise StaleApproval(
                    approval_id=str(answer.get("approval_id")),
                    decided_request=rec.get("request"),
                    current_request=ask.by_key[k],
                    decision=rec,
                    item=k,
                    thread_id=thread_of_run(),
                )
            history.setdefault(k, []).append(rec)
            stale.append(k)
        else:
            decided[k] = rec
    return stale


def _result(
    ask: _BatchAsk, decided: dict[str, dict[str, Any]], history: dict[str, list[dict[str, Any]]]
) -> BatchDecision:
    result = BatchDecision()
    for k, item in ask.by_key.items():
        rec = decided[k]
        d = ItemDecision(
            key=k,
            approved=bool(rec.get("approved")),
            by=str(rec.get("by", "")),
            at=datetime.fromisoformat(rec["at"]),
            comment=rec.get("comment"),
            timed_out=bool(rec.get("timed_out")),
            history=history.get(k, []),
            type=str(rec.get("action") or ""),
            edited=rec.get("edited"),
            response=rec.get("response"),
            via=str(rec.get("via") or ("sweeper" if rec.get("timed_out") else "api")),
        )
        result.decisions[k] = d
        if d.approved:
            result.approved.append(d.edited if d.type == "edit" else item)
        else:
            result.rejected.append(item)
        if d.timed_out:
            result.timed_out.append(k)
    return result


# -- what the node calls check and run in ----------------------------------------------


def checked_batch_ask(
    items: Sequence[Any],
    key: Callable[[Any], Any],
    *,
    timeout: timedelta | float | None,
    on_timeout: str,
    approvers: str | Iterable[str],
    on_stale: str,
    clock: Clock | None,
    forbid: str | Iterable[str],
    allowed_decisions: Sequence[str],
    action: str | None,
    description: str | None,
    ui: UiShape,
) -> _BatchAsk:
    """The items and options of a batch, checked (``InvalidInput`` names a bad one)."""
    if on_timeout not in ("reject", "approve"):
        raise InvalidInput(
            parameter="on_timeout", reason=f'expected "reject" or "approve", got {on_timeout!r}'
        )
    if on_stale not in ("reask", "raise"):
        raise InvalidInput(
            parameter="on_stale", reason=f'expected "reask" or "raise", got {on_stale!r}'
        )
    by_key: dict[str, Any] = {}
    for item in items:
        k = check_text(str(key(item)), "key")
        if k in by_key:
            raise InvalidInput(parameter="key", reason="two items have the same key", item=k)
        by_key[k] = item
    wait = check_timeout(timeout)
    return _BatchAsk(
        by_key=by_key,
        fps={k: fingerprint(v) for k, v in by_key.items()},
        timeout_s=None if wait is None else wait.total_seconds(),
        on_timeout=on_timeout,
        on_stale=on_stale,
        forbidden=check_forbid(forbid),
        asked=check_names(approvers, "approvers"),
        allowed=check_allowed(allowed_decisions),
        action=check_optional_text(action, "action") or "approve_item",
        description=check_optional_text(description, "description"),
        ui=check_ui(ui),
        requested_by=check_optional_text(requested_by_of_run(), "requested_by"),
        now=now_of(clock or clock_from_config(get_config())),
    )


def batch_node_env() -> Env:
    """The running node's environment; ``InvalidInput`` outside a node with a saver."""
    env = node_env()
    if env is None:
        raise InvalidInput(
            parameter="request_batch_approval",
            reason="call it inside a node of a graph compiled with a saver",
        )
    return env
