"""What keeps run leases alive, per mode: daemon threads, or tasks on the run's event loop.

:class:`~langgraph_durable.checkpointers._run_leases.RunLeases` and
:class:`~langgraph_durable.checkpointers._run_leases_async.AsyncRunLeases` are
one source; the two ways they wait, renew in the background and stop are here:
:class:`Heartbeat` with threads and :class:`AsyncHeartbeat` with asyncio tasks.
Each calls back into its driver for what a beat, a watch and a close do
(``beat``, ``_watch_book``, ``_release_all``).
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import threading
import time
import weakref

from langgraph_durable.checkpointers._run_lease_core import RunLeasesCore, log

__all__ = ["AsyncHeartbeat", "Heartbeat"]

_ThreadLocks = weakref.WeakValueDictionary[str, _thread.LockType]
_LoopLocks = weakref.WeakValueDictionary[tuple[asyncio.AbstractEventLoop, str], asyncio.Lock]


class Heartbeat(RunLeasesCore):
    """The heartbeat and the watcher of sync run leases: daemon threads."""

    def _after_fork(self) -> None:
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._locks: _ThreadLocks = weakref.WeakValueDictionary()
        self._locks_lock = threading.Lock()

    def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the thread then exits)."""
        raise NotImplementedError

    def _watch_book(self) -> None:
        raise NotImplementedError

    def _release_all(self) -> None:
        raise NotImplementedError

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

    def _ensure_watcher(self) -> None:
        with self._thread_lock:
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(
                    target=self._watch, name="durable-lease-watch", daemon=True
                )
                self._watcher.start()

    def _watch(self) -> None:
        while True:
            self._watch_book()
            with self._thread_lock:  # a run admitted meanwhile finds no watcher
                ended, _, going = self.book.watch(time.monotonic())
                if self._wake.is_set() or not (ended or going):
                    self._watcher = None
                    return

    def _paused(self, seconds: float) -> bool:
        return self._wake.wait(seconds)

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

    def _beating(self) -> bool:
        with self._thread_lock:
            if not self.book.held_threads():
                self._thread = None
                return False
        return True

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
        self._release_all()


class AsyncHeartbeat(RunLeasesCore):
    """The heartbeat and the watcher of async run leases: tasks on the run's event loop."""

    def _after_fork(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._locks: _LoopLocks = weakref.WeakValueDictionary()

    async def beat(self) -> bool:
        """Run one heartbeat now; ``False`` once nothing is held (the task then ends)."""
        raise NotImplementedError

    async def _watch_book(self) -> None:
        raise NotImplementedError

    async def _release_all(self) -> None:
        raise NotImplementedError

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

    def _ensure_watcher(self) -> None:
        loop = asyncio.get_running_loop()
        task = self._watcher
        if task is None or task.done() or task.get_loop() is not loop:
            self._watcher = loop.create_task(self._watch_book(), name="durable-lease-watch")

    async def _paused(self, seconds: float) -> bool:
        # closing cancels the watcher task instead
        await asyncio.sleep(seconds)
        return False

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

    def _beating(self) -> bool:
        if not self.book.held_threads():
            self._task = None
            return False
        return True

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

        See :meth:`Heartbeat.close`.
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
        await self._release_all()
