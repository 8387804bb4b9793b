"""Multi-step lease operations as I/O-free flows, and the typed requests they yield.

A flow yields requests (:data:`Request`: typed records such as
:class:`GetLease` or :class:`TakeOverLease`) and receives each one's result;
:func:`langgraph_durable.checkpointers._lease_driver_async.adrive` performs them
on an async target and its generated sync twin
(:mod:`langgraph_durable.checkpointers._lease_driver`) on a sync one. So the
rules below exist once for both.

The rules are about a run that finds its thread leased by another owner (the
*rival*), which after a crash is usually the killed run: its lease lives on
until it expires, while a fresh process may already resume the thread. The
new run takes the lease over at once when the rival is provably dead
(:func:`~langgraph_durable.checkpointers._leases.owner_is_dead`: same host, its process is
gone) or missed a heartbeat
(:func:`~langgraph_durable.checkpointers._leases.heartbeat_is_stale`); otherwise it runs on
unleased, and its heartbeat tries again. If it ends first (finished or paused),
it releases the rival's lease once the rival is proved dead, so the thread
does not look running (and is not recovered) after it has finished.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from langgraph_durable.checkpointers._leases import (
    PARKED,
    RUNNING,
    LeaseRecord,
    heartbeat_is_stale,
    owner_is_dead,
)
from langgraph_durable.checkpointers._run_book import end_shown_by

R = TypeVar("R")
Step = tuple[str, dict[str, Any]]
"""A lease statement sent with a run's write (``saver.leases.run_with_lease``): its store
method's name and keyword arguments."""


# -- requests to a lease store (LeaseStore / AsyncLeaseStore) --


@dataclass(frozen=True, slots=True, kw_only=True)
class AcquireLease:
    """The store's ``acquire_lease``: a :class:`LeaseRecord`, or ``None`` if held."""

    thread_id: str
    owner: str
    now: datetime
    ttl: timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class GetLease:
    """The store's ``get_lease``: the thread's :class:`LeaseRecord`, or ``None``."""

    thread_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeOverLease:
    """The store's ``take_over_lease`` (compare-and-set on ``token`` and ``renewed_at``)."""

    thread_id: str
    token: int
    renewed_at: datetime | None
    owner: str
    now: datetime
    ttl: timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseLease:
    """The store's ``release_lease``: ``True`` if ``owner`` held it."""

    thread_id: str
    owner: str
    now: datetime
    reason: str
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnparkLease:
    """The store's ``unpark_lease``: ``True`` if the thread was parked."""

    thread_id: str
    retry_at: datetime | None


# -- requests to a saver --


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadLatest:
    """The saver's ``get_tuple`` of the thread's latest root checkpoint."""

    thread_id: str


