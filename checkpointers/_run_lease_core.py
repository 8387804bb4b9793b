"""Run leases: what the sync and async drivers share (no I/O).

:class:`RunLeasesCore` holds a saver's :class:`~langgraph_durable.checkpointers._run_book.RunBook`
and decides, for each write that starts or ends a run, which lease statements
travel with it and how its outcome is booked (:meth:`RunLeasesCore._around`, a
flow the drivers in :mod:`langgraph_durable.checkpointers._run_leases` run sync or async).
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from langgraph_durable.checkpointers import _lease_flows as flows
from langgraph_durable.checkpointers._lease_flows import GetLease, RunWithLease
from langgraph_durable.checkpointers._leases import (
    RUNNING,
    LeaseRecord,
    LeaseSettings,
    new_owner_id,
    register_owner,
)
from langgraph_durable.checkpointers._multitask import Busy, Multitask
from langgraph_durable.checkpointers._run_book import Decision, RunBook

log = logging.getLogger("langgraph_durable.checkpointers.leases")

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def lease_settings(leases: LeaseSettings | bool | None) -> LeaseSettings | None:
    """The settings a saver's ``leases=`` option asks for (``None``: leases off)."""
    if leases is True:
        return LeaseSettings()
    if leases is False or leases is None:
        return None
    if not isinstance(leases, LeaseSettings):
        raise TypeError(f"leases must be a bool or a LeaseSettings, not {leases!r}")
    return leases


@dataclass(frozen=True)
class _Write:
    """A write that starts and/or ends a run, as booked before it is sent."""

    thread_id: str
    pre: flows.Step | None
    post: flows.Step | None
    ending: Any


