"""The notification events the Redis scripts store, and their Lua (no I/O).

An event is a JSON object in the thread's outbox hash (``Keys.outbox``), keyed
by its id; its payload is kept as JSON text inside it, so the scripts that
change its delivery state (``cjson``) never re-encode the payload (an empty
list would come back as an object). States: ``p`` pending, ``d`` delivered,
``x`` parked.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from typing import Any

from langgraph_durable.checkpointers._outbox import event_id
from langgraph_durable.checkpointers._waits import extract_wait
from langgraph_durable.checkpointers.redis._keys import SEP, Keys, shard_of
from langgraph_durable.checkpointers.redis._lua_common import Script

WAIT_KINDS = ("approval", "batch")
DECISION_TYPES = ("decision", "batch_complete")


def stored_event(
    kind: str, thread_id: str, approval_id: str, payload: dict[str, Any], now: datetime, ref: str
) -> tuple[str, str]:
    """``(event id, stored JSON)`` of a new pending event about ``ref``."""
    eid = event_id(kind, thread_id, ref)
    return eid, event_record(eid, kind, thread_id, approval_id, payload, now)


def event_record(
    eid: str, kind: str, thread_id: str, approval_id: str, payload: dict[str, Any], now: datetime
) -> str:
    """The stored JSON of a new pending event."""
    record = {
        "id": eid,
        "kind": kind,
        "thread_id": thread_id,
        "approval_id": approval_id,
        "payload": json.dumps(payload, separators=(",", ":"), default=str),
        "created_ms": int(now.timestamp() * 1000),
        "attempts": 0,
        "state": "p",
        "next_ms": 0,
        "owner": "",
        "until_ms": 0,
    }
    return json.dumps(record, separators=(",", ":"))


def wait_event(thread_id: str, ns: str, item: Any, now: datetime) -> tuple[str, str] | None:
    """The ``requested`` / ``escalated`` event of an indexed interrupt, if it is an approval's."""
    info = extract_wait(item)
    interrupt_id = getattr(item, "id", None)
    if info is None or info.kind not in WAIT_KINDS or not isinstance(interrupt_id, str):
        return None
    kind = "escalated" if info.escalation_level > 0 else "requested"
    payload = {
        "wait_kind": info.kind,
        "deadline": None if info.deadline is None else info.deadline.isoformat(),
        "approvers": list(info.approvers),
        "escalation_level": info.escalation_level,
        "checkpoint_ns": ns,
    }
    return stored_event(kind, thread_id, interrupt_id, payload, now, interrupt_id)


def decision_event(
    thread_id: str, key: str, decision: dict[str, Any], now: datetime
) -> tuple[str, str] | None:
    """The ``decided`` / ``timed_out`` event of a decision record, if it announces one.

    Batch items (``id/item`` keys) and amendments are not announced.
    """
    if "/" in key or decision.get("type") not in DECISION_TYPES:
        return None
    kind = "timed_out" if decision.get("timed_out") else "decided"
    return stored_event(kind, thread_id, key, {"decision": decision}, now, key)


def reminder_event(entry: dict[str, Any]) -> tuple[str, str] | None:
    """The ``reminded`` event of an audit entry that records a reminder, else ``None``."""
    if entry.get("action") != "remind" or entry.get("outcome") != "recorded":
        return None
    thread_id, approval_id = entry.get("thread_id"), entry.get("approval_id")
    if not isinstance(thread_id, str) or not isinstance(approval_id, str):
        return None
    payload = {"by": entry.get("actor"), "reason": entry.get("reason")}
    # each reminder is its own event (an audit append without a dedupe key
    # adds an entry each time, so does its event)
    ref = f"audit:{secrets.token_hex(8)}"
    return stored_event(
        "reminded", thread_id, approval_id, payload, datetime.now(timezone.utc), ref
    )


def outbox_hint(keys: Keys, thread_id: str, eid: str) -> tuple[Any, ...]:
    """The shard entry of an event about to be stored (due at once; kept if present)."""
    return ("ZADD", keys.outbox_shard(shard_of(thread_id)), "NX", 0, thread_id + SEP + eid)


def parse_event(raw: Any) -> dict[str, Any]:
    """A stored event's JSON as a dict, its payload decoded."""
    record: dict[str, Any] = json.loads(raw)
    record["payload"] = json.loads(record.get("payload") or "{}")
    return record


# KEYS: the outbox. ARGV: event id, owner, now ms, lease until ms.
# Returns the claimed event; 'gone' (delivered or never stored), 'parked', or
# 'at:<ms>' when it is not due before then (retry time, or a live lease).
CLAIM = Script(
    "outbox_claim",
    r"""
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 'gone' end
local e = cjson.decode(raw)
if e.state == 'x' then return 'parked' end
if e.state ~= 'p' then return 'gone' end
local now = tonumber(ARGV[3])
if e.next_ms > now then return 'at:' .. string.format('%d', e.next_ms) end
if e.owner ~= '' and e.until_ms > now then return 'at:' .. string.format('%d', e.until_ms) end
e.owner = ARGV[2]
e.until_ms = tonumber(ARGV[4])
e.attempts = e.attempts + 1
raw = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], raw)
return raw
""",
)

# KEYS: the outbox. ARGV: event id, owner, delivered ('1'/'0'), error, retry at
# ms ('' parks it). Returns the new state, or 'gone' / 'lost' (another owner
# holds it now: a failure of an expired claim changes nothing).
SETTLE = Script(
    "outbox_settle",
    r"""
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 'gone' end
local e = cjson.decode(raw)
if e.state ~= 'p' then return e.state end
if ARGV[3] ~= '1' and e.owner ~= ARGV[2] then return 'lost' end
e.owner = ''
e.until_ms = 0
if ARGV[3] == '1' then
  e.state = 'd'
else
  e.error = ARGV[4]
  if ARGV[5] == '' then e.state = 'x' else e.next_ms = tonumber(ARGV[5]) end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return e.state
""",
)

# KEYS: the outbox. ARGV: event id, stored event. 1 if added.
ADD = Script("outbox_add", "return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])")

# KEYS: the outbox. ARGV: event id, now ms. A parked event gets a fresh budget.
RETRY = Script(
    "outbox_retry",
    r"""
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local e = cjson.decode(raw)
if e.state ~= 'x' then return 0 end
e.state = 'p'
e.attempts = 0
e.next_ms = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
""",
)

# KEYS: the outbox. ARGV: event id, owner. The owner's claim is dropped and
# not counted as an attempt. 1 if it held one.
RELEASE = Script(
    "outbox_release",
    r"""
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local e = cjson.decode(raw)
if e.state ~= 'p' or e.owner ~= ARGV[2] then return 0 end
e.owner = ''
e.until_ms = 0
if e.attempts > 0 then e.attempts = e.attempts - 1 end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
""",
)

# KEYS: the outbox. ARGV: event id. Deletes the event if it is delivered.
PURGE = Script(
    "outbox_purge",
    r"""
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
if cjson.decode(raw).state ~= 'd' then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
""",
)

ALL = (CLAIM, SETTLE, ADD, RETRY, RELEASE, PURGE)
