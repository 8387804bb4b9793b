"""The requests of the decision flows: state reads, resumes and the saver's storage.

Each is a frozen dataclass of its call's arguments, typed by its result
(:class:`~langgraph_durable.interrupts._driver.Req`), and nothing more: what a
request does is written once, in :mod:`._perform_async` (its sync twin
:mod:`._perform` is generated). A flow writes
``got = yield from GetDecisions(thread_id=t, keys=[k])``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.interrupts._driver import Flow, Req
from langgraph_durable.interrupts._store import DecisionItem

Decisions = dict[str, dict[str, Any]]


# -- the thread's state and its runs ----------------------------------------------------
@dataclass(frozen=True)
class GetState(Req[Any]):
    """The thread's state: the graph's ``StateSnapshot``, or the saver's pending interrupts."""

    config: dict[str, Any]


@dataclass(frozen=True)
class RecentStates(Req[list[Any]]):
    """The thread's latest ``limit`` states, newest first."""

    config: dict[str, Any]
    limit: int


@dataclass(frozen=True)
class Invoke(Req[Any]):
    """Run the graph on ``input`` (a resume), with LangGraph's ``durability`` if given."""

    input: Any
    config: dict[str, Any]
    durability: str | None = None


@dataclass(frozen=True)
class ThreadBusyNow(Req[bool]):
    """Whether a resume would be turned away now (a saver or run with ``multitask="reject"``)."""

    config: dict[str, Any]


@dataclass(frozen=True)
class RunAll(Req[list[Any]]):
    """Several flows at once (the resumes of a sweeper's page, a batch's items), in order."""

    flows: list[Flow[Any]]
    concurrency: int


# -- decisions and the audit trail --------------------------------------------------------
@dataclass(frozen=True)
class GetDecisions(Req[Decisions]):
    """The stored decisions of ``keys`` on the thread (the keys without one are absent)."""

    thread_id: str
    keys: Sequence[str]


@dataclass(frozen=True)
class CountDecisions(Req[int]):
    """How many of ``keys`` have a stored decision on the thread."""

    thread_id: str
    keys: Sequence[str]


@dataclass(frozen=True)
class RecordDecision(Req[dict[str, Any]]):
    """Compare-and-set ``decision`` (with its ``audit`` entry); the stored one."""

    thread_id: str
    key: str
    decision: dict[str, Any]
    audit: dict[str, Any] | None = None


@dataclass(frozen=True)
class RecordDecisions(Req[list[dict[str, Any]]]):
    """Compare-and-set several decisions together; the stored ones, in order."""

    items: Sequence[DecisionItem]


@dataclass(frozen=True)
class AppendAudit(Req[None]):
    """Append entries to the audit trail."""

    entries: Sequence[dict[str, Any]]


# -- the wait index and its claims --------------------------------------------------------
@dataclass(frozen=True)
class ListWaits(Req[list[WaitEntry]]):
    """Pending waits matching the filters, oldest deadline first."""

    kind: str | None = None
    approver: str | None = None
    thread_id: str | None = None
    limit: int | None = None


@dataclass(frozen=True)
class WaitCounts(Req[tuple[int, int, "datetime | None"]]):
    """How many waits are pending, how many overdue, and the oldest one's deadline."""

    now: datetime
    kinds: Sequence[str] | None = None


@dataclass(frozen=True)
class ClaimDueWaits(Req[list[WaitEntry]]):
    """Claim up to ``limit`` waits due at ``now`` for ``owner``, for ``lease``."""

    now: datetime
    owner: str
    lease: timedelta
    limit: int
    kinds: Sequence[str] | None = None


@dataclass(frozen=True)
class ReleaseWaitClaim(Req[None]):
    """Release ``owner``'s claim of a wait (``done``: the wait is resolved)."""

    thread_id: str
    interrupt_id: str
    owner: str
    done: bool = False