class LeaseTarget:
    """Where a lease flow's requests go (:mod:`._lease_driver`): the lease requests to the
    lease store, the reads of a thread's latest checkpoint (``ReadLatest``) and a run's
    writes with its lease statements (``RunWithLease``) to the saver.

    Args:
        saver: The saver (its ``get_tuple`` / ``aget_tuple``).
        store: Its lease store (``saver.leases``), which also runs a run's writes with
            their lease statements (``run_with_lease`` / ``arun_with_lease``).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], store: Any) -> None:
        self._saver = saver
        self._store = store

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The thread's latest checkpoint, read through the saver (``ReadLatest``)."""
        return self._saver.get_tuple(config)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See :meth:`get_tuple`."""
        return await self._saver.aget_tuple(config)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class RunLeasesCore:
    """What the sync and async run-lease drivers share: the book and its decisions (no I/O)."""

    def __init__(
        self,
        settings: LeaseSettings | None,
        clock: Clock | None,
        multitask: Multitask | None = None,
    ) -> None:
        self.settings = settings or LeaseSettings()
        self.multitask = multitask
        self.clock: Clock = clock or _utc_now
        self.book = RunBook(self.settings)
        self._pid = os.getpid()
        self.owner = new_owner_id()
        register_owner(self.owner, self)

    def _check_fork(self) -> None:
        # a forked child inherits the book but not the heartbeat: start afresh
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self.owner = new_owner_id()
            register_owner(self.owner, self)
            self.book = RunBook(self.settings)
            self._after_fork()

    def _started(
        self, decision: Decision, record: LeaseRecord | None, rival: LeaseRecord | None
    ) -> bool:
        """Book the outcome of a start flow; ``False`` if the run goes unwatched."""
        thread_id = decision.thread_id
        assert thread_id is not None
        if record is not None:
            self.book.confirm(thread_id, record.token)
            return True
        if (
            rival is not None
            and rival.state == RUNNING
            and self.book.contest(thread_id, decision.runtime, rival.token, rival.renewed_at)
        ):
            log.warning(
                "thread %r is leased by %s, which may be alive; running unleased "
                "until it renews no more",
                thread_id,
                rival.owner,
            )
            return True
        self.book.drop(thread_id)
        log.warning("thread %r is leased by another live run; not leasing this run", thread_id)
        return False

    def _steps(
        self, thread_id: str, before: Decision, after: Decision
    ) -> tuple[flows.Step | None, flows.Step | None]:
        """The lease statements to send with a write that starts and/or ends a run."""
        now = self.clock()
        pre: flows.Step | None = None
        post: flows.Step | None = None
        if before.start and self.book.is_reserved(thread_id, before.runtime):
            pre = (
                "acquire_lease",
                {
                    "thread_id": thread_id,
                    "owner": self.owner,
                    "now": now,
                    "ttl": self.settings.lease,
                },
            )
        if after.end is not None and (
            pre is not None
            or (self.book.holds(thread_id) and not self.book.is_contested(thread_id, after.runtime))
        ):
            post = (
                "release_lease",
                {
                    "thread_id": thread_id,
                    "owner": self.owner,
                    "now": now,
                    "reason": after.end,
                    "error": None,
                },
            )
        return pre, post

    def _won(
        self, thread_id: str, runtime: Any, record: LeaseRecord | None, rival: LeaseRecord | None
    ) -> bool:
        """Book a heartbeat's take-over attempt; ``True`` if a won lease must go back."""
        if record is not None:
            return not self.book.win(thread_id, runtime, record.token)
        if rival is not None and rival.state == RUNNING:
            self.book.contest(thread_id, runtime, rival.token, rival.renewed_at)
        return False

    def _prepare(self, before: Decision, after: Decision) -> _Write:
        """Book a write that starts and/or ends a run (under the thread's I/O lock)."""
        thread_id = before.thread_id or after.thread_id
        assert thread_id is not None
        pre, post = self._steps(thread_id, before, after)
        # forget the lease before it is released, so a renewal racing
        # with the release does not take it for lost
        ending = (
            self.book.drop(thread_id, after.runtime) if post is not None and pre is None else None
        )
        return _Write(thread_id, pre, post, ending)

    def _failed(self, write: _Write) -> None:
        """Undo :meth:`_prepare`'s booking: the write (or the lease start) failed."""
        if write.pre is not None:
            self.book.drop(write.thread_id)
        if write.ending is not None:
            self.book.restore(write.ending)  # liveness releases it when the run is gone

    def _around(
        self, write: _Write, operation: str, op: Any, before: Decision, after: Decision
    ) -> flows.Flow[tuple[Any, bool, bool]]:
        """The saver's write with its lease statements, then the booking of the outcome.

        Driven (sync or async) against a :class:`LeaseTarget`. Returns ``(result,
        heartbeat wanted, after() wanted)``.
        """
        thread_id = write.thread_id
        result, record, _ = yield RunWithLease(
            operation=operation, op=op, pre=write.pre, post=write.post
        )
        started = False
        if write.pre is not None:
            rival = None
            if record is None:
                record, rival = yield from flows.start(
                    thread_id, self.owner, self.clock(), self.settings.lease, tried=True
                )
            started = self._started(before, record, rival)
        # a run that started contested and ends at once: after() clears for it
        contested = self.book.is_contested(thread_id, after.runtime)
        if write.post is not None and write.pre is not None and not contested:
            self.book.drop(thread_id, after.runtime)
        unsettled = write.post is None or contested
        return result, started and unsettled, unsettled

    def attempt(self, thread_id: str, runtime: Any) -> flows.Flow[Busy | None]:
        """One try at the lease for a run with a multitask strategy.

        Driven against the lease store under the thread's I/O lock (so it
        lands after a release of this process's previous run of the thread).
        Returns ``None`` when the run holds the lease, else the holder.
        """
        booked, previous = self.book.admit(thread_id, runtime)
        for generation in (1, 2):
            if booked != "lingering":
                break
            # a run of this process paused or failed and may have returned: its
            # reference cycle keeps it looking alive until collected (a young
            # collection is enough unless the run was long)
            gc.collect(generation)
            booked, previous = self.book.admit(thread_id, runtime)
        if booked == "held":
            return None
        if booked != "reserved":  # another run of this process
            record = yield GetLease(thread_id=thread_id)
            return (record.owner, record.acquired_at) if record else (self.owner, None)
        try:
            record, rival = yield from flows.start(
                thread_id, self.owner, self.clock(), self.settings.lease
            )
        except BaseException:
            self.book.unreserve(thread_id, runtime, previous)
            raise
        if record is not None:
            self.book.confirm(thread_id, record.token)
            return None
        self.book.unreserve(thread_id, runtime, previous)
        return (rival.owner, rival.acquired_at) if rival is not None else (None, None)

    def _after_fork(self) -> None:
        pass

    def touch(self, thread_id: str, note: str | None = None) -> bool:
        """Report progress of a held run (what ``langgraph_durable.interrupts.heartbeat`` calls)."""
        return self.book.touch(thread_id, self.clock(), note)

    def holds(self, thread_id: str) -> bool:
        """Whether this saver holds ``thread_id``'s lease."""
        return self.book.holds(thread_id)

    def _runs_of(self, thread_ids: Sequence[str]) -> dict[str, Any]:
        """The run holding each thread now (taken before a renewal is sent)."""
        return {t: self.book.runtime_of(t) for t in thread_ids}

    def _lost(self, thread_ids: Sequence[str], renewed_runs: dict[str, Any]) -> None:
        for thread_id in thread_ids:
            if not self.book.holds(thread_id):
                continue  # released while the renewal was in flight
            runtime = self.book.runtime_of(thread_id)
            if runtime is not renewed_runs.get(thread_id):
                # the run we renewed for ended and a new run of the thread (this
                # process) took a fresh lease meanwhile: that one is not lost
                continue
            self.book.drop(thread_id)
            log.warning(
                "lease of thread %r lost to another owner; asking the run to stop", thread_id
            )
            control = getattr(runtime, "control", None)
            if control is not None:
                control.request_drain("run lease lost")
