"""The deadline convention, and the protocols of the savers' fast paths.

The deadline convention
-----------------------
An interrupt raised by the helpers in :mod:`interrupts` carries a JSON-able
value (a ``dict``) with one reserved key, :data:`WAIT_KEY`, whose value says
what the thread is waiting for::

    {
        WAIT_KEY: {
            "kind": "approval",            # or "batch", "undo"
            "deadline": "2026-11-29T09:15:00+00:00",  # absolute UTC, ISO 8601, or None
            "approvers": ["ops"],          # routing labels / user ids, may be empty
            "escalation_level": 0,         # 0 for the first ask, +1 per escalation
        },
        ...                                # the helper's own fields
    }

The value may also be a list whose first element is such a dict: the legacy
Agent Inbox shape (a list of ``HumanInterrupt``), where the first element
carries the key beside its own fields.

A node's ``interrupt(value)`` reaches ``put_writes`` as a write to channel
``__interrupt__`` holding ``Interrupt(value=..., id=...)``. Our savers index
every such interrupt whose value carries :data:`WAIT_KEY` when ``put_writes``
stores it, keyed by ``(thread_id, interrupt id)``, and drop it from the index
when the thread moves past it (the next ``put`` on that thread and namespace)
or is deleted. Nothing else about user interrupt values is assumed.

This module is the one place the key and its shape are defined.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, runtime_checkable

WAIT_KEY = "__durable_wait__"
"""The reserved key of an interrupt value that marks a wait with a deadline."""

WAIT_KINDS = ("approval", "batch", "undo")


@dataclass(frozen=True)
class WaitInfo:
    """What a marked interrupt waits for.

    Attributes:
        kind: ``"approval"``, ``"batch"`` or ``"undo"``.
        deadline: Absolute UTC deadline, or ``None`` to wait forever.
        approvers: Who may answer (labels or user ids); empty means anyone.
        escalation_level: 0 for the first ask, one more per escalation.
    """

    kind: str
    deadline: datetime | None
    approvers: tuple[str, ...] = ()
    escalation_level: int = 0


def wait_marker(
    kind: str,
    deadline: datetime | None,
    approvers: Iterable[str] = (),
    escalation_level: int = 0,
) -> dict[str, Any]:
    """Build the JSON-able value stored under :data:`WAIT_KEY`.

    Raises:
        ValueError: unknown kind, or a naive deadline (it must be timezone-aware).
    """
    if kind not in WAIT_KINDS:
        raise ValueError(f"unknown wait kind {kind!r}; expected one of {WAIT_KINDS}")
    if deadline is not None and deadline.tzinfo is None:
        raise ValueError("deadline must be timezone-aware (UTC)")
    return {
        "kind": kind,
        "deadline": None if deadline is None else deadline.astimezone(timezone.utc).isoformat(),
        "approvers": [str(a) for a in approvers],
        "escalation_level": int(escalation_level),
    }


def wait_dict(value: Any) -> dict[str, Any] | None:
    """The dict of an interrupt value that carries :data:`WAIT_KEY`, or ``None``.

    ``value`` may be an ``Interrupt`` (its ``.value`` is read), the raw value, or
    a list whose first element is that dict (the legacy Agent Inbox shape).
    """
    value = getattr(value, "value", value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        value = value[0]
    if isinstance(value, dict) and WAIT_KEY in value:
        return value
    return None


def extract_wait(value: Any) -> WaitInfo | None:
    """Return the :class:`WaitInfo` an interrupt value carries, or ``None``.

    ``value`` may be an ``Interrupt`` (its ``.value`` is read) or the raw value.
    A value without the key, or with a malformed marker, is not a wait: the
    savers never fail a write because of a user's interrupt value.
    """
    value = wait_dict(value)
    if value is None:
        return None
    marker = value.get(WAIT_KEY)
    if not isinstance(marker, dict):
        return None
    kind = marker.get("kind")
    if kind not in WAIT_KINDS:
        return None
    raw_deadline = marker.get("deadline")
    deadline: datetime | None = None
    if raw_deadline is not None:
        try:
            deadline = datetime.fromisoformat(str(raw_deadline))
        except ValueError:
            return None
        if deadline.tzinfo is None:
            deadline = deadline.replace(tzinfo=timezone.utc)
    approvers = marker.get("approvers") or ()
    if not isinstance(approvers, (list, tuple)):
        return None
    level = marker.get("escalation_level", 0)
    return WaitInfo(
        kind=str(kind),
        deadline=deadline,
        approvers=tuple(str(a) for a in approvers),
        escalation_level=int(level) if isinstance(level, int) else 0,
    )


@dataclass(frozen=True)
class WaitEntry:
    """One indexed pending interrupt, as a saver's wait index returns it.

    Attributes:
        thread_id: The waiting thread.
        checkpoint_ns: Namespace of the task that raised the interrupt.
        checkpoint_id: The checkpoint the interrupted task ran from.
        interrupt_id: LangGraph's ``Interrupt.id``.
        info: The parsed marker.
        value: The whole interrupt value (the helper's request payload).
        created_at: When the saver indexed it (UTC).
        claimed_by: Owner of a live claim, if any.
    """

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    interrupt_id: str
    info: WaitInfo
    value: Any
    created_at: datetime | None = None
    claimed_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class WaitIndex(Protocol):
    """Indexed access to pending marked interrupts (implemented by our savers).

    ``interrupts`` uses it when the saver provides it and falls back to a scan
    through plain ``BaseCheckpointSaver`` calls otherwise.

    Index semantics the helpers rely on:

    * one entry per ``(thread_id, interrupt_id)``; a task that raises a new
      marked interrupt against the same checkpoint (LangGraph then replaces the
      task's ``__interrupt__`` write: an escalation or a re-ask inside one node
      does exactly that, with a new ``Interrupt.id``) replaces that task's
      earlier entries, in the same atomic unit as the write;
    * the next ``put`` on the thread and namespace drops the entries of older
      checkpoints; ``delete_thread`` and pruning drop them too.
    """

    def list_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> list[WaitEntry]:
        """Pending waits, oldest deadline first (``None`` deadlines last).

        ``approver`` keeps entries whose ``approvers`` contain it (entries with
        no approvers are open to anyone and match too).
        """
        ...


@runtime_checkable
class AsyncWaitIndex(Protocol):
    """Async twin of :class:`WaitIndex`."""

    async def alist_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> list[WaitEntry]:
        """See :meth:`WaitIndex.list_waits`."""
        ...


@runtime_checkable
class WaitClaims(Protocol):
    """Claims with leases over indexed waits, for the sweepers.

    A wait is *claimable* when nobody holds a live claim on it (claim time +
    lease > now), it is not marked done, and either its deadline is ``<= now``
    or a decision was recorded for it (key ``interrupt_id`` in the
    :class:`DecisionStore`) at least one lease ago: the process that recorded
    it died before resuming the thread, and a sweeper finishes the resume.
    """

    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Atomically claim up to ``limit`` claimable waits for ``owner``.

        Each returned entry is claimed by ``owner`` until ``now + lease``; an
        expired claim of another owner is taken over. Concurrent callers get
        disjoint entries.
        """
        ...

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Drop ``owner``'s claim; ``done=True`` marks the wait resolved for good."""
        ...

    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """``(waiting, overdue, oldest overdue deadline)`` over all threads.

        *Overdue* waits are past their deadline and not yet resolved.
        """
        ...


@runtime_checkable
class AsyncWaitClaims(Protocol):
    """Async twin of :class:`WaitClaims`."""

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """See :meth:`WaitClaims.claim_due_waits`."""
        ...

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """See :meth:`WaitClaims.release_wait_claim`."""
        ...

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """See :meth:`WaitClaims.wait_counts`."""
        ...


CLAIMABLE_AT_ONCE = datetime(1970, 1, 1, tzinfo=timezone.utc)
"""The claim time of a deferred decision: any sweeper may take it at once."""


def decision_claim_time(decision: dict[str, Any]) -> datetime:
    """When the decider's claim on resuming a decided wait counts from.

    A decider who resumes the run itself holds the claim from the decision's
    time (a sweeper takes over one lease later, should it die). A decision
    recorded with ``"deferred": true`` (``approve(..., resume=False)``) has
    nobody resuming it, so its claim is taken as abandoned from the start and
    the next sweep or worker pass resumes the run.
    """
    if decision.get("deferred"):
        return CLAIMABLE_AT_ONCE
    return datetime.fromisoformat(decision["at"])


@runtime_checkable
class DecisionStore(Protocol):
    """Compare-and-set record of decisions, one per ``(thread_id, key)``.

    Keys: an approval's ``interrupt_id``; a batch item's
    ``f"{interrupt_id}/{item_key}"``. A decision is a JSON-able dict with at
    least ``decision_id`` (unique per attempt), ``at`` (ISO UTC) and ``by``.

    A saver that also implements :class:`~langgraph_durable.checkpointers.AuditLog` takes
    ``audit=`` (an audit entry) on :meth:`record_decision` and appends it in
    the same atomic unit as the decision, only when that call stored it.
    """

    def record_decision(
        self, *, thread_id: str, key: str, decision: dict[str, Any]
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists; return the stored one.

        The caller won the race iff the returned ``decision_id`` is its own.
        """
        ...

    def get_decisions(self, *, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        ...

    def count_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision (without reading them)."""
        ...


@runtime_checkable
class AsyncDecisionStore(Protocol):
    """Async twin of :class:`DecisionStore`."""

    async def arecord_decision(
        self, *, thread_id: str, key: str, decision: dict[str, Any]
    ) -> dict[str, Any]:
        """See :meth:`DecisionStore.record_decision`."""
        ...

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """See :meth:`DecisionStore.get_decisions`."""
        ...

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """See :meth:`DecisionStore.count_decisions`."""
        ...
