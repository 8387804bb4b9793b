"""Pending writes being stored, so that a ``put`` of the step after them waits for them.

LangGraph hands a step's ``put_writes`` and the next checkpoint's ``put`` to its
background executor one after the other, where they run at the same time. The
checkpoint's value holds the items the writes hold, and a delta refers to the
writes instead of copying them only if they are stored when the
``put`` builds its rows; when the ``put`` overtakes them, the delta copies the
items, and every later snapshot moves. The savers register each ``put_writes``
here when it starts; a ``put`` whose parent checkpoint has writes in flight in
this process waits for them (briefly, bounded by ``timeout``) before it builds
its rows. Waiting never changes what is stored, only whether a delta refers or
copies; a ``put_writes`` that fails just ends its wait.

The wait costs a run with ``durability="sync"`` a round trip per step (LangGraph
blocks each step on its ``put``, which would otherwise overlap the writes), so
such runs do not wait: their puts may copy, as before.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Hashable

__all__ = ["WritesInFlight"]

_POLL_S = 0.0005


class WritesInFlight:
    """Counts the ``put_writes`` running per (thread, namespace, checkpoint). Thread-safe.

    Args:
        timeout: The longest a ``put`` waits, in seconds.
    """

    def __init__(self, timeout: float = 1.0) -> None:
        self.timeout = timeout
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._running: dict[Hashable, int] = {}
        self._settled = threading.Condition()

    def _own(self) -> None:
        # a forked child inherits counts of writes it does not run (and maybe a
        # lock held by a thread it does not have): it starts empty
        if self._pid != os.getpid():
            self._reset()

    def begin(self, key: Hashable) -> None:
        """A ``put_writes`` for ``key`` starts (call :meth:`end` when it returns or fails)."""
        self._own()
        with self._settled:
            self._running[key] = self._running.get(key, 0) + 1

    def end(self, key: Hashable) -> None:
        """A ``put_writes`` for ``key`` returned or failed."""
        with self._settled:
            left = self._running.get(key, 0) - 1
            if left > 0:
                self._running[key] = left
            else:
                self._running.pop(key, None)
                self._settled.notify_all()

    def running(self, key: Hashable) -> bool:
        """Whether a ``put_writes`` for ``key`` is running in this process."""
        return key in self._running

    def wait(self, key: Hashable) -> None:
        """Block until no ``put_writes`` for ``key`` runs, or ``timeout`` passed."""
        self._own()
        if key not in self._running:
            return
        with self._settled:
            self._settled.wait_for(lambda: key not in self._running, self.timeout)

    async def await_settled(self, key: Hashable) -> None:
        """:meth:`wait` for an event loop (the writes run as tasks of a loop)."""
        self._own()
        if key not in self._running:
            return
        until = time.monotonic() + self.timeout
        # polled: the writes may run on another thread's loop (a sync bridge),
        # whose asyncio.Event this loop could not wait on
        while key in self._running and time.monotonic() < until:  # noqa: ASYNC110
            await asyncio.sleep(_POLL_S)
