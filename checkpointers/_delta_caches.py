"""What a saver remembers between calls to store growing values as deltas (no I/O).

:class:`ChainCache` holds the newest chain state per channel, so a ``put`` knows the
version it extends; :class:`WriteCache` holds a step's recent pending writes, so
the delta can refer to them instead of copying their bytes. Losing an entry of
either costs bytes, never a wrong read. The encoding itself is :mod:`._delta`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from langgraph_durable.checkpointers._delta import Link, WriteRef, write_body

__all__ = ["ChainCache", "WriteCache"]


class ChainCache:
    """The newest known chain state per (thread, namespace, channel), bounded in bytes.

    A saver keeps one and shares it between its sync and async calls. Entries
    only ever let a ``put`` write a delta instead of a full value; losing one
    (eviction, another process writing the thread) costs a snapshot, never a
    wrong read. Thread-safe.

    Args:
        max_bytes: Evict least recently used entries beyond this many body bytes.
    """

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str, str], Link] = OrderedDict()
        # channels cached per (thread, namespace), for reads that skip known chains
        self._channels: dict[tuple[str, str], set[str]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def _drop(self, key: tuple[str, str, str]) -> None:
        chans = self._channels.get(key[:2])
        if chans is not None:
            chans.discard(key[2])
            if not chans:
                del self._channels[key[:2]]

    def links(self, thread_id: str, checkpoint_ns: str) -> list[tuple[str, Link]]:
        """``(channel, link)`` of every channel of a thread and namespace cached."""
        with self._lock:
            chans = self._channels.get((thread_id, checkpoint_ns))
            if not chans:
                return []
            return [(ch, self._entries[(thread_id, checkpoint_ns, ch)]) for ch in chans]

    def get(self, thread_id: str, checkpoint_ns: str, channel: str) -> Link | None:
        """The chain state to extend for this channel, if known."""
        key = (thread_id, checkpoint_ns, channel)
        with self._lock:
            link = self._entries.get(key)
            if link is not None:
                self._entries.move_to_end(key)
            return link

    def put(self, thread_id: str, checkpoint_ns: str, channel: str, link: Link | None) -> None:
        """Remember ``link`` (call after the write that stored it committed)."""
        key = (thread_id, checkpoint_ns, channel)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
                self._drop(key)
            if link is None or len(link.body) > self.max_bytes:
                return
            self._entries[key] = link
            self._channels.setdefault(key[:2], set()).add(channel)
            self._bytes += len(link.body)
            while self._bytes > self.max_bytes:
                gone, evicted = self._entries.popitem(last=False)
                self._bytes -= len(evicted.body)
                self._drop(gone)

    def forget(self, thread_id: str, checkpoint_ns: str | None = None) -> None:
        """Drop a thread's entries (all namespaces if ``checkpoint_ns`` is None)."""
        with self._lock:
            for key in [
                k
                for k in self._entries
                if k[0] == thread_id and (checkpoint_ns is None or k[1] == checkpoint_ns)
            ]:
                self._bytes -= len(self._entries.pop(key).body)
                self._drop(key)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._channels.clear()
            self._bytes = 0


class WriteCache:
    """Recent pending writes per (thread, namespace, checkpoint), for ``put`` to refer to.

    ``put_writes`` stores a step's new items before ``put`` stores the value
    they extend; the saver remembers the writes here so that the delta can
    name them instead of copying their bytes. Losing an entry costs a copy,
    never correctness: the backend checks the referenced bytes when it
    stores the delta. Bounded in bytes, least recently used out. Thread-safe.

    Args:
        max_bytes: Evict least recently used checkpoints beyond this many bytes.
    """

    def __init__(self, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str, str], list[tuple[str, WriteRef]]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def add(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        writes: Iterable[tuple[str, WriteRef]],
    ) -> None:
        """Remember ``(channel, write)`` pairs stored for a checkpoint (list values only)."""
        kept = [(ch, w) for ch, w in writes if w.idx >= 0 and write_body(w.type, w.blob)]
        if not kept:
            return
        key = (thread_id, checkpoint_ns, checkpoint_id)
        with self._lock:
            entry = self._entries.setdefault(key, [])
            have = {(w.task_id, w.idx) for _, w in entry}
            for ch, w in kept:
                if (w.task_id, w.idx) not in have:  # stores keep the first write
                    entry.append((ch, w))
                    self._bytes += len(w.blob)
            self._entries.move_to_end(key)
            while self._bytes > self.max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= sum(len(w.blob) for _, w in evicted)

    def get(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None, channel: str
    ) -> list[WriteRef]:
        """The remembered writes of a checkpoint to ``channel``."""
        if not checkpoint_id:
            return []
        with self._lock:
            entry = self._entries.get((thread_id, checkpoint_ns, checkpoint_id))
            return [w for ch, w in entry or () if ch == channel]

    def forget(self, thread_id: str) -> None:
        """Drop a thread's entries."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == thread_id]:
                self._bytes -= sum(len(w.blob) for _, w in self._entries.pop(key))