# -- requests of the run-lease drivers (their targets: _run_lease_core, _multitask) --


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWithLease:
    """The saver's write ``op`` with its lease statements: ``(result, pre's, post's)``."""

    operation: str
    op: Any
    pre: Step | None
    post: Step | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """One try at a run's lease (the target orders it with the thread's lease statements)."""

    thread_id: str
    runtime: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    """Wait between two looks at the book: ``True`` once the saver is closing."""

    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseEnded:
    """Release the leases of runs found over: ``(thread_id, reason, error)`` each."""

    ended: list[tuple[str, str, str | None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sleep:
    """Wait (the driver itself does: no target involved)."""

    seconds: float


LeaseRequest = AcquireLease | GetLease | TakeOverLease | ReleaseLease | UnparkLease
Request = LeaseRequest | ReadLatest | RunWithLease | Attempt | Pause | ReleaseEnded | Sleep
Flow = Generator[Request, Any, R]
"""A flow returning ``R``: yields requests, is sent each one's result."""


def rival_is_gone(rival: LeaseRecord, now: datetime) -> bool:
    """Whether a running lease's holder is dead, late on its heartbeat, or expired."""
    return owner_is_dead(rival.owner) or heartbeat_is_stale(rival, now) or rival.is_orphaned(now)


def start(
    thread_id: str, owner: str, now: datetime, ttl: timedelta, tried: bool = False
) -> Flow[tuple[LeaseRecord | None, LeaseRecord | None]]:
    """Take the lease for a new run: ``(record, None)`` on success, else ``(None, rival)``.

    One round trip when the thread is free (the common case); a contested start
    also reads the rival's record and, if the rival is gone, takes it over with
    compare-and-set on its token and last renewal. ``tried``: the caller's own
    ``acquire_lease`` (sent along with the run's first write) already failed.
    """
    rival: LeaseRecord | None = None
    for attempt in range(2):  # once more if the rival released between our two calls
        if not (tried and attempt == 0):
            record = yield AcquireLease(thread_id=thread_id, owner=owner, now=now, ttl=ttl)
            if record is not None:
                return record, None
        rival = yield GetLease(thread_id=thread_id)
        if rival is not None and rival.state == RUNNING:
            break
    if rival is None or rival.state != RUNNING:
        return None, rival
    if rival_is_gone(rival, now):
        taken = yield TakeOverLease(
            thread_id=thread_id,
            token=rival.token,
            renewed_at=rival.renewed_at,
            owner=owner,
            now=now,
            ttl=ttl,
        )
        if taken is not None:
            return taken, None
        rival = yield GetLease(thread_id=thread_id)
    return None, rival


def clear(
    thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta, reason: str
) -> Flow[bool]:
    """Release the rival's lease (at ``token``) for a contested run that ended cleanly.

    Returns:
        ``True`` when settled (released by us, or the lease moved on: the
        rival ended, or someone newer holds it); ``False`` while the rival
        may still be alive (ask again at the next heartbeat).
    """
    rival = yield GetLease(thread_id=thread_id)
    if rival is None or rival.state != RUNNING or rival.token != token:
        return True
    if not rival_is_gone(rival, now):
        return False
    taken = yield TakeOverLease(
        thread_id=thread_id,
        token=rival.token,
        renewed_at=rival.renewed_at,
        owner=owner,
        now=now,
        ttl=ttl,
    )
    if taken is None:
        return False
    yield ReleaseLease(thread_id=thread_id, owner=owner, now=now, reason=reason)
    return True


def close_if_ended(
    record: LeaseRecord, owner: str, now: datetime, ttl: timedelta
) -> Flow[tuple[str | None, bool]]:
    """For a recovery worker: release an expired lease whose thread already ended.

    A run can die after its thread finished or paused (after the last write,
    before the release), or be killed while another run finished the thread.
    Such a thread must not be resumed. Driven on a ``LeaseTarget`` (the
    saver's ``get_tuple`` reads the latest checkpoint).

    Returns:
        ``(end, closed)``: how the latest checkpoint says the thread ended
        (``None``: unfinished, resume it) and whether this call released it.
    """
    latest = yield ReadLatest(thread_id=record.thread_id)
    end = end_shown_by(latest)
    if end is None:
        return None, False
    return end, (yield from close_as(record, owner, now, ttl, end))


def close_as(
    record: LeaseRecord, owner: str, now: datetime, ttl: timedelta, end: str
) -> Flow[bool]:
    """Release an expired lease (at ``record``'s token) as ended with ``end``.

    Returns:
        Whether this call released it (``False``: another worker or run moved it on).
    """
    taken = yield TakeOverLease(
        thread_id=record.thread_id,
        token=record.token,
        renewed_at=record.renewed_at,
        owner=owner,
        now=now,
        ttl=ttl,
    )
    if taken is None:
        return False
    yield ReleaseLease(thread_id=record.thread_id, owner=owner, now=now, reason=end)
    return True


def unpark(thread_id: str, now: datetime) -> Flow[tuple[str | None, LeaseRecord | None]]:
    """Unpark a parked thread: ``("queued" | "released", record)``, or ``(None, record)``.

    ``queued``: it becomes an orphan whose lease expired at ``now`` (the next
    recovery pass resumes it); ``released``: its latest checkpoint shows it
    finished or waiting, so nothing is left to run. ``None``: it was not parked
    (``record`` is what there is). Driven on a ``LeaseTarget``.
    """
    record = yield GetLease(thread_id=thread_id)
    if record is None or record.state != PARKED:
        return None, record
    latest = yield ReadLatest(thread_id=thread_id)
    retry_at = None if end_shown_by(latest) is not None else now
    if not (yield UnparkLease(thread_id=thread_id, retry_at=retry_at)):
        return None, (yield GetLease(thread_id=thread_id))
    return ("released" if retry_at is None else "queued"), record
