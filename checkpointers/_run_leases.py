"""Run leases held by a saver: the sync and async drivers.

:class:`RunLeases` (sync savers; :class:`AsyncRunLeases` of async savers is in
:mod:`._async_run_leases`)
drive a :class:`~langgraph_durable.checkpointers._run_book.RunBook` against a lease store: they
take a thread's lease when a run of it starts writing, give it back when the
run finishes, pauses or is gone, and renew held leases from a background
heartbeat (a daemon thread, or an asyncio task on the run's event loop) that
makes one batched round trip per interval and never blocks the graph. The
acquire travels with the run's first write and the release with its last, in
the same round trip (the lease store's ``run_with_lease``: one Postgres pipeline
or one Redis pipeline), so a run shorter than the heartbeat interval pays no
round trip of its own for its lease. A run that finds its thread leased by a
dead or silent owner takes the lease over (:mod:`langgraph_durable.checkpointers._lease_flows`).
What both drivers decide is in :mod:`langgraph_durable.checkpointers._run_lease_core`.

A saver opts in with the class decorators :func:`sync_run_leases` /
:func:`async_run_leases` (:mod:`langgraph_durable.checkpointers._leased_writes_async`) and a
``run_leases`` / ``arun_leases`` attribute.
"""

from __future__ import annotations

import _thread
import gc
import threading
import time
import weakref
from typing import Any

from langgraph_durable.checkpointers import _lease_flows as flows
from langgraph_durable.checkpointers._lease_driver import drive
from langgraph_durable.checkpointers._leased_writes import sync_run_leases
from langgraph_durable.checkpointers._leases import (
    CLEAN_ENDS,
    ENDED_GONE,
    LeaseRecord,
    LeaseSettings,
    LeaseStore,
)
from langgraph_durable.checkpointers._multitask import (
    Multitask,
    SyncTarget,
    admission,
    watching,
)
from langgraph_durable.checkpointers._run_book import Decision, Plan
from langgraph_durable.checkpointers._run_lease_core import (
    Clock,
    LeaseTarget,
    RunLeasesCore,
    lease_settings,
    log,
)

__all__ = ["RunLeases", "lease_settings", "sync_run_leases"]

_ThreadLocks = weakref.WeakValueDictionary[str, _thread.LockType]


