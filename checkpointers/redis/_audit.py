"""The audit trail on Redis: a stream per thread, in the thread's hash slot.

Entries are ``XADD``-ed to ``<prefix>:{t:<thread>}:au`` (field ``e``: the entry
as JSON); entries written from a node carry a dedupe key, remembered in the
set ``...:aud`` (a second append with the same key is skipped, in one script).
A decision's entry is appended by the decision's own script
(:mod:`._approvals_lua`). The stream id orders the entries; ``seq`` is derived
from it. Neither key is one of the thread's keys, so ``delete_thread``, TTL
expiry and ``copy_thread`` leave the audit alone; :func:`purge_audit` (the
retention call) deletes the thread and its audit. Redis has no triggers: the
stream is append-only by this code's discipline, and a deployment that wants
the server to refuse edits gives the application's user an ACL without
``XDEL``/``XTRIM``/``DEL`` on ``*:au`` keys (see the README).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

from langgraph_durable.checkpointers._audit import DeferredAuditMixin
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.redis import _approvals_lua as L
from langgraph_durable.checkpointers.redis._approvals import entry_json
from langgraph_durable.checkpointers.redis._core import Call, RedisCore, script

Op = Generator[Call, Any, Any]


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def seq_of(stream_id: str) -> int:
    """An increasing integer from a stream id ``<ms>-<n>``."""
    ms, _, n = stream_id.partition("-")
    return int(ms) * 1_000_000 + int(n or 0)


def append_audit(core: RedisCore, entries: Sequence[dict[str, Any]]) -> Op:
    """Append entries, one script per thread (atomic per thread, dedupe keys once)."""
    by_thread: dict[str, list[Any]] = {}
    for e in entries:
        thread_id = check_id("thread_id", e["thread_id"])
        by_thread.setdefault(thread_id, []).extend([e.get("dedupe_key") or "", entry_json(e)])
    if by_thread:
        yield Call(
            [script(L.APPEND_AUDIT, core.keys.audit(t), *args) for t, args in by_thread.items()]
        )


def read_audit(core: RedisCore, thread_id: str) -> Op:
    """The thread's entries in stream order, each with its ``seq``."""
    stream = core.keys.audit(check_id("thread_id", thread_id))[0]
    (rows,) = yield Call([("XRANGE", stream, "-", "+")])
    out = []
    for stream_id, fields in rows or ():
        if isinstance(fields, dict):
            raw = fields.get(b"e", fields.get("e"))
        else:  # a flat [field, value, ...] list
            flat = list(fields)
            raw = dict(zip(flat[0::2], flat[1::2], strict=True)).get(b"e")
        if raw is None:
            continue  # not an entry this code wrote
        entry = json.loads(raw)
        out.append({"seq": seq_of(_text(stream_id)), **entry})
    return out


def purge_audit(core: RedisCore, thread_id: str) -> Op:
    """Retention: delete the thread's audit stream and dedupe set (one script).

    The shells delete the thread first (``delete_thread``), so a failure in
    between leaves the audit whole and the call can be repeated.
    """
    thread_id = check_id("thread_id", thread_id)
    (gone,) = yield Call([script(L.PURGE_AUDIT, core.keys.audit(thread_id))])
    return int(gone)


class SyncAudit:
    """Sync shell: :class:`~langgraph_durable.checkpointers.AuditLog`."""

    _core: RedisCore

    if TYPE_CHECKING:

        def _run(self, operation: str, gen: Any) -> Any: ...

        def delete_thread(self, thread_id: str) -> None: ...

    def append_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Append audit entries (``dedupe_key`` ones at most once per thread)."""
        self._run("append_audit", append_audit(self._core, entries))

    def read_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """The thread's audit entries, in order."""
        return self._run("read_audit", read_audit(self._core, thread_id))  # type: ignore[no-any-return]

    def purge_audit(self, *, thread_id: str) -> int:
        """Retention: delete the thread and its audit stream; how many entries went."""
        self.delete_thread(thread_id)  # the saver's own delete: its lease goes too
        return int(self._run("purge_audit", purge_audit(self._core, thread_id)))


class AsyncAudit(DeferredAuditMixin):
    """Async shell, plus the sync bridges the async saver offers for other threads."""

    _core: RedisCore

    if TYPE_CHECKING:

        async def _run(self, operation: str, gen: Any) -> Any: ...

        def _sync(self, coro: Any) -> Any: ...

        async def adelete_thread(self, thread_id: str) -> None: ...

    async def aappend_audit(self, *, entries: Sequence[dict[str, Any]]) -> None:
        """Async twin of ``append_audit``."""
        await self._run("append_audit", append_audit(self._core, entries))

    async def aread_audit(self, *, thread_id: str) -> list[dict[str, Any]]:
        """Async twin of ``read_audit``."""
        return await self._run("read_audit", read_audit(self._core, thread_id))  # type: ignore[no-any-return]

    async def apurge_audit(self, *, thread_id: str) -> int:
        """Async twin of ``purge_audit``."""
        await self.adelete_thread(thread_id)
        return int(await self._run("purge_audit", purge_audit(self._core, thread_id)))

    def append_audit(self, **kwargs: Any) -> None:
        """Sync :meth:`aappend_audit`."""
        self._sync(self.aappend_audit(**kwargs))

    def read_audit(self, **kwargs: Any) -> list[dict[str, Any]]:
        """Sync :meth:`aread_audit`."""
        return self._sync(self.aread_audit(**kwargs))  # type: ignore[no-any-return]

    def purge_audit(self, **kwargs: Any) -> int:
        """Sync :meth:`apurge_audit`."""
        return self._sync(self.apurge_audit(**kwargs))  # type: ignore[no-any-return]
