"""Where ``activity`` records results: the saver, one way or another.

Two implementations behind one small interface:

* :class:`_NativeStore` uses a saver that implements
  :class:`langgraph_durable.checkpointers.ActivityStore` (ours do: a table in PostgreSQL, a hash
  in Redis), keyed by ``(thread_id, key)``.
* :class:`_WritesStore` works with any ``BaseCheckpointSaver``: the result is a
  *pending write* of the checkpoint the node runs from, filed under a pseudo
  task id of its own (``__activity__:<key>``) on a reserved channel. Every saver
  persists pending writes durably and deletes them with the thread; LangGraph
  only applies writes of the tasks it prepared, so these are never read as
  state. A node re-executed after a crash runs from that same checkpoint (that
  is what re-execution means), so it finds the write.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_durable.interrupts._pregel import CONFIG_KEY_CHECKPOINTER

ACTIVITY_CHANNEL = "__durable_activity__"
"""The reserved channel name of activity results kept as pending writes."""

_MISSING = object()


def _pseudo_task_id(key: str) -> str:
    # one pseudo task per key: savers index writes by (task_id, idx), so
    # distinct keys must not share a task id or one would hide the other
    return f"__activity__:{key}"


class _NativeStore:
    def __init__(self, store: Any, thread_id: str) -> None:
        # the saver's activity store (or a saver that implements ActivityStore itself)
        self.store = store
        self.thread_id = thread_id

    def get(self, key: str) -> Any:
        rec = self.store.get_activity(thread_id=self.thread_id, key=key)
        return _MISSING if rec is None else rec.value

    def put(self, key: str, value: Any) -> Any:
        return self.store.put_activity(thread_id=self.thread_id, key=key, value=value).value

    async def aget(self, key: str) -> Any:
        if not hasattr(self.store, "aget_activity"):  # a store with sync calls only
            return await asyncio.to_thread(self.get, key)
        rec = await self.store.aget_activity(thread_id=self.thread_id, key=key)
        return _MISSING if rec is None else rec.value

    async def aput(self, key: str, value: Any) -> Any:
        if not hasattr(self.store, "aput_activity"):
            return await asyncio.to_thread(self.put, key, value)
        rec = await self.store.aput_activity(thread_id=self.thread_id, key=key, value=value)
        return rec.value


class _WritesStore:
    def __init__(
        self, saver: BaseCheckpointSaver[Any], thread_id: str, parent_ns: str, checkpoint_id: str
    ) -> None:
        self.saver = saver
        self.config: Any = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": parent_ns,
                "checkpoint_id": checkpoint_id,
            }
        }

    @staticmethod
    def _find(tup: Any, key: str) -> Any:
        if tup is None:
            return _MISSING
        tid = _pseudo_task_id(key)
        for task_id, channel, value in tup.pending_writes or ():
            if task_id == tid and channel == ACTIVITY_CHANNEL:
                return value
        return _MISSING

    def get(self, key: str) -> Any:
        return self._find(self.saver.get_tuple(self.config), key)

    def put(self, key: str, value: Any) -> Any:
        self.saver.put_writes(self.config, [(ACTIVITY_CHANNEL, value)], _pseudo_task_id(key))
        return value

    async def aget(self, key: str) -> Any:
        return self._find(await self.saver.aget_tuple(self.config), key)

    async def aput(self, key: str, value: Any) -> Any:
        await self.saver.aput_writes(self.config, [(ACTIVITY_CHANNEL, value)], _pseudo_task_id(key))
        return value


class _NoStore:
    """No checkpointer: nothing survives the process, so nothing is recorded."""

    def get(self, key: str) -> Any:
        return _MISSING

    def put(self, key: str, value: Any) -> Any:
        return value

    async def aget(self, key: str) -> Any:
        return _MISSING

    async def aput(self, key: str, value: Any) -> Any:
        return value


Store = _NativeStore | _WritesStore | _NoStore


def store_for(
    configurable: dict[str, Any], thread_id: str | None, parent_ns: str, checkpoint_id: str | None
) -> Store:
    """The store for a node's activity calls, given its config's ``configurable``."""
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
    if saver is None or thread_id is None:
        return _NoStore()
    # the saver itself, or the activity store it holds (the langgraph-durable savers)
    native = saver if hasattr(saver, "get_activity") else getattr(saver, "activities", None)
    if hasattr(native, "get_activity") and hasattr(native, "put_activity"):
        return _NativeStore(native, thread_id)
    if checkpoint_id is None:
        return _NoStore()
    return _WritesStore(saver, thread_id, parent_ns, checkpoint_id)


def is_missing(value: Any) -> bool:
    """``True`` if a store lookup found nothing."""
    return value is _MISSING
