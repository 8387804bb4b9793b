"""The notification outbox on Redis: the ``Outbox`` protocol over per-thread hashes.

Events are stored by the scripts that store their facts (``put_writes``, the
decision compare-and-set), in the thread's outbox hash, so they live in its
Cluster slot. The cross-thread shards (``Keys.outbox_shard``) say which
threads have events due: each entry is added before the script that may store
its event, so none is missing; an entry whose event turns out delivered,
parked or never stored is dropped when a claim finds it so. The counts are
read from the shards.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from langgraph_durable.checkpointers._outbox import OutboxCounts, OutboxEvent
from langgraph_durable.checkpointers.redis import _outbox_events as L
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import SEP
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._keys import SHARDS, shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Op, script

T = TypeVar("T")

S.BY_SHA.update({s.sha: s for s in L.ALL})


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def add_notifications(core: RedisCore, events: list[OutboxEvent]) -> Op[int]:
    """Store events whose ids are new; how many were."""
    if not events:
        return 0
    now = datetime.now(timezone.utc)
    cmds: list[Any] = []
    for e in events:
        stored = L.event_record(e.event_id, e.kind, e.thread_id, e.approval_id, e.payload, now)
        cmds.append(L.outbox_hint(core.keys, e.thread_id, e.event_id))
        cmds.append(script(L.ADD, [core.keys.outbox(e.thread_id)], e.event_id, stored))
    replies = yield Call(cmds)
    return sum(int(r) for r in replies[1::2])


def claim_notifications(
    core: RedisCore, now: datetime, owner: str, lease: timedelta, limit: int
) -> Op[Any]:
    """Claim up to ``limit`` due events (oldest due first) for ``owner``."""
    now_ms, until_ms = _ms(now), _ms(now + lease)
    shards = [core.keys.outbox_shard(i) for i in range(SHARDS)]
    replies = yield Call(
        [("ZRANGEBYSCORE", k, "-inf", now_ms, "WITHSCORES", "LIMIT", 0, limit) for k in shards]
    )
    found: list[tuple[float, str, str, str]] = []
    for shard, reply in zip(shards, replies, strict=True):
        for member, score in _pairs(reply):
            thread_id, _, eid = _text(member).rpartition(SEP)
            found.append((float(score), shard, thread_id, eid))
    found = sorted(found)[:limit]
    if not found:
        return []
    answers = yield Call(
        [
            script(L.CLAIM, [core.keys.outbox(t)], eid, owner, now_ms, until_ms)
            for _, _, t, eid in found
        ]
    )
    fixes: list[Any] = []
    claimed: list[OutboxEvent] = []
    for (_, shard, thread_id, eid), answer in zip(found, answers, strict=True):
        text = _text(answer)
        member = thread_id + SEP + eid
        if text in ("gone", "parked"):
            fixes.append(("ZREM", shard, member))
            if text == "parked":
                fixes.append(("ZADD", core.keys.outbox_parked(shard_of(thread_id)), now_ms, member))
        elif text.startswith("at:"):
            fixes.append(("ZADD", shard, "XX", int(text[3:]), member))
        else:
            # others skip it until the lease ends (the script is the judge anyway)
            fixes.append(("ZADD", shard, "XX", until_ms, member))
            claimed.append(_event(L.parse_event(text)))
    if fixes:
        yield Call(fixes)
    return claimed


def _pairs(reply: Any) -> list[tuple[Any, Any]]:
    # WITHSCORES: a flat list, or (parsed by the client) a list of pairs
    if reply and isinstance(reply[0], (list, tuple)):
        return [(m, sc) for m, sc in reply]
    return list(zip(reply[::2], reply[1::2], strict=True))


def _event(record: dict[str, Any]) -> OutboxEvent:
    return OutboxEvent(
        event_id=record["id"],
        kind=record["kind"],
        thread_id=record["thread_id"],
        approval_id=record["approval_id"],
        payload=record["payload"],
        created_at=datetime.fromtimestamp(record["created_ms"] / 1000, timezone.utc),
        attempts=int(record["attempts"]),
    )


def settle_notification(
    core: RedisCore,
    event_id: str,
    thread_id: str,
    owner: str,
    delivered: bool,
    error: str | None,
    retry_at: datetime | None,
) -> Op[Any]:
    """Mark an event delivered, retried at ``retry_at``, or parked (``retry_at=None``)."""
    member = thread_id + SEP + event_id
    shard = core.keys.outbox_shard(shard_of(thread_id))
    retry = "" if delivered or retry_at is None else str(_ms(retry_at))
    (state,) = yield Call(
        [
            script(
                L.SETTLE,
                [core.keys.outbox(thread_id)],
                event_id,
                owner,
                "1" if delivered else "0",
                error or "",
                retry,
            )
        ]
    )
    state = _text(state)
    if state == "d":
        sent = core.keys.outbox_delivered(shard_of(thread_id))
        at = _ms(datetime.now(timezone.utc))
        yield Call([("ZADD", sent, at, member), ("ZREM", shard, member)])
    elif state == "gone":
        yield Call([("ZREM", shard, member)])
    elif state == "x":
        parked = core.keys.outbox_parked(shard_of(thread_id))
        yield Call(
            [("ZADD", parked, _ms(datetime.now(timezone.utc)), member), ("ZREM", shard, member)]
        )
    elif state == "p" and retry:
        yield Call([("ZADD", shard, "XX", int(retry), member)])


def release_notification(core: RedisCore, event_id: str, thread_id: str, owner: str) -> Op[None]:
    """Drop ``owner``'s claim, uncounted; the event is due again at once."""
    member = thread_id + SEP + event_id
    shard = core.keys.outbox_shard(shard_of(thread_id))
    (held,) = yield Call([script(L.RELEASE, [core.keys.outbox(thread_id)], event_id, owner)])
    if held:
        yield Call([("ZADD", shard, "XX", _ms(datetime.now(timezone.utc)), member)])


