"""Exceptions raised by the interrupt helpers."""

from __future__ import annotations

from datetime import datetime
from typing import Any


class InterruptsError(Exception):
    """Root of every error raised on purpose by :mod:`interrupts`."""


class InvalidInput(InterruptsError, ValueError):
    """An argument a helper cannot honour or store; nothing was asked or recorded.

    Raised before any I/O: a refused decision leaves the approval waiting, a
    refused request leaves the node failed before it asked anyone.

    Attributes:
        parameter: The offending parameter (``decisions``, ``comment``, ``timeout``...).
        reason: What is wrong with it.
        item: The batch item key, when one item's value was refused.
    """

    def __init__(self, *, parameter: str, reason: str, item: str | None = None) -> None:
        self.parameter = parameter
        self.reason = reason
        self.item = item
        where = f" (item {item!r})" if item is not None else ""
        super().__init__(f"invalid {parameter}{where}: {reason}")


class MissingExtra(InterruptsError, ImportError):
    """A feature needs an optional extra of ``langgraph-durable`` that is not installed.

    Attributes:
        feature: What needs it (``the embedded PostgreSQL``, ``the approval service``).
        extra: The extra to install (``embedded``, ``service``).
        missing: The module that could not be imported.
        instead: Another way out, if there is one (appended to the message).
    """

    def __init__(self, *, feature: str, extra: str, missing: str, instead: str = "") -> None:
        self.feature = feature
        self.extra = extra
        self.missing = missing
        self.instead = instead
        other = f", or {instead}" if instead else ""
        super().__init__(
            f"{feature} needs the {extra} extra ({missing} is missing): "
            f"pip install 'langgraph-durable[{extra}]'{other}",
            name=missing,
        )


class NoPendingApproval(InterruptsError, LookupError):
    """The thread has no pending approval (with that id).

    Attributes:
        thread_id: The thread that was looked at.
        approval_id: The approval id asked for, if any.
    """

    def __init__(self, *, thread_id: str, approval_id: str | None = None) -> None:
        self.thread_id = thread_id
        self.approval_id = approval_id
        what = f"approval {approval_id!r}" if approval_id else "approval"
        super().__init__(f"thread {thread_id!r} has no pending {what}")


class AmbiguousApproval(InterruptsError, ValueError):
    """Several approvals are pending on the thread: pass ``approval_id=``.

    Attributes:
        thread_id: The thread.
        approval_ids: The ids of the pending approvals.
    """

    def __init__(self, *, thread_id: str, approval_ids: list[str]) -> None:
        self.thread_id = thread_id
        self.approval_ids = approval_ids
        super().__init__(
            f"thread {thread_id!r} has {len(approval_ids)} pending approvals; "
            f"pass approval_id= one of {approval_ids}"
        )


