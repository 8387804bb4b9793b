"""Run leases of an async saver: :class:`AsyncRunLeases`, the heartbeat as an asyncio task.

The async twin of :class:`~langgraph_durable.checkpointers._run_leases.RunLeases`
(see that module for what run leases do); what both decide is in
:mod:`langgraph_durable.checkpointers._run_lease_core`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from typing import Any

from langgraph_durable.checkpointers import _lease_flows as flows
from langgraph_durable.checkpointers._lease_driver_async import adrive
from langgraph_durable.checkpointers._leased_writes_async import async_run_leases
from langgraph_durable.checkpointers._leases import (
    CLEAN_ENDS,
    ENDED_GONE,
    AsyncLeaseStore,
    LeaseRecord,
    LeaseSettings,
)
from langgraph_durable.checkpointers._multitask import AsyncTarget, Multitask, admission, watching
from langgraph_durable.checkpointers._run_book import Decision
from langgraph_durable.checkpointers._run_lease_core import (
    Clock,
    LeaseTarget,
    RunLeasesCore,
    lease_settings,
    log,
)

__all__ = ["AsyncRunLeases", "async_run_leases", "lease_settings"]

_Locks = weakref.WeakValueDictionary[tuple[asyncio.AbstractEventLoop, str], asyncio.Lock]


class AsyncRunLeases(RunLeasesCore):
    """Run leases of an async saver: the heartbeat is a task on the run's event loop."""

    def __init__(
        self,
        store: AsyncLeaseStore,
        settings: LeaseSettings | None = None,
        clock: Clock | None = None,
        *,
        multitask: Multitask | None = None,
    ) -> None:
        super().__init__(settings, clock, multitask)
        self.store = store
        self._task: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._locks: _Locks = weakref.WeakValueDictionary()

    def _after_fork(self) -> None:
        self._task = None
        self._watcher = None
        self._stop = None
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
                await self.store.arecord_lease_error(
                    thread_id=thread_id, owner=self.owner, error=decision.error
                )
            if decision.end is not None:
                self.book.drop(thread_id, decision.runtime)
                await self.store.arelease_lease(
                    thread_id=thread_id, owner=self.owner, now=self.clock(), reason=decision.end
                )

    async def around(
        self, saver: Any, operation: str, op: Any, before: Decision, after: Decision
    ) -> Any:
        """See :meth:`RunLeases.around`."""
        if before.start:
            self._check_fork()
        async with self._io_lock(before.thread_id or after.thread_id or ""):
            write = self._prepare(before, after)
            try:
                flow = self._around(write, operation, op, before, after)
                result, beat, settle = await adrive(LeaseTarget(saver, self.store), flow)
            except BaseException:
                self._failed(write)
                raise
        if beat:
            self._ensure_heartbeat()
        if settle:
            await self.after(after)
        return result

    def adopt(self, record: LeaseRecord) -> None:
        """Hold a lease claimed by a recovery worker with this saver's owner id."""
        self._check_fork()
        self.book.hold(record.thread_id, record.token, None)
        self._ensure_heartbeat()

    async def admit(self, thread_id: str, runtime: Any, policy: Multitask) -> None:
        """See :meth:`RunLeases.admit`."""
        self._check_fork()
        await adrive(AsyncTarget(self), admission(thread_id, runtime, policy))
        self._ensure_heartbeat()
        loop = asyncio.get_running_loop()
        task = self._watcher
        if task is None or task.done() or task.get_loop() is not loop:
            self._watcher = loop.create_task(
                adrive(AsyncTarget(self), watching(self.book)), name="durable-lease-watch"
            )

    async def release(self, thread_id: str, reason: str, error: str | None = None) -> bool:
        """Release a held lease now (recovery worker, after its run)."""
        async with self._io_lock(thread_id):
            if self.book.drop(thread_id) is None:
                return False
            return await self.store.arelease_lease(
                thread_id=thread_id, owner=self.owner, now=self.clock(), reason=reason, error=error
            )

    def _ensure_heartbeat(self) -> None:
        loop = asyncio.get_running_loop()
        task = self._task
        if task is not None and not task.done() and task.get_loop() is loop:
            return
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._run(self._stop), name="durable-lease-heartbeat")

    async def _run(self, stop: asyncio.Event) -> None:
        interval = self.settings.heartbeat.total_seconds()
        while True:
            # stopped between beats, never in the middle of one (aclose)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
            if stop.is_set():
                return
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
            if await adrive(
                self.store,
                flows.clear(
                    thread_id, token, self.owner, self.clock(), self.settings.lease, reason
                ),
            ):
                self.book.forget(thread_id, reason)

    async def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the task then ends)."""
        plan = self.book.plan()
        if plan.collect:
            gc.collect()
            plan = self.book.plan()
        now = self.clock()
        await self._release_ended(plan.ended)
        for thread_id in plan.contest:
            async with self._io_lock(thread_id):
                runtime, _ = self.book.rival_of(thread_id)
                if not self.book.is_contested(thread_id, runtime):
                    continue
                record, rival = await adrive(
                    self.store, flows.start(thread_id, self.owner, now, self.settings.lease)
                )
                if self._won(thread_id, runtime, record, rival):
                    await self.store.arelease_lease(
                        thread_id=thread_id, owner=self.owner, now=now, reason=ENDED_GONE
                    )
        for thread_id, _token, _reason in plan.clear:
            await self._clear(thread_id)
        if plan.renew:
            runs = self._runs_of(plan.renew)
            lost = await self.store.arenew_leases(
                owner=self.owner,
                thread_ids=plan.renew,
                now=now,
                ttl=self.settings.lease,
                progress=plan.progress,
            )
            self._lost(lost, runs)
        if not self.book.held_threads():
            self._task = None
            return False
        return True

    async def _release_ended(self, ended: list[tuple[str, str, str | None]]) -> None:
        now = self.clock()
        for thread_id, reason, error in ended:
            async with self._io_lock(thread_id):
                if self.book.drop_over(thread_id) is None:  # see RunLeases._apply
                    continue
                await self.store.arelease_lease(
                    thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                )

    def close(self) -> None:
        """Cancel the heartbeat and watcher tasks; held leases lapse unless released.

        :meth:`aclose` releases them too (what the savers do when they close).
        """
        if self._task is not None:
            self._task.cancel()
            self._task = self._stop = None
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

    async def aclose(self) -> None:
        """Stop the heartbeat task, then release every lease this saver holds.

        See :meth:`RunLeases.close`.
        """
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        task, stop = self._task, self._stop
        self._task = self._stop = None
        if task is not None and stop is not None and not task.done():
            loop = task.get_loop()
            if loop is asyncio.get_running_loop():
                stop.set()
                # a beat in progress ends before the leases are released
                await task
            elif not loop.is_closed():
                loop.call_soon_threadsafe(stop.set)
        now = self.clock()
        for thread_id, reason, error in self.book.release_all():
            try:
                async with self._io_lock(thread_id):
                    await self.store.arelease_lease(
                        thread_id=thread_id, owner=self.owner, now=now, reason=reason, error=error
                    )
            except Exception:
                log.warning("could not release the lease of thread %r on close", thread_id)
