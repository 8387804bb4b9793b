"""The audit trail on Redis: a stream per thread, in the thread's hash slot.

Entries are ``XADD``-ed to ``<prefix>:{t:<thread>}:au`` (fields ``e``: the
entry as JSON, ``n``: its chain position, ``h``: its link, see
:mod:`langgraph_durable.checkpointers._audit_chain`) by a script that chains
them (:mod:`._audit_lua`); the chain's head is the hash ``...:auh``. Entries
written from a node carry a dedupe key, remembered in the set ``...:aud`` (a
second append with the same key is skipped, in the same script). A decision's
entry is appended by the decision's own script (:mod:`._approvals_lua`). The
stream id orders the entries; ``seq`` is derived from it. None of these keys is
one of the thread's keys, so ``delete_thread``, TTL expiry and ``copy_thread``
leave the audit alone; :func:`purge_audit` (the retention call) deletes the
thread and its entries and keeps the head. Redis has no triggers: the stream is
append-only by this code's discipline, edits made past it are found by
:func:`verify_audit`, and a deployment that wants the server to refuse them
gives the application's user an ACL without ``XDEL``/``XTRIM``/``DEL`` on the
audit keys (see the README).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Generator, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from langgraph_durable.checkpointers._audit_chain import (
    GENESIS,
    AuditVerification,
    ChainedEntry,
    ChainHead,
    check_chain,
)
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.redis import _audit_lua as L
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._decision_ops import entry_args
from langgraph_durable.checkpointers.redis._ops import Call, script
from langgraph_durable.checkpointers.redis._outbox_events import outbox_hint, reminder_event

T = TypeVar("T")
Op = Generator[Call, Any, T]


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def seq_of(stream_id: str) -> int:
    """An increasing integer from a stream id ``<ms>-<n>``."""
    ms, _, n = stream_id.partition("-")
    return int(ms) * 1_000_000 + int(n or 0)


def _chain_keys(core: RedisCore, thread_id: str) -> list[str]:
    return [*core.keys.audit(thread_id), core.keys.audit_head(thread_id)]


def append_audit(core: RedisCore, entries: Sequence[dict[str, Any]]) -> Op[Any]:
    """Append entries, one script per thread (atomic per thread, dedupe keys once)."""
    by_thread: dict[str, list[Any]] = {}
    hints: list[Any] = []
    for e in entries:
        thread_id = check_id("thread_id", e["thread_id"])
        event = reminder_event(e)
        if event is not None:
            hints.append(outbox_hint(core.keys, thread_id, event[0]))
        by_thread.setdefault(thread_id, []).extend(
            [e.get("dedupe_key") or "", *entry_args(e), *(event or ("", ""))]
        )
    if by_thread:
        # a reminder's outbox shard entry first, so a stored event is always listed
        yield Call(
            hints
            + [
                script(L.APPEND_AUDIT, [*_chain_keys(core, t), core.keys.outbox(t)], *args)
                for t, args in by_thread.items()
            ]
        )


def _fields(fields: Any) -> dict[str, Any]:
    """A stream entry's (or a hash's) fields by name: from a dict or a flat list."""
    if isinstance(fields, dict):
        pairs = list(fields.items())
    else:
        flat = list(fields or ())
        pairs = list(zip(flat[0::2], flat[1::2], strict=False))
    return {_text(k): v for k, v in pairs}


def read_audit(core: RedisCore, thread_id: str) -> Op[list[dict[str, Any]]]:
    """The thread's entries in stream order, each with its ``seq``."""
    stream = core.keys.audit(check_id("thread_id", thread_id))[0]
    (rows,) = yield Call([("XRANGE", stream, "-", "+")])
    out = []
    for stream_id, fields in rows or ():
        raw = _fields(fields).get("e")
        if raw is None:
            continue  # not an entry this code wrote
        entry = json.loads(raw)
        out.append({"seq": seq_of(_text(stream_id)), **entry})
    return out


def _int(v: Any) -> int | None:
    try:
        return int(_text(v))
    except (TypeError, ValueError):
        return None


def _link(v: Any) -> bytes | None:
    if v is None:
        return None
    try:
        return bytes.fromhex(_text(v))
    except ValueError:
        return b""  # not a link this code wrote: never matches


def _head(fields: dict[str, Any], stored: int) -> ChainHead:
    position = _int(fields.get("n"))
    if position is None:
        # no head yet: a stream written before layout step 7 (or none at all);
        # the head its next append creates counts its entries as older ones
        return ChainHead(position=stored, link=GENESIS, base_position=stored, legacy=stored)
    purged_ms = _int(fields.get("pat"))
    return ChainHead(
        position=position,
        link=_link(fields.get("h")) or b"",
        base_position=_int(fields.get("bn")) or 0,
        base_link=_link(fields.get("bh")) or b"",
        legacy=_int(fields.get("l")) or 0,
        purged=_int(fields.get("pn")) or 0,
        purged_at=None
        if purged_ms is None
        else datetime.fromtimestamp(purged_ms / 1000, tz=timezone.utc),
    )


def verify_audit(core: RedisCore, thread_id: str) -> Op[AuditVerification]:
    """Check the thread's chain against its stored entries (read in one script)."""
    thread_id = check_id("thread_id", thread_id)
    keys = [core.keys.audit(thread_id)[0], core.keys.audit_head(thread_id)]
    ((head, rows),) = yield Call([script(L.READ_CHAIN, keys)])
    entries = []
    for stream_id, raw_fields in rows or ():
        fields = _fields(raw_fields)
        body = fields.get("e")
        data = body if isinstance(body, bytes) else _text(body or "").encode("utf-8")
        entries.append(
            ChainedEntry(
                seq=seq_of(_text(stream_id)),
                position=_int(fields.get("n")),
                link=_link(fields.get("h")),
                digest=hashlib.sha256(data).digest(),
            )
        )
    return check_chain(thread_id, _head(_fields(head), len(entries)), entries)


def purge_audit(core: RedisCore, thread_id: str) -> Op[Any]:
    """Retention: delete the thread's audit stream and dedupe set (one script).

    The shells delete the thread first (``delete_thread``), so a failure in
    between leaves the audit whole and the call can be repeated.
    """
    thread_id = check_id("thread_id", thread_id)
    now_ms = str(int(time.time() * 1000))
    (gone,) = yield Call([script(L.PURGE_AUDIT, _chain_keys(core, thread_id), now_ms)])
    return int(gone)
