# Generated from checkpointers/_run_leases_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Run leases held by a saver: :class:`RunLeases`, the driver of its run leases.

Written once as async code; the sync savers' driver is generated from it by
``tools/async_to_sync.py`` (the heartbeat, a thread or a task, is the one part
written per mode). The driver runs a
:class:`~langgraph_durable.checkpointers._run_book.RunBook` against a lease store: it takes a
thread's lease when a run of it starts writing, gives it back when the run
finishes, pauses or is gone, and renews held leases from a
background heartbeat (:mod:`langgraph_durable.checkpointers._lease_heartbeat`: a daemon
thread, or an asyncio task on the run's event loop) that makes one batched
round trip per interval and never blocks the graph. The acquire travels with
the run's first write and the release with its last, in the same round trip
(the lease store's ``run_with_lease``: one Postgres pipeline or one Redis
pipeline), so a run shorter than the heartbeat interval pays no round trip of
its own for its lease. A run that finds its thread leased by a dead or silent
owner takes the lease over (:mod:`langgraph_durable.checkpointers._lease_flows`).
What both drivers decide is in :mod:`langgraph_durable.checkpointers._run_lease_core`.

A saver opts in with the class decorator :func:`sync_run_leases`
(:mod:`langgraph_durable.checkpointers._leased_writes`) and sets the
attribute ``run_leases``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from datetime import datetime
from typing import Any

from langgraph_durable.checkpointers import _lease_flows as flows
from langgraph_durable.checkpointers._lease_driver import drive
from langgraph_durable.checkpointers._lease_heartbeat import Heartbeat
from langgraph_durable.checkpointers._leases import (
    CLEAN_ENDS,
    ENDED_GONE,
    LeaseRecord,
    LeaseSettings,
    LeaseStore,
)
from langgraph_durable.checkpointers._multitask import (
    Busy,
    Multitask,
    admission,
    paused_at_exit,
    watching,
)
from langgraph_durable.checkpointers._run_book import Decision, Plan
from langgraph_durable.checkpointers._run_lease_core import (
    Clock,
    LeaseTarget,
    log,
)

__all__ = ["BookSteps", "RunLeases"]

OnExit = Callable[..., None]
Ended = list[tuple[str, str, str | None]]


class RunLeases(Heartbeat):
    """The run leases of one saver.

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
        self._after_fork()

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
        drive(BookSteps(self), admission(thread_id, runtime, policy))
        self._ensure_heartbeat()
        self._ensure_watcher()

    def _watch_book(self) -> None:
        drive(BookSteps(self), watching(self.book))

    def returned(self, thread_id: str, runtime: Any, loop: Any) -> OnExit:
        """An exit callback for a run's LangGraph ``loop``: release its lease as it returns.

        A run that finished released it with its last checkpoint already. A run
        with a strategy that paused or failed, and any run that paused at a
        static breakpoint, releases it here, after its last write. A failed
        release is left to the watcher and the heartbeat (the run is over).
        """

        def on_exit(*_exc: Any) -> None:
            paused = paused_at_exit(loop)
            with self._io_lock(thread_id):
                ended = self.book.end_run(thread_id, runtime, paused=paused)
                if ended is None:
                    return
                held, reason = ended
                try:
                    self.store.release_lease(
                        thread_id=thread_id,
                        owner=self.owner,
                        now=self.clock(),
                        reason=reason,
                        error=held.error,
                    )
                except Exception:  # the run's outcome stands
                    self.book.restore(held)
                    log.exception("releasing the lease of thread %r failed", thread_id)

        return on_exit

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

    def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the heartbeat then stops)."""
        plan = self.book.plan()
        if plan.collect:
            gc.collect()
            plan = self.book.plan()
        self._apply(plan)
        return self._beating()

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
        self._release_ended(plan.ended, now)
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

    def _release_ended(self, ended: Ended, now: datetime) -> None:
        for thread_id, reason, error in ended:
            with self._io_lock(thread_id):
                # not if a new run of the thread took its place since the plan
                if self.book.drop_over(thread_id) is None:
                    continue
                self.store.release_lease(
                    thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                )

    def _release_all(self) -> None:
        # on close, after the heartbeat stopped: a release that fails is logged
        # and its lease lapses (recovery takes the thread)
        now = self.clock()
        for thread_id, reason, error in self.book.release_all():
            try:
                with self._io_lock(thread_id):
                    self.store.release_lease(
                        thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                    )
            except Exception:
                log.warning("could not release the lease of thread %r on close", thread_id)


class BookSteps:
    """Where the :func:`admission` and :func:`watching` steps of a saver's runs go."""

    def __init__(self, leases: RunLeases) -> None:
        self._leases = leases

    def attempt(self, *, thread_id: str, runtime: Any) -> Busy | None:
        """One try at the lease, ordered with the thread's other lease statements."""
        leases = self._leases
        with leases._io_lock(thread_id):
            busy: Busy | None = drive(leases.store, leases.attempt(thread_id, runtime))
            return busy

    def pause(self, *, seconds: float) -> bool:
        """Wait between two looks at the book; ``True`` once the saver is closing."""
        return bool(self._leases._paused(seconds))

    def release_ended(self, *, ended: Ended) -> None:
        """Release the leases of runs found over."""
        try:
            self._leases._release_ended(ended, self._leases.clock())
        except Exception:  # the heartbeat releases them later
            log.exception("releasing the lease of a finished run failed")