class AlreadyDecided(InterruptsError):
    """Somebody (or the timeout) decided this approval first.

    Attributes:
        thread_id: The thread.
        approval_id: The approval (interrupt id); for a batch, the batch id.
        by: Who decided (``"system"`` for a timeout).
        at: When the winning decision was recorded (UTC).
        approved: What was decided (``None`` for an escalation).
        timed_out: ``True`` when the timeout won.
        decision: The whole stored decision record.
        item: The batch item key, for a batch item.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        approval_id: str,
        decision: dict[str, Any],
        item: str | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.approval_id = approval_id
        self.decision = decision
        self.item = item
        self.by: str = str(decision.get("by", ""))
        self.at: datetime | None = (
            datetime.fromisoformat(decision["at"]) if decision.get("at") else None
        )
        self.approved: bool | None = decision.get("approved")
        self.timed_out: bool = bool(decision.get("timed_out", False))
        what = f"item {item!r} of batch" if item is not None else "approval"
        how = "by timeout" if self.timed_out else f"by {self.by!r}"
        done = "decided"
        if decision.get("type") == "amend":
            moved = decision.get("operator_action") == "reassign"
            done = "reassigned" if moved else "changed (deadline moved)"
            how += ", and is being asked again"
        super().__init__(
            f"{what} {approval_id!r} on thread {thread_id!r} was already {done} {how} "
            f"at {decision.get('at')}"
        )


class StaleApproval(InterruptsError):
    """The request changed after it was decided (``on_stale="raise"``).

    Attributes:
        approval_id: The approval whose decision went stale.
        decided_request: The payload the decider saw.
        current_request: The payload the node computes now.
        decision: The stale decision record.
        item: The batch item key, for a batch item.
        thread_id: The thread, when known.
    """

    def __init__(
        self,
        *,
        approval_id: str,
        decided_request: Any,
        current_request: Any,
        decision: dict[str, Any],
        item: str | None = None,
        thread_id: str | None = None,
    ) -> None:
        self.approval_id = approval_id
        self.decided_request = decided_request
        self.current_request = current_request
        self.decision = decision
        self.item = item
        self.thread_id = thread_id
        what = (
            f"item {item!r} of batch {approval_id!r}"
            if item is not None
            else f"approval {approval_id!r}"
        )
        where = f" on thread {thread_id!r}" if thread_id is not None else ""
        super().__init__(
            f"{what}{where} was decided for {decided_request!r} "
            f"but the request is now {current_request!r}"
        )


class UnknownBatchItem(InterruptsError, KeyError):
    """A ``decide`` named keys that are not in the batch; nothing was recorded.

    Attributes:
        keys: The unknown keys.
        batch_id: The batch (interrupt id).
        thread_id: The thread, when known.
    """

    def __init__(self, *, keys: list[str], batch_id: str, thread_id: str | None = None) -> None:
        self.keys = keys
        self.batch_id = batch_id
        self.thread_id = thread_id
        where = f" of thread {thread_id!r}" if thread_id is not None else ""
        super().__init__(f"keys {keys} are not in batch {batch_id!r}{where}; nothing was recorded")

    def __str__(self) -> str:
        return str(self.args[0])


class NotParked(InterruptsError, LookupError):
    """``unpark_thread`` was asked to unpark a thread that is not parked; nothing changed.

    Attributes:
        thread_id: The thread.
        state: Its state now (``running``, ``waiting``, ``finished``, ``unknown``, ...).
    """

    def __init__(self, *, thread_id: str, state: str) -> None:
        self.thread_id = thread_id
        self.state = state
        super().__init__(f"thread {thread_id!r} is not parked (it is {state}); nothing changed")


class AuditNotVerifiable(InterruptsError, TypeError):
    """``verify_audit`` was given a saver that does not chain its audit entries.

    Our Postgres and Redis savers chain every entry; other savers (the
    in-process log of ``InMemorySaver`` and the like) keep no chain to check.

    Attributes:
        saver_type: The saver's class name.
    """

    def __init__(self, *, saver_type: str) -> None:
        self.saver_type = saver_type
        super().__init__(
            f"cannot verify the audit trail of {saver_type}: it keeps no hash chain "
            "(the savers of langgraph_durable.checkpointers.postgres and .redis do)"
        )


class ResumeNotUnderstood(InterruptsError, ValueError):
    """A ``Command(resume=...)`` reached an approval in a shape it does not read.

    Nothing was recorded (the attempt is audited) and the approval still waits.

    Attributes:
        value: The resume value as given.
        reason: What is wrong with it.
        accepted: The shapes an approval reads.
        thread_id: The thread, once known.
        approval_id: The approval (interrupt id), once known.
    """

    def __init__(
        self,
        *,
        value: Any,
        reason: str,
        accepted: list[str],
        thread_id: str | None = None,
        approval_id: str | None = None,
    ) -> None:
        self.value = value
        self.reason = reason
        self.accepted = accepted
        self.thread_id = thread_id
        self.approval_id = approval_id
        shapes = "; ".join(accepted)
        where = f" of thread {thread_id!r}" if thread_id is not None else ""
        what = f"approval {approval_id!r}{where}" if approval_id is not None else "an approval"
        super().__init__(
            f"Command(resume={value!r}) cannot answer {what}: {reason}. Accepted: {shapes}"
        )


class DecisionNotAllowed(InterruptsError, ValueError):
    """The request does not allow this decision (its ``allowed_decisions``); nothing recorded.

    Attributes:
        decision: The decision refused (``edit``, ``respond``...).
        allowed: What the request allows.
        thread_id: The thread.
        approval_id: The approval (interrupt id; a batch's id).
        item: The batch item key, for a batch item.
    """

    def __init__(
        self,
        *,
        decision: str,
        allowed: list[str],
        thread_id: str,
        approval_id: str,
        item: str | None = None,
    ) -> None:
        self.decision = decision
        self.allowed = allowed
        self.thread_id = thread_id
        self.approval_id = approval_id
        self.item = item
        what = f"item {item!r} of batch" if item is not None else "approval"
        super().__init__(
            f"{what} {approval_id!r} of thread {thread_id!r} does not allow {decision!r}; "
            f"allowed: {', '.join(allowed)}"
        )
