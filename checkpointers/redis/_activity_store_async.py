"""Activity results on Redis: ``saver.activities``.

Its methods run the I/O-free operations of :mod:`._activities` on the saver's
runner. Written once as async code; the sync store is generated from it by
``tools/async_to_sync.py``. The async store also has the sync methods, for
sync code on other threads than the saver's loop (``sync_bridges``).
"""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._activities import ActivityRecord
from langgraph_durable.checkpointers._sync_bridges import sync_bridges
from langgraph_durable.checkpointers.redis import _activities as activities
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._runner_async import AsyncRedisRunner


@sync_bridges("get_activity", "put_activity")  # async-only
class AsyncRedisActivities:
    """Activity results, insert-once per ``(thread_id, key)``: ``ActivityStore``."""

    def __init__(self, runner: AsyncRedisRunner, core: RedisCore) -> None:
        self._runner = runner
        self._core = core

    async def aget_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """The recorded result of activity ``key`` on ``thread_id``, or ``None``."""
        op = activities.get_activity(self._core, thread_id, key)
        return await self._runner.run("get_activity", op)

    async def aput_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Record ``value`` unless a result exists; return the stored record."""
        op = activities.put_activity(self._core, thread_id, key, value)
        return await self._runner.run("put_activity", op)
