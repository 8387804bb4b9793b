"""Run leases held by a saver: the sync and async drivers and the saver mixins.

:class:`RunLeases` (sync savers) and :class:`AsyncRunLeases` (async savers)
drive a :class:`~checkpointers._run_book.RunBook` against a lease store: they
take a thread's lease when a run of it starts writing, give it back when the
run finishes, pauses or is gone, and renew held leases from a background
heartbeat (a daemon thread, or an asyncio task on the run's event loop) that
makes one batched round trip per interval and never blocks the graph. The
acquire travels with the run's first write and the release with its last, in
the same round trip (the saver's ``_run_with_lease``: one Postgres pipeline or
one Redis pipeline), so a run shorter than the heartbeat interval pays no
round trip of its own for its lease. A run that finds its thread leased by a
dead or silent owner takes the lease over (:mod:`checkpointers._lease_flows`).

A saver opts in with the class decorators :func:`sync_run_leases` /
:func:`async_run_leases` and a ``run_leases`` / ``arun_leases`` attribute.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

from checkpointers import _lease_flows as flows
from checkpointers._leases import (
    CLEAN_ENDS,
    ENDED_GONE,
    RUNNING,
    AsyncLeaseStore,
    LeaseRecord,
    LeaseSettings,
    LeaseStore,
    new_owner_id,
    register_owner,
)
from checkpointers._run_book import Decision, Plan, RunBook

log = logging.getLogger("checkpointers.leases")

Clock = Callable[[], datetime]
_Locks = weakref.WeakValueDictionary[tuple[asyncio.AbstractEventLoop, str], asyncio.Lock]


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


class _Base:
    def __init__(self, settings: LeaseSettings | None, clock: Clock | None) -> None:
        self.settings = settings or LeaseSettings()
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

    def _started(self, decision: Decision, record: LeaseRecord | None,
                 rival: LeaseRecord | None) -> bool:
        """Book the outcome of a start flow; ``False`` if the run goes unwatched."""
        thread_id = decision.thread_id
        assert thread_id is not None
        if record is not None:
            self.book.confirm(thread_id, record.token)
            return True
        if rival is not None and rival.state == RUNNING and self.book.contest(
                thread_id, decision.runtime, rival.token, rival.renewed_at):
            log.warning("thread %r is leased by %s, which may be alive; running unleased "
                        "until it renews no more", thread_id, rival.owner)
            return True
        self.book.drop(thread_id)
        log.warning("thread %r is leased by another live run; not leasing this run", thread_id)
        return False

    def _steps(self, thread_id: str, before: Decision,
               after: Decision) -> tuple[flows.Step | None, flows.Step | None]:
        """The lease statements to send with a write that starts and/or ends a run."""
        now = self.clock()
        pre: flows.Step | None = None
        post: flows.Step | None = None
        if before.start and self.book.is_reserved(thread_id, before.runtime):
            pre = ("acquire_lease", {"thread_id": thread_id, "owner": self.owner, "now": now,
                                     "ttl": self.settings.lease})
        if after.end is not None and (pre is not None or (
                self.book.holds(thread_id)
                and not self.book.is_contested(thread_id, after.runtime))):
            post = ("release_lease", {"thread_id": thread_id, "owner": self.owner, "now": now,
                                      "reason": after.end, "error": None})
        return pre, post

    def _won(self, thread_id: str, runtime: Any, record: LeaseRecord | None,
             rival: LeaseRecord | None) -> bool:
        """Book a heartbeat's take-over attempt; ``True`` if a won lease must go back."""
        if record is not None:
            return not self.book.win(thread_id, runtime, record.token)
        if rival is not None and rival.state == RUNNING:
            self.book.contest(thread_id, runtime, rival.token, rival.renewed_at)
        return False

    def _after_fork(self) -> None:
        pass

    def touch(self, thread_id: str, note: str | None = None) -> bool:
        """Report progress of a held run (what :func:`interrupts.heartbeat` calls)."""
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
            log.warning("lease of thread %r lost to another owner; asking the run to stop",
                        thread_id)
            control = getattr(runtime, "control", None)
            if control is not None:
                control.request_drain("run lease lost")