class RunLeases(RunLeasesCore):
    """Run leases of a sync saver.

    Args:
        store: Where leases live (the saver itself, usually).
        settings: Lease and heartbeat durations.
        clock: Returns the current UTC time (injectable for tests).
        multitask: The saver's multitask strategy (``None``: runs do not wait
            for each other; see :mod:`langgraph_durable.checkpointers._multitask`).
    """

    def __init__(
        self,
        store: LeaseStore,
        settings: LeaseSettings | None = None,
        clock: Clock | None = None,
        *,
        multitask: Multitask | None = None,
    ) -> None:
        super().__init__(settings, clock, multitask)
        self.store = store
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._locks: _ThreadLocks = weakref.WeakValueDictionary()
        self._locks_lock = threading.Lock()

    def _after_fork(self) -> None:
        self._wake = threading.Event()
        self._thread = None
        self._watcher = None
        self._thread_lock = threading.Lock()
        self._locks = weakref.WeakValueDictionary()
        self._locks_lock = threading.Lock()

    def _io_lock(self, thread_id: str) -> _thread.LockType:
        # one lock per thread id, as AsyncRunLeases: it orders the start and
        # end of the runs of one thread (an acquire never lands after the
        # release of the same run); the book guards itself. A saver-wide lock
        # held across the lease statements' round trips made every run's first
        # and last write wait for every other run's (threads sharing a saver:
        # run_once(concurrency=N)). Weak values: a lock lives while held or awaited.
        with self._locks_lock:
            lock = self._locks.get(thread_id)
            if lock is None:
                lock = self._locks[thread_id] = threading.Lock()
            return lock

    # -- saver hooks --

    def after(self, decision: Decision) -> None:
        """Release or record an error as ``decision`` says."""
        thread_id = decision.thread_id
        if thread_id is None:
            return
        if self.book.is_contested(thread_id, decision.runtime):
            if decision.end in CLEAN_ENDS:
                with self._io_lock(thread_id):
                    self.book.close(thread_id, decision.runtime, decision.end)
                self._clear(thread_id)
            elif decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
            return
        if not self.book.holds(thread_id):
            return
        with self._io_lock(thread_id):
            if decision.error is not None:
                self.book.mark_ending(thread_id, decision.error)
                self.store.record_lease_error(
                    thread_id=thread_id, owner=self.owner, error=decision.error
                )
            if decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
                self.store.release_lease(
                    thread_id=thread_id, owner=self.owner, now=self.clock(), reason=decision.end
                )

    def around(self, saver: Any, operation: str, op: Any, before: Decision, after: Decision) -> Any:
        """Run a saver write that starts or ends a run, lease statements included.

        The acquire goes with the run's first write and the release with its
        last, in the same round trip (``saver.leases.run_with_lease``), so a run pays
        no extra round trip for its lease.
        """
        if before.start:
            self._check_fork()
        with self._io_lock(before.thread_id or after.thread_id or ""):
            write = self._prepare(before, after)
            try:
                flow = self._around(write, operation, op, before, after)
                result, beat, settle = drive(LeaseTarget(saver, self.store), flow)
            except BaseException:
                self._failed(write)
                raise
        if beat:
            self._ensure_heartbeat()
        if settle:
            self.after(after)  # a contested end, an error to record
        return result

    def admit(self, thread_id: str, runtime: Any, policy: Multitask) -> None:
        """Take the thread's lease for a starting run with a multitask strategy.

        Raises:
            ThreadBusy: as :func:`~langgraph_durable.checkpointers._multitask.admission`.
        """
        self._check_fork()
        drive(SyncTarget(self), admission(thread_id, runtime, policy))
        self._ensure_heartbeat()
        with self._thread_lock:
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(
                    target=self._watch, name="durable-lease-watch", daemon=True
                )
                self._watcher.start()

    def _watch(self) -> None:
        while True:
            drive(SyncTarget(self), watching(self.book))
            with self._thread_lock:  # a run admitted meanwhile finds no watcher
                ended, _, going = self.book.watch(time.monotonic())
                if self._wake.is_set() or not (ended or going):
                    self._watcher = None
                    return

    def adopt(self, record: LeaseRecord) -> None:
        """Hold a lease claimed by a recovery worker with this saver's owner id."""
        self._check_fork()
        self.book.hold(record.thread_id, record.token, None)
        self._ensure_heartbeat()

    def release(self, thread_id: str, reason: str, error: str | None = None) -> bool:
        """Release a held lease now (recovery worker, after its run)."""
        with self._io_lock(thread_id):
            if self.book.drop(thread_id) is None:
                return False
            return self.store.release_lease(
                thread_id=thread_id, owner=self.owner, now=self.clock(), reason=reason, error=error
            )

    # -- heartbeat --

    def _ensure_heartbeat(self) -> None:
        with self._thread_lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._wake.clear()
            self._thread = threading.Thread(
                target=self._run, name="durable-lease-heartbeat", daemon=True
            )
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
        with self._io_lock(thread_id):
            closing = self.book.closing_of(thread_id)
            if closing is None:
                return
            token, reason = closing
            if drive(
                self.store,
                flows.clear(
                    thread_id, token, self.owner, self.clock(), self.settings.lease, reason
                ),
            ):
                self.book.forget(thread_id, reason)

    def _apply(self, plan: Plan) -> None:
        now = self.clock()
        for thread_id, reason, error in plan.ended:
            with self._io_lock(thread_id):
                # not if a new run of the thread took its place since the plan
                if self.book.drop_over(thread_id) is None:
                    continue
                self.store.release_lease(
                    thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                )
        for thread_id in plan.contest:
            with self._io_lock(thread_id):
                runtime, _ = self.book.rival_of(thread_id)
                if not self.book.is_contested(thread_id, runtime):
                    continue
                record, rival = drive(
                    self.store, flows.start(thread_id, self.owner, now, self.settings.lease)
                )
                if self._won(thread_id, runtime, record, rival):
                    self.store.release_lease(
                        thread_id=thread_id, owner=self.owner, now=now, reason=ENDED_GONE
                    )
        for thread_id, _token, _reason in plan.clear:
            self._clear(thread_id)
        if plan.renew:
            runs = self._runs_of(plan.renew)
            lost = self.store.renew_leases(
                owner=self.owner,
                thread_ids=plan.renew,
                now=now,
                ttl=self.settings.lease,
                progress=plan.progress,
            )
            self._lost(lost, runs)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the heartbeat, then release every lease this saver holds.

        What a saver does when it closes (``from_conn_string`` on exit): a
        failed or cancelled run's lease is released now, not by a heartbeat
        that would outlive the saver's connection. A release that fails is
        logged; its lease then lapses and recovery takes the thread.
        """
        with self._thread_lock:
            self._wake.set()
            thread, self._thread = self._thread, None
            watcher = self._watcher
        for t in (thread, watcher):
            if t is not None and t is not threading.current_thread():
                # a beat or a watch in progress finishes before the leases are released
                t.join(timeout)
        now = self.clock()
        for thread_id, reason, error in self.book.release_all():
            try:
                with self._io_lock(thread_id):
                    self.store.release_lease(
                        thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                    )
            except Exception:
                log.warning("could not release the lease of thread %r on close", thread_id)
