"""Run leases: the record of which process is running a thread, and the store protocol.

While a graph runs a thread through one of our savers, the saver holds a
*lease* on the thread: an owner id and an expiry, renewed by a heartbeat. A
lease that expires while its record still says ``running`` means the process
running the thread died: the thread is *orphaned*, and a recovery worker
(:class:`langgraph_durable.interrupts.RecoveryWorker`) claims it with compare-and-set and resumes
it from its last checkpoint.

One record per thread, in one of three states:

``running``
    A run holds (or held, if expired) the lease. ``expires_at <= now`` means
    orphaned.
``released``
    No run is active: the last one finished, paused at an interrupt, or raised.
``parked``
    A recovery worker gave up after ``max_recoveries`` consecutive recoveries
    that all died: a poison thread, left for an operator.

Every time is passed in by the caller (``now``), so workers and tests can use
an injected clock. Expiry is therefore judged by the clocks of the hosts
involved: keep the lease much longer than their clock skew.

The protocols below are what :mod:`interrupts` uses; the Postgres and Redis
savers implement both (``langgraph_durable.checkpointers.postgres._leases``,
``langgraph_durable.checkpointers.redis._leases``).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

RUNNING = "running"
RELEASED = "released"
PARKED = "parked"
LEASE_STATES = (RUNNING, RELEASED, PARKED)

# Why a run ended (``LeaseRecord.reason``). "finished" and "interrupted" are
# clean ends: they reset the count of consecutive recoveries.
ENDED_FINISHED = "finished"
ENDED_INTERRUPTED = "interrupted"
ENDED_ERROR = "error"
ENDED_GONE = "ended"
CLEAN_ENDS = (ENDED_FINISHED, ENDED_INTERRUPTED)

RECOVERED_KEY = "durable_recovered"
"""Checkpoint metadata key: ``True`` on checkpoints written by a recovered run."""

RECOVERIES_KEY = "durable_recoveries"
"""Checkpoint metadata key: how many times the thread has been recovered in total."""

MAX_ERROR_CHARS = 2000
"""Stored error texts are cut to this length (a record, not a log)."""


@dataclass(frozen=True)
class LeaseSettings:
    """How long a run lease lasts and how often it is renewed.

    Attributes:
        lease: How long a lease lives without renewal. A run whose process dies
            is noticed this long after its last heartbeat.
        heartbeat: How often the background heartbeat renews held leases.
        max_idle: If set, a run that made no progress (no checkpoint write and no
            :func:`langgraph_durable.interrupts.heartbeat` call) for this long stops being renewed,
            so a hung run is treated as dead. ``None`` (default): a run is kept
            alive as long as its process runs it, however long a node takes.
    """

    lease: timedelta = timedelta(seconds=30)
    heartbeat: timedelta = timedelta(seconds=10)
    max_idle: timedelta | None = None

    def __post_init__(self) -> None:
        if self.lease <= timedelta(0) or self.heartbeat <= timedelta(0):
            raise ValueError("lease and heartbeat must be positive")
        if self.heartbeat * 2 > self.lease:
            # one missed heartbeat must not already cost the lease
            raise ValueError("heartbeat must be at most half the lease")
        if self.max_idle is not None and self.max_idle <= timedelta(0):
            raise ValueError("max_idle must be positive")


def new_owner_id(kind: str = "run") -> str:
    """A lease owner id unique to this process and object: ``host:pid:kind:random``."""
    # secrets, not uuid.uuid4: applications and their tests patch uuid4 to get
    # deterministic ids, and a saver's calls would take ids from their sequence
    return f"{socket.gethostname()}:{os.getpid()}:{kind}:{secrets.token_hex(5)}"


# Owner ids handed out in this process that are still in use (see owner_is_dead).
_live_owners: weakref.WeakValueDictionary[str, object] = weakref.WeakValueDictionary()
_live_lock = threading.Lock()


def register_owner(owner: str, holder: object) -> None:
    """Record that ``owner`` is in use in this process for as long as ``holder`` lives."""
    with _live_lock:
        _live_owners[owner] = holder


def owner_is_dead(owner: str | None) -> bool:
    """Whether the process of lease owner ``owner`` is provably gone.

    Only owners on this host can be proved dead: their pid no longer exists (or
    is a zombie), or it is this process and no live object here uses the id (a
    restarted container can reuse a pid). Owners on other hosts, and anything
    in doubt, count as alive: the caller then falls back to
    :func:`heartbeat_is_stale` or the lease's expiry.
    """
    if not owner:
        return False
    parts = owner.rsplit(":", 3)
    if len(parts) != 4 or parts[0] != socket.gethostname():
        return False
    try:
        pid = int(parts[1])
    except ValueError:
        return False
    if pid <= 0:
        return False
    if pid == os.getpid():
        with _live_lock:
            return owner not in _live_owners
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # e.g. EPERM: it exists, under another user
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    # "pid (comm) S ...": the state follows the last ')' (comm may hold ')')
    tail = stat.rsplit(b")", 1)[-1].split()
    return bool(tail) and tail[0] in (b"Z", b"X")


def heartbeat_is_stale(record: LeaseRecord, now: datetime) -> bool:
    """Whether a running lease's holder missed a heartbeat (so it is most likely dead).

    A live holder renews at least every half lease (:class:`LeaseSettings`
    refuses a longer heartbeat); one that has not renewed for two thirds of its
    lease is late by a sixth of it. The lease length is read from the record,
    so this holds whatever settings the holder runs with.
    """
    if record.state != RUNNING or record.renewed_at is None or record.expires_at is None:
        return False
    lease = record.expires_at - record.renewed_at
    return now - record.renewed_at >= lease * 2 / 3


def clip_error(error: BaseException | str | None) -> str | None:
    """The stored text of an error: ``Type: message``, cut to :data:`MAX_ERROR_CHARS`."""
    if error is None:
        return None
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return text[:MAX_ERROR_CHARS]


@dataclass(frozen=True)
class LeaseRecord:
    """The lease record of one thread.

    Attributes:
        thread_id: The thread.
        state: ``"running"``, ``"released"`` or ``"parked"``.
        owner: Owner id of the last run that held the lease.
        token: Incremented on every acquisition by a new run and every claim;
            the compare-and-set value of :meth:`LeaseStore.claim_expired_lease`.
        acquired_at: When the current (or last) run took the lease.
        renewed_at: Last heartbeat.
        expires_at: When the lease lapses unless renewed.
        progress_at: Last progress reported by the run (a write or ``heartbeat()``).
        progress: The last progress note passed to ``heartbeat()``, if any.
        attempts: Consecutive recoveries since the last clean end (poison count).
        recoveries: Total recoveries of the thread.
        last_error: The last error a run of this thread raised, if recorded.
        reason: Why the last run ended (``finished``, ``interrupted``, ``error``,
            ``ended``) or why it was parked.
        ended_at: When the last run ended or the thread was parked.
    """

    thread_id: str
    state: str
    owner: str | None
    token: int
    acquired_at: datetime | None
    renewed_at: datetime | None
    expires_at: datetime | None
    progress_at: datetime | None = None
    progress: str | None = None
    attempts: int = 0
    recoveries: int = 0
    last_error: str | None = None
    reason: str | None = None
    ended_at: datetime | None = None

    def is_orphaned(self, now: datetime) -> bool:
        """``True`` if the record says running but the lease has expired."""
        return self.state == RUNNING and self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True)
class LeaseCounts:
    """Counts over all lease records (for health lines).

    Attributes:
        running: Records in state ``running`` with a live lease.
        orphaned: Records in state ``running`` whose lease expired.
        parked: Parked threads.
    """

    running: int
    orphaned: int
    parked: int


@runtime_checkable
class LeaseStore(Protocol):
    """Storage of run leases (sync). Every change is one atomic compare-and-set.

    Implementations index running records by expiry so that
    :meth:`find_expired_leases` costs the same however many threads are
    finished or waiting.
    """

    def acquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """Take the lease for a run by ``owner``, or renew it if ``owner`` holds it.

        Succeeds when no run holds a live lease (no record, released, parked,
        expired) or ``owner`` already holds it; a new holder gets ``token + 1``.

        Returns:
            The record after the change, or ``None`` if another owner holds a
            live lease.
        """
        ...

    def renew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """Extend ``owner``'s leases to ``now + ttl`` (one round trip).

        Args:
            progress: Per thread, the last progress time and note to record.

        Returns:
            The thread ids whose lease ``owner`` no longer holds (lost).
        """
        ...

    def release_lease(
        self,
        *,
        thread_id: str,
        owner: str,
        now: datetime,
        reason: str,
        error: str | None = None,
    ) -> bool:
        """End ``owner``'s run: state ``released``. ``False`` if ``owner`` did not hold it."""
        ...

    def record_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """Store the last error of ``owner``'s run without ending it."""
        ...

    def find_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """Running records whose lease expired at or before ``now``, oldest first."""
        ...

    def claim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """Take over an expired lease for recovery, iff it is still running at ``token``.

        Exactly one of several concurrent callers with the same ``token`` wins.
        The winner's record has ``token + 1``, ``attempts + 1``, ``recoveries + 1``.

        Returns:
            The record after the claim, or ``None`` if the lease moved on.
        """
        ...

    def take_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """Take a running lease whose holder is dead, iff it is still at ``token`` and
        was last renewed at ``renewed_at`` (compare-and-set; not a recovery).

        Used by a new run of the thread (or a recovery worker closing a thread
        that already finished) once :func:`owner_is_dead` or
        :func:`heartbeat_is_stale` says the holder is gone. The winner's record
        has ``token + 1``; attempts and recoveries are unchanged.

        Returns:
            The record after the change, or ``None`` if the lease moved on.
        """
        ...

    def park_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """Park an expired running lease at ``token`` (compare-and-set)."""
        ...

    def unpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """Unpark a parked thread and reset its poison count (operator action).

        Args:
            retry_at: ``None``: the record is released (nothing left to run).
                Otherwise it becomes an orphan whose lease expired at
                ``retry_at``, so the next recovery pass resumes it again.

        Returns:
            ``False`` if the thread was not parked.
        """
        ...

    def get_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """The record of one thread."""
        ...

    def list_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """Records in ``state`` (``running`` or ``parked``), up to ``limit``."""
        ...

    def lease_counts(self, *, now: datetime) -> LeaseCounts:
        """Counts of running, orphaned and parked threads."""
        ...

    def delete_lease(self, *, thread_id: str) -> None:
        """Forget a thread's lease record (when the thread is deleted)."""
        ...


