"""Approval decisions on Redis (compare-and-set once per key), as I/O-free operations.

Decisions live in the thread's ``dc`` hash (``HSETNX`` in a script: the first
one wins), with the decision's audit entry and outbox event written by the
same script, in the thread's slot. A decision on a wait also leaves a hint in
the resume-pending shards, for the sweepers to finish a resume its decider
did not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph_durable.checkpointers._audit import AUDIT_FIELDS
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import decision_claim_time
from langgraph_durable.checkpointers.redis import _approvals_lua as L
from langgraph_durable.checkpointers.redis._codec import SEP
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._keys import shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Op, script
from langgraph_durable.checkpointers.redis._outbox_events import decision_event, outbox_hint


def entry_json(entry: dict[str, Any]) -> str:
    """An audit entry as stored in a stream (the known fields only)."""
    return json.dumps({k: entry.get(k) for k in AUDIT_FIELDS}, separators=(",", ":"))


def entry_args(entry: dict[str, Any]) -> list[Any]:
    """An entry's JSON and its digest, as the chained append takes them."""
    text = entry_json(entry)
    return [text, hashlib.sha256(text.encode("utf-8")).digest()]


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _decision_cmds(
    core: RedisCore,
    thread_id: str,
    key: str,
    decision: dict[str, Any],
    audit: dict[str, Any] | None,
) -> list[Any]:
    """The commands of one decision's CAS; the script's reply is the stored decision."""
    thread_id = check_id("thread_id", thread_id)
    key = check_id("key", key)
    at = _ms(decision_claim_time(decision))
    is_wait = "/" not in key
    keys = [*core.keys.thread(thread_id), core.keys.outbox(thread_id)]
    args: list[Any] = [
        key,
        json.dumps(decision, separators=(",", ":")),
        str(at),
        f"decision:{decision.get('by', '')}",
        "1" if is_wait else "0",
    ]
    if audit is not None:
        keys = [*keys, core.keys.audit(thread_id)[0], core.keys.audit_head(thread_id)]
        args += entry_args(audit)
    else:
        args += ["", ""]
    event = decision_event(thread_id, key, decision, datetime.now(timezone.utc))
    args += event or ("", "")
    # the event's outbox shard entry first, so a stored event is always listed
    cmds: list[Any] = [] if event is None else [outbox_hint(core.keys, thread_id, event[0])]
    cmds.append(script(L.RECORD_DECISION, keys, *args))
    if is_wait:
        # a hint for the sweepers, in case the decider dies before resuming
        cmds.append(
            ("ZADD", core.keys.resume_shard(shard_of(thread_id)), "NX", at, thread_id + SEP + key)
        )
    return cmds


def _cas_of(cmds: list[Any]) -> int:
    """Where the compare-and-set script is among a decision's commands."""
    return next(i for i, c in enumerate(cmds) if c[0] == "EVALSHA")


def record_decision(
    core: RedisCore,
    thread_id: str,
    key: str,
    decision: dict[str, Any],
    audit: dict[str, Any] | None = None,
) -> Op[dict[str, Any]]:
    """CAS ``decision`` under ``key``; the stored decision comes back.

    ``audit``: an entry appended to the thread's audit stream in the same
    script, only if this call stored the decision.
    """
    cmds = _decision_cmds(core, thread_id, key, decision, audit)
    replies = yield Call(cmds)
    stored: dict[str, Any] = json.loads(replies[_cas_of(cmds)])
    return stored


def record_decisions(core: RedisCore, items: Sequence[dict[str, Any]]) -> Op[list[dict[str, Any]]]:
    """:func:`record_decision` of each item (its keyword arguments), in one pipeline.

    Each item is its own script in its own thread's slot (Redis Cluster
    works); the stored decisions come back in the order of ``items``.
    """
    cmds: list[Any] = []
    firsts: list[int] = []
    for item in items:
        mine = _decision_cmds(
            core, item["thread_id"], item["key"], item["decision"], item.get("audit")
        )
        firsts.append(len(cmds) + _cas_of(mine))
        cmds += mine
    if not cmds:
        return []
    replies = yield Call(cmds)
    for i in firsts:
        if isinstance(replies[i], Exception):
            raise replies[i]
    return [json.loads(replies[i]) for i in firsts]


def get_decisions(
    core: RedisCore, thread_id: str, keys: Sequence[str]
) -> Op[dict[str, dict[str, Any]]]:
    """The stored decisions among ``keys``."""
    keys = list(keys)
    if not keys:
        return {}
    dc = core.keys.thread(check_id("thread_id", thread_id))[11]
    (values,) = yield Call([("HMGET", dc, *keys)])
    return {k: json.loads(v) for k, v in zip(keys, values, strict=True) if v is not None}


def count_decisions(core: RedisCore, thread_id: str, keys: Sequence[str]) -> Op[int]:
    """How many of ``keys`` have a stored decision (no values are read)."""
    if not keys:
        return 0
    (n,) = yield Call([script(L.COUNT, core.keys.thread(check_id("thread_id", thread_id)), *keys)])
    return int(n)