class RunLeases(_Base):
    """Run leases of a sync saver.

    Args:
        store: Where leases live (the saver itself, usually).
        settings: Lease and heartbeat durations.
        clock: Returns the current UTC time (injectable for tests).
    """

    def __init__(self, store: LeaseStore, settings: LeaseSettings | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__(settings, clock)
        self.store = store
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._io_lock = threading.Lock()

    def _after_fork(self) -> None:
        self._wake = threading.Event()
        self._thread = None
        self._thread_lock = threading.Lock()
        self._io_lock = threading.Lock()

    # -- saver hooks --

    def after(self, decision: Decision) -> None:
        """Release or record an error as ``decision`` says."""
        thread_id = decision.thread_id
        if thread_id is None:
            return
        if self.book.is_contested(thread_id, decision.runtime):
            if decision.end in CLEAN_ENDS:
                with self._io_lock:
                    self.book.close(thread_id, decision.runtime, decision.end)
                self._clear(thread_id)
            elif decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
            return
        if not self.book.holds(thread_id):
            return
        with self._io_lock:
            if decision.error is not None:
                self.book.mark_ending(thread_id, decision.error)
                self.store.record_lease_error(thread_id=thread_id, owner=self.owner,
                                              error=decision.error)
            if decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
                self.store.release_lease(thread_id=thread_id, owner=self.owner,
                                         now=self.clock(), reason=decision.end)

    def around(self, saver: Any, operation: str, op: Any, before: Decision,
               after: Decision) -> Any:
        """Run a saver write that starts or ends a run, lease statements included.

        The acquire goes with the run's first write and the release with its
        last, in the same round trip (``saver._run_with_lease``), so a run pays
        no extra round trip for its lease.
        """
        thread_id = before.thread_id or after.thread_id
        assert thread_id is not None
        if before.start:
            self._check_fork()
        started = False
        with self._io_lock:
            pre, post = self._steps(thread_id, before, after)
            # forget the lease before it is released, so a renewal racing
            # with the release does not take it for lost
            ending = self.book.drop(thread_id, after.runtime) \
                if post is not None and pre is None else None
            try:
                result, record, _ = saver._run_with_lease(operation, op, pre, post)
            except BaseException:
                if pre is not None:
                    self.book.drop(thread_id)
                if ending is not None:
                    self.book.restore(ending)  # liveness releases it when the run is gone
                raise
            if pre is not None:
                rival = None
                if record is None:
                    record, rival = flows.drive(self.store, flows.start(
                        thread_id, self.owner, self.clock(), self.settings.lease, tried=True))
                started = self._started(before, record, rival)
            # a run that started contested and ends at once: after() clears for it
            contested = self.book.is_contested(thread_id, after.runtime)
            if post is not None and pre is not None and not contested:
                self.book.drop(thread_id, after.runtime)
        if started and (post is None or contested):
            self._ensure_heartbeat()
        if post is None or contested:
            self.after(after)  # a contested end, an error to record
        return result

    def adopt(self, record: LeaseRecord) -> None:
        """Hold a lease claimed by a recovery worker with this saver's owner id."""
        self._check_fork()
        self.book.hold(record.thread_id, record.token, None)
        self._ensure_heartbeat()

    def release(self, thread_id: str, reason: str, error: str | None = None) -> bool:
        """Release a held lease now (recovery worker, after its run)."""
        with self._io_lock:
            if self.book.drop(thread_id) is None:
                return False
            return self.store.release_lease(thread_id=thread_id, owner=self.owner,
                                            now=self.clock(), reason=reason, error=error)

    # -- heartbeat --

    def _ensure_heartbeat(self) -> None:
        with self._thread_lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._wake.clear()
            self._thread = threading.Thread(target=self._run, name="durable-lease-heartbeat",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        interval = self.settings.heartbeat.total_seconds()
        while not self._wake.wait(interval):
            try:
                if not self.beat():
                    return
            except Exception:  # a lost connection must not kill the heartbeat
                log.exception("lease heartbeat failed; retrying next interval")

    def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the thread then exits)."""
        plan = self.book.plan()
        if plan.collect:
            gc.collect()
            plan = self.book.plan()
        self._apply(plan)
        with self._thread_lock:
            if not self.book.held_threads():
                self._thread = None
                return False
        return True

    def _clear(self, thread_id: str) -> None:
        with self._io_lock:
            closing = self.book.closing_of(thread_id)
            if closing is None:
                return
            token, reason = closing
            if flows.drive(self.store, flows.clear(thread_id, token, self.owner, self.clock(),
                                                   self.settings.lease, reason)):
                self.book.forget(thread_id, reason)

    def _apply(self, plan: Plan) -> None:
        now = self.clock()
        for thread_id, reason, error in plan.ended:
            with self._io_lock:
                self.book.drop(thread_id)
                self.store.release_lease(thread_id=thread_id, owner=self.owner, now=now,
                                         reason=reason, error=error)
        for thread_id in plan.contest:
            with self._io_lock:
                runtime, _ = self.book.rival_of(thread_id)
                if not self.book.is_contested(thread_id, runtime):
                    continue
                record, rival = flows.drive(self.store, flows.start(
                    thread_id, self.owner, now, self.settings.lease))
                if self._won(thread_id, runtime, record, rival):
                    self.store.release_lease(thread_id=thread_id, owner=self.owner, now=now,
                                             reason=ENDED_GONE)
        for thread_id, _token, _reason in plan.clear:
            self._clear(thread_id)
        if plan.renew:
            runs = self._runs_of(plan.renew)
            lost = self.store.renew_leases(owner=self.owner, thread_ids=plan.renew, now=now,
                                           ttl=self.settings.lease, progress=plan.progress)
            self._lost(lost, runs)

    def close(self) -> None:
        """Stop the heartbeat (held leases then lapse unless released)."""
        self._wake.set()


class AsyncRunLeases(_Base):
    """Run leases of an async saver: the heartbeat is a task on the run's event loop."""

    def __init__(self, store: AsyncLeaseStore, settings: LeaseSettings | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__(settings, clock)
        self.store = store
        self._task: asyncio.Task[None] | None = None
        self._locks: _Locks = weakref.WeakValueDictionary()

    def _after_fork(self) -> None:
        self._task = None
        self._locks = weakref.WeakValueDictionary()

    def _io_lock(self, thread_id: str) -> asyncio.Lock:
        # one lock per thread (an acquire never lands after the release of the
        # same run) and event loop (an asyncio.Lock must not cross loops): the
        # runs of different threads never wait for each other's round trips,
        # which a saver-wide lock made them do on every first and last write.
        # Weak values: a lock lives while a task holds or awaits it.
        key = (asyncio.get_running_loop(), thread_id)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def after(self, decision: Decision) -> None:
        """Release or record an error as ``decision`` says."""
        thread_id = decision.thread_id
        if thread_id is None:
            return
        if self.book.is_contested(thread_id, decision.runtime):
            if decision.end in CLEAN_ENDS:
                async with self._io_lock(thread_id):
                    self.book.close(thread_id, decision.runtime, decision.end)
                await self._clear(thread_id)
            elif decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
            return
        if not self.book.holds(thread_id):
            return
        async with self._io_lock(thread_id):
            if decision.error is not None:
                self.book.mark_ending(thread_id, decision.error)
                await self.store.arecord_lease_error(thread_id=thread_id, owner=self.owner,
                                                     error=decision.error)
            if decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
                await self.store.arelease_lease(thread_id=thread_id, owner=self.owner,
                                                now=self.clock(), reason=decision.end)

    async def around(self, saver: Any, operation: str, op: Any, before: Decision,
                     after: Decision) -> Any:
        """See :meth:`RunLeases.around`."""
        thread_id = before.thread_id or after.thread_id
        assert thread_id is not None
        if before.start:
            self._check_fork()
        started = False
        async with self._io_lock(thread_id):
            pre, post = self._steps(thread_id, before, after)
            # forget the lease before it is released, so a renewal racing
            # with the release does not take it for lost
            ending = self.book.drop(thread_id, after.runtime) \
                if post is not None and pre is None else None
            try:
                result, record, _ = await saver._run_with_lease(operation, op, pre, post)
            except BaseException:
                if pre is not None:
                    self.book.drop(thread_id)
                if ending is not None:
                    self.book.restore(ending)  # liveness releases it when the run is gone
                raise
            if pre is not None:
                rival = None
                if record is None:
                    record, rival = await flows.adrive(self.store, flows.start(
                        thread_id, self.owner, self.clock(), self.settings.lease, tried=True))
                started = self._started(before, record, rival)
            # a run that started contested and ends at once: after() clears for it
            contested = self.book.is_contested(thread_id, after.runtime)
            if post is not None and pre is not None and not contested:
                self.book.drop(thread_id, after.runtime)
        if started and (post is None or contested):
            self._ensure_heartbeat()
        if post is None or contested:
            await self.after(after)
        return result

    def adopt(self, record: LeaseRecord) -> None:
        """Hold a lease claimed by a recovery worker with this saver's owner id."""
        self._check_fork()
        self.book.hold(record.thread_id, record.token, None)
        self._ensure_heartbeat()

    async def release(self, thread_id: str, reason: str, error: str | None = None) -> bool:
        """Release a held lease now (recovery worker, after its run)."""
        async with self._io_lock(thread_id):
            if self.book.drop(thread_id) is None:
                return False
            return await self.store.arelease_lease(thread_id=thread_id, owner=self.owner,
                                                   now=self.clock(), reason=reason,
                                                   error=error)

    def _ensure_heartbeat(self) -> None:
        loop = asyncio.get_running_loop()
        task = self._task
        if task is not None and not task.done() and task.get_loop() is loop:
            return
        self._task = loop.create_task(self._run(), name="durable-lease-heartbeat")

    async def _run(self) -> None:
        interval = self.settings.heartbeat.total_seconds()
        while True:
            await asyncio.sleep(interval)
            try:
                if not await self.beat():
                    return
            except Exception:
                log.exception("lease heartbeat failed; retrying next interval")

    async def _clear(self, thread_id: str) -> None:
        async with self._io_lock(thread_id):
            closing = self.book.closing_of(thread_id)
            if closing is None:
                return
            token, reason = closing
            if await flows.adrive(self.store, flows.clear(
                    thread_id, token, self.owner, self.clock(), self.settings.lease, reason)):
                self.book.forget(thread_id, reason)

    async def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the task then ends)."""
        plan = self.book.plan()
        if plan.collect:
            gc.collect()
            plan = self.book.plan()
        now = self.clock()
        for thread_id, reason, error in plan.ended:
            async with self._io_lock(thread_id):
                self.book.drop(thread_id)
                await self.store.arelease_lease(thread_id=thread_id, owner=self.owner,
                                                now=now, reason=reason, error=error)
        for thread_id in plan.contest:
            async with self._io_lock(thread_id):
                runtime, _ = self.book.rival_of(thread_id)
                if not self.book.is_contested(thread_id, runtime):
                    continue
                record, rival = await flows.adrive(self.store, flows.start(
                    thread_id, self.owner, now, self.settings.lease))
                if self._won(thread_id, runtime, record, rival):
                    await self.store.arelease_lease(thread_id=thread_id, owner=self.owner,
                                                    now=now, reason=ENDED_GONE)
        for thread_id, _token, _reason in plan.clear:
            await self._clear(thread_id)
        if plan.renew:
            runs = self._runs_of(plan.renew)
            lost = await self.store.arenew_leases(owner=self.owner, thread_ids=plan.renew,
                                                  now=now, ttl=self.settings.lease,
                                                  progress=plan.progress)
            self._lost(lost, runs)
        if not self.book.held_threads():
            self._task = None
            return False
        return True

    def close(self) -> None:
        """Cancel the heartbeat task (held leases then lapse unless released)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None


S = TypeVar("S", bound="type[Any]")


def sync_run_leases(cls: S) -> S:
    """Class decorator: run leases around a sync saver's own ``put``/``put_writes``.

    The saver sets ``self.run_leases`` (a :class:`RunLeases`, or ``None`` to turn
    leases off). A decorator rather than a mixin, because the savers define
    ``put`` in their own class body.
    """
    put = cls.put
    put_writes = cls.put_writes

    @functools.wraps(put)
    def leased_put(self: Any, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> Any:
        leases: RunLeases | None = self.run_leases
        if leases is None:
            return put(self, config, checkpoint, metadata, new_versions)
        before, after = leases.book.on_put(config, checkpoint, metadata)
        if before.start or after.end is not None:
            return leases.around(self, "put", self._lease_put_op(
                config, checkpoint, metadata, new_versions), before, after)
        result = put(self, config, checkpoint, metadata, new_versions)
        leases.after(after)
        return result

    @functools.wraps(put_writes)
    def leased_put_writes(self: Any, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        leases: RunLeases | None = self.run_leases
        if leases is None:
            put_writes(self, config, writes, task_id, task_path)
            return
        before, after = leases.book.on_writes(config, writes)
        if before.start or after.end is not None:
            leases.around(self, "put_writes", self._lease_writes_op(
                config, writes, task_id, task_path), before, after)
            return
        put_writes(self, config, writes, task_id, task_path)
        leases.after(after)

    cls.put = leased_put
    cls.put_writes = leased_put_writes
    return cls


def async_run_leases(cls: S) -> S:
    """Class decorator: run leases around an async saver's own ``aput``/``aput_writes``.

    The saver sets ``self.arun_leases`` (an :class:`AsyncRunLeases`, or ``None``)
    and has :class:`~checkpointers._audit.DeferredAuditMixin`: entries handed
    over with ``defer_audit`` are written before either write, whatever path
    the write then takes.
    """
    aput = cls.aput
    aput_writes = cls.aput_writes

    @functools.wraps(aput)
    async def leased_aput(self: Any, config: RunnableConfig, checkpoint: Checkpoint,
                          metadata: CheckpointMetadata, new_versions: ChannelVersions) -> Any:
        await self._write_deferred_audit()  # entries a sync helper handed over first
        leases: AsyncRunLeases | None = self.arun_leases
        if leases is None:
            return await aput(self, config, checkpoint, metadata, new_versions)
        before, after = leases.book.on_put(config, checkpoint, metadata)
        if before.start or after.end is not None:
            return await leases.around(self, "put", self._lease_put_op(
                config, checkpoint, metadata, new_versions), before, after)
        result = await aput(self, config, checkpoint, metadata, new_versions)
        await leases.after(after)
        return result

    @functools.wraps(aput_writes)
    async def leased_aput_writes(self: Any, config: RunnableConfig,
                                 writes: Sequence[tuple[str, Any]], task_id: str,
                                 task_path: str = "") -> None:
        # before the interrupt they audit (see checkpointers.DeferredAudit)
        await self._write_deferred_audit()
        leases: AsyncRunLeases | None = self.arun_leases
        if leases is None:
            await aput_writes(self, config, writes, task_id, task_path)
            return
        before, after = leases.book.on_writes(config, writes)
        if before.start or after.end is not None:
            await leases.around(self, "put_writes", self._lease_writes_op(
                config, writes, task_id, task_path), before, after)
            return
        await aput_writes(self, config, writes, task_id, task_path)
        await leases.after(after)

    cls.aput = leased_aput
    cls.aput_writes = leased_aput_writes
    return cls
