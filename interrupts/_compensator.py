"""The compensation node: one undo per superstep, so each is checkpointed.

Policy (which step next, what the report says, what a decision does) is pure
functions over the saga log; :class:`Compensator` holds the settings, and the
attempt loop is written once, async, in :mod:`._compensator_undo_async` (the
sync module generated from it).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, interrupt

from langgraph_durable.interrupts._activity import accepts_key
from langgraph_durable.interrupts._audit import FAILED, UNDO, node_audit
from langgraph_durable.interrupts._compensator_undo import undo_step
from langgraph_durable.interrupts._compensator_undo_async import aundo_step
from langgraph_durable.interrupts._pregel import TaskContext, current_task
from langgraph_durable.interrupts._records import SYSTEM, fingerprint
from langgraph_durable.interrupts._registry import lookup_undo
from langgraph_durable.interrupts._report import ErrorInfo, StepInfo, UndoReport, parse_decision
from langgraph_durable.interrupts._saga_state import (
    ABORTED,
    COMPENSATE_NODE,
    COMPENSATED,
    COMPENSATING,
    SAGA_KEY,
    error_info,
    saga_of,
)

PENDING = ("committed", "failed")


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Backoff:
    """Delay before undo attempt ``n + 1`` after ``n`` failures.

    Attributes:
        initial: Seconds before the second attempt.
        factor: Multiplier per further failure.
        maximum: Cap in seconds.
    """

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` failed attempts (``failures >= 1``)."""
        return float(min(self.maximum, self.initial * self.factor ** (failures - 1)))


def undo_key(thread_id: str | None, step_id: str) -> str:
    """The idempotency key of a step's undo: the same for every attempt, every process."""
    raw = json.dumps([thread_id or "", "undo", step_id], ensure_ascii=False)
    return "lgd-undo-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:40]


def next_step(saga: dict[str, Any]) -> dict[str, Any] | None:
    """The step to undo next: the last completed one not yet undone or skipped."""
    steps: list[dict[str, Any]] = saga["steps"]
    pending = [s for s in steps if s["status"] in PENDING]
    return pending[-1] if pending else None


def _info(step: dict[str, Any]) -> StepInfo:
    return StepInfo.model_validate(
        {k: step.get(k) for k in StepInfo.model_fields if step.get(k) is not None}
    )


def build_report(
    saga: dict[str, Any],
    step: dict[str, Any],
    error: dict[str, Any],
    attempts: int,
    thread_id: str | None,
    now: datetime,
) -> UndoReport:
    """The report for ``step`` whose undo failed ``attempts`` times with ``error``."""
    failed = {**step, "status": "failed", "attempts": attempts, "error": error}
    steps = [failed if s["id"] == step["id"] else s for s in saga["steps"]]
    failure = saga.get("failure")
    return UndoReport(
        thread_id=thread_id,
        reason=saga.get("reason"),
        failure=ErrorInfo.model_validate(failure) if failure else None,
        failed_step=_info(failed),
        undo_error=ErrorInfo.model_validate(error),
        attempts=attempts,
        committed=[_info(s) for s in steps],
        compensated=[_info(s) for s in steps if s["status"] == "compensated"],
        skipped=[_info(s) for s in steps if s["status"] == "skipped"],
        remaining=[_info(s) for s in reversed(steps) if s["status"] in PENDING],
        created_at=now,
    )


def undo_audit(step: dict[str, Any], command: Command[Any], at: datetime) -> dict[str, Any]:
    """The audit entry of an undo that finished (compensated) or gave up (failed).

    The step's arguments are fingerprinted, never logged; a failure names the
    exception type only (its message may carry payload data).
    """
    update = command.update if isinstance(command.update, dict) else {}
    fields = next(o["fields"] for o in update[SAGA_KEY] if o.get("op") == "step")
    status = fields["status"]
    attempts = int(fields.get("attempts") or 0)
    if status == "compensated":
        outcome, reason = "compensated", f"undo {step['undo']} done ({attempts} attempt(s) in all)"
    else:
        err = (fields.get("error") or {}).get("type", "error")
        outcome = FAILED
        reason = f"undo {step['undo']} failed after {attempts} attempt(s): {err}"
    return {
        "at": at,
        "item": str(step["id"]),
        "actor": SYSTEM,
        "action": UNDO,
        "fingerprint": fingerprint({"args": step.get("args"), "kwargs": step.get("kwargs")}),
        "outcome": outcome,
        "reason": reason,
        "dedupe_key": f"undo:{step['id']}:{outcome}:{attempts}",
    }


def _step_op(step_id: str, **fields: Any) -> dict[str, Any]:
    return {"op": "step", "id": step_id, "fields": fields}


def _again(ops: list[dict[str, Any]]) -> Command[Any]:
    # loop back to this node: the next undo runs in the next superstep, after
    # this one's result is checkpointed
    return Command(update={SAGA_KEY: ops}, goto=COMPENSATE_NODE)