@runtime_checkable
class AsyncLeaseStore(Protocol):
    """The async twin of :class:`LeaseStore`: the same methods, ``a``-prefixed."""

    async def aacquire_lease(
        self, *, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`LeaseStore.acquire_lease`."""
        ...

    async def arenew_leases(
        self,
        *,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None = None,
    ) -> list[str]:
        """See :meth:`LeaseStore.renew_leases`."""
        ...

    async def arelease_lease(
        self,
        *,
        thread_id: str,
        owner: str,
        now: datetime,
        reason: str,
        error: str | None = None,
    ) -> bool:
        """See :meth:`LeaseStore.release_lease`."""
        ...

    async def arecord_lease_error(self, *, thread_id: str, owner: str, error: str) -> None:
        """See :meth:`LeaseStore.record_lease_error`."""
        ...

    async def afind_expired_leases(self, *, now: datetime, limit: int) -> list[LeaseRecord]:
        """See :meth:`LeaseStore.find_expired_leases`."""
        ...

    async def aclaim_expired_lease(
        self, *, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> LeaseRecord | None:
        """See :meth:`LeaseStore.claim_expired_lease`."""
        ...

    async def atake_over_lease(
        self,
        *,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> LeaseRecord | None:
        """See :meth:`LeaseStore.take_over_lease`."""
        ...

    async def apark_lease(
        self, *, thread_id: str, token: int, now: datetime, reason: str
    ) -> LeaseRecord | None:
        """See :meth:`LeaseStore.park_lease`."""
        ...

    async def aunpark_lease(self, *, thread_id: str, retry_at: datetime | None = None) -> bool:
        """See :meth:`LeaseStore.unpark_lease`."""
        ...

    async def aget_lease(self, *, thread_id: str) -> LeaseRecord | None:
        """See :meth:`LeaseStore.get_lease`."""
        ...

    async def alist_leases(self, *, state: str, limit: int) -> list[LeaseRecord]:
        """See :meth:`LeaseStore.list_leases`."""
        ...

    async def alease_counts(self, *, now: datetime) -> LeaseCounts:
        """See :meth:`LeaseStore.lease_counts`."""
        ...

    async def adelete_lease(self, *, thread_id: str) -> None:
        """See :meth:`LeaseStore.delete_lease`."""
        ...
