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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import wait_marker
from langgraph_durable.interrupts._batch_models import BatchDecision, ItemDecision
from langgraph_durable.interrupts._batch_resume import batch_answer_flow
from langgraph_durable.interrupts._clock import now_of
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._errors import (
    InvalidInput,
)
from langgraph_durable.interrupts._inputs import (
    check_text,
    check_timeout,
    requester_check,
)
from langgraph_durable.interrupts._records import (
    fingerprint,
    section,
)
from langgraph_durable.interrupts._request import (
    AskOptions,
    check_choice,
    checked_options,
    node_env_for,
    stale_decision,
)
from langgraph_durable.interrupts._resume import (
    Ask,
    is_record,
    verify_record_flow,
)
from langgraph_durable.interrupts._shapes import (
    action_args,
    shaped_value,
)


@dataclass(frozen=True)
class _BatchAsk(AskOptions):
    by_key: dict[str, Any]
    fps: dict[str, str]
    timeout_s: float | None
    on_timeout: str


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
            stale_decision(ask.on_stale, answer, rec, ask.by_key[k], ask.fps[k], item=k)
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
    on_stale: str,
    **shared: Any,
) -> _BatchAsk:
    """The items and options of a batch, checked (``InvalidInput`` names a bad one).

    ``shared``: the options a batch shares with an approval (:func:`._request.checked_options`).
    """
    check_choice(on_timeout, "on_timeout", ("reject", "approve"))
    check_choice(on_stale, "on_stale", ("reask", "raise"))
    by_key: dict[str, Any] = {}
    for item in items:
        k = check_text(str(key(item)), "key")
        if k in by_key:
            raise InvalidInput(parameter="key", reason="two items have the same key", item=k)
        by_key[k] = item
    wait = check_timeout(timeout)
    fps = {k: fingerprint(v) for k, v in by_key.items()}
    options = checked_options(
        on_stale=on_stale, name_action=lambda checked: checked or "approve_item", **shared
    )
    return _BatchAsk(
        by_key=by_key,
        fps=fps,
        timeout_s=None if wait is None else wait.total_seconds(),
        on_timeout=on_timeout,
        **options,
    )


def batch_node_env() -> Env:
    """The running node's environment; ``InvalidInput`` outside a node with a saver."""
    return node_env_for("request_batch_approval")
