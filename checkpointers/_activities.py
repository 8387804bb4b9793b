"""The activity-result store: the protocol :func:`langgraph_durable.interrupts.activity` uses.

An *activity* is a side-effect call made inside a graph node (charge a card,
send an e-mail). :func:`langgraph_durable.interrupts.activity` derives a stable idempotency key
for each call and records the call's result once it returns, so a node that is
re-executed after a crash returns the recorded result instead of calling again.

A saver that implements :class:`ActivityStore` keeps those results in its own
storage (our savers: a table in PostgreSQL, a hash in the thread's hash slot in
Redis) and deletes them with the thread (``delete_thread``). Any other
``BaseCheckpointSaver`` works too: :mod:`interrupts` then keeps the result as a
pending write of the checkpoint the node runs from (see
``interrupts/_activity_store.py``), which every saver persists and deletes with
the thread.

Values are whatever the activity returned; the saver serializes them with its
own ``serde`` (no pickle), so they must be types that serde can rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ActivityRecord:
    """One recorded activity result.

    Attributes:
        thread_id: The thread whose node made the call.
        key: The call's idempotency key (unique within the thread).
        value: What the activity returned.
        created_at: When the result was first recorded (UTC), if the store knows.
    """

    thread_id: str
    key: str
    value: Any
    created_at: datetime | None = None


@runtime_checkable
class ActivityStore(Protocol):
    """Insert-once storage of activity results, keyed by ``(thread_id, key)``.

    Implementations must make :meth:`put_activity` atomic "insert if absent":
    when two workers race on the same key, the first stored value wins and both
    get it back. Results are deleted with their thread.
    """

    def get_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """The recorded result for ``key``, or ``None`` if none was recorded."""
        ...

    def put_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Record ``value`` unless a result exists; return the stored record."""
        ...

    async def aget_activity(self, *, thread_id: str, key: str) -> ActivityRecord | None:
        """Async twin of :meth:`get_activity`."""
        ...

    async def aput_activity(self, *, thread_id: str, key: str, value: Any) -> ActivityRecord:
        """Async twin of :meth:`put_activity`."""
        ...
