"""Checkpoints being stored, so that an activity can wait until its step's checkpoint is.

An activity's idempotency key names the checkpoint its step runs from. Under
LangGraph's default ``durability="async"`` that checkpoint's ``put`` runs in
the background while the step's tasks run; if the process dies before it is
stored, the restarted run makes the step again from the checkpoint before,
under a new id, and the activity would get a new key. So an activity waits
until the checkpoint is stored before its side effect.

The savers settle each ``put`` here when it returns or raises; the registry
remembers the last checkpoints stored and the failures, so a waiter learns the
outcome in process, without a read, whether it asks before the put was sent
(LangGraph queues a put behind the one before), while it runs or after.
:class:`CheckpointPuts` is what ``interrupts`` sees of it.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from langgraph_durable.checkpointers._errors import CheckpointerError

__all__ = ["CheckpointPuts", "PutFailed", "PutsInFlight"]

Key = tuple[str, str, str]
_REMEMBERED = 4096
_REASON_CHARS = 500
_POLL_S = 0.0005


class PutFailed(CheckpointerError):
    """The ``put`` of a checkpoint raised in this process: it is not stored.

    Attributes:
        thread_id: The checkpoint's thread.
        checkpoint_ns: Its namespace.
        checkpoint_id: Its id.
        reason: What the put raised: the exception's type name and message
            (truncated; the exception itself is not kept, its traceback would
            keep the checkpoint alive).
    """

    def __init__(
        self, *, thread_id: str, checkpoint_ns: str, checkpoint_id: str, reason: str = ""
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.checkpoint_id = checkpoint_id
        self.reason = reason
        super().__init__(
            f"the put of checkpoint {checkpoint_id!r} of thread {thread_id!r} "
            f"(namespace {checkpoint_ns!r}) failed: {reason}"
        )


@runtime_checkable
class CheckpointPuts(Protocol):
    """What a saver knows, in this process, of the checkpoints it stores.

    Our savers implement it (``saver.checkpoint_puts``); on other savers
    ``interrupts`` reads the checkpoint with ``get_tuple`` instead.
    """

    def put_stored(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> bool:
        """Whether a ``put`` of this checkpoint returned in this process (recently)."""
        ...

    def wait_put(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, timeout: float
    ) -> bool:
        """Block until a ``put`` of this checkpoint returned in this process, or ``timeout``.

        Returns:
            ``True`` once stored; ``False`` when ``timeout`` passed first (its
            put did not start, or still runs).

        Raises:
            PutFailed: The put raised, or the put of an earlier checkpoint of its
                thread and namespace did and none was stored since (LangGraph
                then never sends it); its ``reason`` says what the put raised.
        """
        ...

    async def await_put(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, timeout: float
    ) -> bool:
        """:meth:`wait_put` for an event loop."""
        ...

    def namespace_seen(self, thread_id: str, checkpoint_ns: str) -> bool:
        """Whether this saver read or stored a checkpoint of this thread and namespace (recently).

        A subgraph that stores checkpoints reads its namespace's latest one
        when its loop starts, before its tasks run; one compiled with
        ``checkpointer=False`` never does.
        """
        ...


class PutsInFlight:
    """How the last ``put`` calls of (thread, namespace, checkpoint) ended, in this process.

    Thread-safe; a forked child starts empty (it runs none of its parent's puts).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        # key -> None (stored) or what the put raised (text only), oldest first
        self._ended: OrderedDict[Key, str | None] = OrderedDict()
        # (thread, namespace) -> the first failed put since its last stored checkpoint
        self._broken: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()
        # (thread, namespace) read or put through the saver, least recent first
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._changed = threading.Condition()

    def _own(self) -> None:
        if self._pid != os.getpid():
            self._reset()

    def settle(self, key: Key, error: BaseException | None = None) -> None:
        """A ``put`` of ``key`` returned (``error`` None) or raised ``error``."""
        self._own()
        reason = None if error is None else _reason(error)
        with self._changed:
            if reason is None or self._ended.get(key, reason) is not None:
                self._ended[key] = reason  # a stored checkpoint stays stored
                self._ended.move_to_end(key)
            if reason is None:
                self._broken.pop(key[:2], None)
            elif (key[0], key[1]) not in self._broken:
                self._broken[(key[0], key[1])] = (key[2], reason)
            self._saw(key[0], key[1])
            for remembered in (self._ended, self._broken):
                while len(remembered) > _REMEMBERED:
                    remembered.popitem(last=False)
            self._changed.notify_all()

    def _saw(self, thread_id: str, checkpoint_ns: str) -> None:
        self._seen[(thread_id, checkpoint_ns)] = None
        self._seen.move_to_end((thread_id, checkpoint_ns))
        while len(self._seen) > _REMEMBERED:
            self._seen.popitem(last=False)

    def read(self, config: Mapping[str, Any], found: Any) -> None:
        """A ``get_tuple`` of ``config`` returned ``found`` (a checkpoint tuple, or ``None``).

        What it returns is stored. A read of a thread's latest checkpoint is
        how a run starts: failed puts of that thread and namespace belong to
        an earlier run, and are no reason to give up on the new run's puts.
        """
        self._own()
        conf = config.get("configurable") or {}
        level = (str(conf.get("thread_id")), str(conf.get("checkpoint_ns") or ""))
        with self._changed:
            self._saw(*level)
            if not conf.get("checkpoint_id"):
                self._broken.pop(level, None)
        if found is not None:
            got = found.config["configurable"]
            self.settle(
                (str(got["thread_id"]), str(got["checkpoint_ns"]), str(got["checkpoint_id"]))
            )

    def _settled(self, key: Key) -> bool:
        broken = self._broken.get(key[:2])
        # LangGraph sends a run's puts one after the other, each only once the one
        # before was stored: after a failed put, the later checkpoints never come
        return key in self._ended or (broken is not None and broken[0] < key[2])

    def _outcome(self, key: Key) -> bool:
        if key in self._ended:
            reason = self._ended[key]
            failed = key[2]
        elif key[:2] in self._broken and self._broken[key[:2]][0] < key[2]:
            failed, reason = self._broken[key[:2]]
        else:
            return False
        if reason is not None:
            raise PutFailed(
                thread_id=key[0], checkpoint_ns=key[1], checkpoint_id=failed, reason=reason
            )
        return True

    def put_stored(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> bool:
        """Whether a ``put`` of this checkpoint returned in this process (recently)."""
        self._own()
        return self._ended.get((thread_id, checkpoint_ns, checkpoint_id), 1) is None

    def namespace_seen(self, thread_id: str, checkpoint_ns: str) -> bool:
        """See :meth:`CheckpointPuts.namespace_seen`."""
        self._own()
        return (thread_id, checkpoint_ns) in self._seen

    def wait_put(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, timeout: float
    ) -> bool:
        """See :meth:`CheckpointPuts.wait_put`."""
        self._own()
        key = (thread_id, checkpoint_ns, checkpoint_id)
        with self._changed:
            self._changed.wait_for(lambda: self._settled(key), max(timeout, 0.0))
            return self._outcome(key)

    async def await_put(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, timeout: float
    ) -> bool:
        """See :meth:`CheckpointPuts.await_put`."""
        self._own()
        key = (thread_id, checkpoint_ns, checkpoint_id)
        until = time.monotonic() + timeout
        # polled: the put may run on another thread's loop (a sync bridge, a
        # sync graph's executor), whose asyncio primitives this loop cannot wait on
        delay = _POLL_S
        while not self._settled(key) and time.monotonic() < until:
            await asyncio.sleep(min(delay, max(until - time.monotonic(), 0.0)))
            delay = min(delay * 2, 0.01)
        return self._outcome(key)


def _reason(error: BaseException) -> str:
    """What a failed put raised, as text: its traceback's frames hold the checkpoint."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 3] + "..."