def decide(saga: dict[str, Any], step: dict[str, Any], answer: Any, now: datetime) -> Any:
    """Apply a human's answer to the pending report of ``step``."""
    action, by, note = parse_decision(answer)
    ops: list[dict[str, Any]] = [
        {
            "op": "decide",
            "fields": {
                "decision": action,
                "decided_by": by,
                "note": note,
                "decided_at": now.isoformat(),
            },
        }
    ]
    if action == "retry":
        ops.append(_step_op(step["id"], status="committed"))
        return _again(ops)
    if action == "skip":
        ops.append(_step_op(step["id"], status="skipped", undone_at=None))
        return _again(ops)
    ops.append({"op": "finish", "status": ABORTED})
    return {SAGA_KEY: ops}


def _ask(saga: dict[str, Any]) -> Any:
    """Pause on the pending report; re-ask (new interrupt) until the answer is valid."""
    report = UndoReport.from_interrupt(saga["reports"][-1])
    value = report.to_interrupt_value()
    while True:
        answer = interrupt(value)
        try:
            parse_decision(answer)
            return answer
        except ValueError as exc:
            value = {**value, "invalid_answer": str(exc)}


class Compensator:
    """The body of the compensation node (see ``add_compensation``)."""

    def __init__(
        self,
        *,
        max_attempts: int,
        backoff: Backoff,
        sleep: Callable[[float], None],
        asleep: Callable[[float], Awaitable[None]],
        clock: Callable[[], datetime],
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.sleep = sleep
        self.asleep = asleep
        self.clock = clock

    # --- shared policy -----------------------------------------------------

    def _begin(self, state: Any, config: RunnableConfig) -> tuple[Any, Any]:
        """``(done_result, None)`` when nothing to run, else ``(None, plan)``."""
        saga = saga_of(state)
        if saga["status"] != COMPENSATING:
            return None, None
        step = next_step(saga)
        if step is None:
            return {SAGA_KEY: {"op": "finish", "status": COMPENSATED}}, None
        if step["status"] == "failed":
            answer = _ask(saga)
            now = self.clock()
            action, by, _note = parse_decision(answer)
            # the note is free text: the saga log keeps it, the audit does not
            node_audit(
                config,
                at=now,
                item=str(step["id"]),
                actor=by or "unknown",
                action=action,
                outcome="recorded",
                reason=f"answer to the failed undo {step['undo']}",
                dedupe_key=f"undo:{step['id']}:{step.get('attempts', 0)}",
            )
            return decide(saga, step, answer, now), None
        ctx = current_task(config)
        if ctx is None:
            raise RuntimeError("the compensation node must run inside a graph")
        try:
            fn = lookup_undo(step["undo"])
        except LookupError as exc:
            # not retryable: this process cannot run the undo at all, ask a human
            return self._exhausted(saga, step, exc, 0, ctx), None
        plan = (saga, step, ctx, fn, undo_key(ctx.thread_id, step["id"]), accepts_key(fn))
        return None, plan

    def _done(self, step: dict[str, Any], attempts: int) -> Command[Any]:
        return _again(
            [
                _step_op(
                    step["id"],
                    status="compensated",
                    attempts=step.get("attempts", 0) + attempts,
                    error=None,
                    undone_at=self.clock().isoformat(),
                )
            ]
        )

    def _exhausted(
        self,
        saga: dict[str, Any],
        step: dict[str, Any],
        exc: Exception,
        attempts: int,
        ctx: TaskContext,
    ) -> Command[Any]:
        total = step.get("attempts", 0) + attempts
        err = error_info(exc, node=step["undo"])
        report = build_report(saga, step, err, total, ctx.thread_id, self.clock())
        return _again(
            [
                _step_op(step["id"], status="failed", attempts=total, error=err),
                {"op": "report", "report": report.model_dump(mode="json")},
            ]
        )

    def _audit(self, plan: Any, done: Command[Any]) -> dict[str, Any]:
        """The audit entry of the undo of ``plan`` that ended with ``done``."""
        return undo_audit(plan[1], done, self.clock())

    # --- the node's bodies (the attempt loop: _compensator_undo_async.py) ----

    def run(self, state: Any, config: RunnableConfig) -> Any:
        """Sync body: undo one step (with retries), or ask a human, or finish."""
        return undo_step(self, state, config)

    async def arun(self, state: Any, config: RunnableConfig) -> Any:
        """Async body: as :meth:`run`, for graphs run with ``ainvoke``/``astream``."""
        return await aundo_step(self, state, config)


def default_sleep(seconds: float) -> None:
    """``time.sleep`` (a name so tests can see what is injected)."""
    time.sleep(seconds)


async def default_asleep(seconds: float) -> None:
    """``asyncio.sleep``."""
    await asyncio.sleep(seconds)