def purge_notifications(core: RedisCore, before: datetime, limit: int) -> Op[int]:
    """Delete up to ``limit`` events delivered before ``before`` (oldest first); how many."""
    shards = [core.keys.outbox_delivered(i) for i in range(SHARDS)]
    replies = yield Call(
        [
            ("ZRANGEBYSCORE", k, "-inf", f"({_ms(before)}", "WITHSCORES", "LIMIT", 0, limit)
            for k in shards
        ]
    )
    found = sorted(
        (float(score), shard, _text(member))
        for shard, reply in zip(shards, replies, strict=True)
        for member, score in _pairs(reply)
    )[:limit]
    if not found:
        return 0
    cmds: list[Any] = []
    for _, _, member in found:
        thread_id, _, eid = member.rpartition(SEP)
        cmds.append(script(L.PURGE, [core.keys.outbox(thread_id)], eid))
    deleted = yield Call(cmds)
    yield Call([("ZREM", shard, member) for _, shard, member in found])
    return sum(int(d) for d in deleted)


def notification_counts(core: RedisCore) -> Op[OutboxCounts]:
    """Pending and parked events, from the shards."""
    cmds: list[Any] = [("ZCARD", core.keys.outbox_shard(i)) for i in range(SHARDS)]
    cmds += [("ZCARD", core.keys.outbox_parked(i)) for i in range(SHARDS)]
    replies = yield Call(cmds)
    return OutboxCounts(pending=sum(replies[:SHARDS]), parked=sum(replies[SHARDS:]))


def retry_parked_notifications(core: RedisCore, now: datetime) -> Op[int]:
    """Give every parked event a fresh budget, due at ``now``; how many."""
    parked = [core.keys.outbox_parked(i) for i in range(SHARDS)]
    replies = yield Call([("ZRANGE", k, 0, -1) for k in parked])
    members = [(k, _text(m)) for k, reply in zip(parked, replies, strict=True) for m in reply]
    if not members:
        return 0
    now_ms = _ms(now)
    cmds: list[Any] = []
    for _, member in members:
        thread_id, _, eid = member.rpartition(SEP)
        # listed as due first, so a crash between the two loses nothing
        cmds.append(("ZADD", core.keys.outbox_shard(shard_of(thread_id)), now_ms, member))
        cmds.append(script(L.RETRY, [core.keys.outbox(thread_id)], eid, now_ms))
    answers = yield Call(cmds)
    yield Call([("ZREM", k, m) for k, m in members])
    return sum(int(a) for a in answers[1::2])
