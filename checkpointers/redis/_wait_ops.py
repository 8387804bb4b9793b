"""The wait index and the sweepers' claims on Redis, as I/O-free operations.

A marked interrupt is indexed in its thread's keys (the truth) and listed in
a due-wait shard (a sorted set by deadline, a hint): listing reads the shards
then the threads, dropping stale entries. Claims live in the thread's ``cl``
hash; every script touches one thread's slot, so all of it runs on Redis
Cluster. Due waits are found through the due-wait shards, abandoned decisions
through the resume-pending shards (sorted by decision time): a sweep reads
only what is due, whatever the number of threads waiting.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import WaitEntry
from langgraph_durable.checkpointers.redis import _approvals_lua as L
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import SEP
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._keys import shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, Op, script


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def reconcile_waits(core: RedisCore) -> Op[int]:
    """Re-add the shard entries of every registered thread's waits (idempotent)."""
    threads = yield from core.registry.live_threads()
    if not threads:
        return 0
    replies = yield Call([script(S.WAITS, core.keys.thread(t)) for t in threads])
    cmds: list[Cmd] = []
    for thread_id, flat in zip(threads, replies, strict=True):
        shard = core.keys.wait_shard(shard_of(thread_id))
        for i in range(0, len(flat), 2):
            member = thread_id.encode() + b"\x00" + flat[i]
            deadline = core.codec.wait_deadline_ms(flat[i + 1])
            cmds.append(("ZADD", shard, "NX", deadline or "+inf", member))
    if not cmds:
        return 0
    added = yield Call(cmds)
    return sum(int(a) for a in added)


def list_waits(
    core: RedisCore,
    *,
    kind: str | None = None,
    approver: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
) -> Op[list[WaitEntry]]:
    """Pending marked interrupts, oldest deadline first (``None`` last)."""
    if thread_id is not None:
        thread_id = check_id("thread_id", thread_id)
        (flat,) = yield Call([script(S.WAITS, core.keys.thread(thread_id))])
        raws = flat[1::2]
    else:
        shards = yield Call([("ZRANGE", k, 0, -1) for k in core.keys.wait_shards()])
        by_thread: dict[str, list[str]] = {}
        for members in shards:
            for m in members:
                t, _, fld = m.decode().partition(SEP)
                by_thread.setdefault(t, []).append(fld)
        if not by_thread:
            return []
        # the thread's own hash is the truth: stale shard entries drop out here
        replies = yield Call(
            [script(S.WAITS, core.keys.thread(t), *f) for t, f in by_thread.items()]
        )
        raws = [v for flat in replies for v in flat[1::2]]
        # and leave the shards: waits the thread moved past while their
        # ZREM was lost, or of a thread whose keys expired (no deadline)
        stale: list[Cmd] = []
        for (t, fields), flat in zip(by_thread.items(), replies, strict=True):
            found = {f.decode() for f in flat[0::2]}
            stale += core.unshard(t, [f for f in fields if f not in found])
        if stale:
            yield Call(stale)
    entries = [core.codec.decode_wait(raw) for raw in raws]
    entries = [
        e
        for e in entries
        if (kind is None or e.info.kind == kind)
        and (approver is None or not e.info.approvers or approver in e.info.approvers)
    ]
    entries.sort(key=_wait_order)
    return entries[:limit] if limit is not None else entries


def _wait_order(e: WaitEntry) -> tuple[int, float, str, str]:
    d = e.info.deadline
    return (d is None, d.timestamp() if d else 0.0, e.thread_id, e.interrupt_id)


def claim_due_waits(
    core: RedisCore,
    now: datetime,
    owner: str,
    lease: timedelta,
    limit: int,
    kinds: Sequence[str] | None,
) -> Op[list[WaitEntry]]:
    """Claim up to ``limit`` due or abandoned waits (atomic per thread)."""
    now_ms, expired_ms = _ms(now), _ms(now - lease)
    kind_arg = ""
    claimed: list[WaitEntry] = []
    taken: set[tuple[str, str]] = set()
    # (shard key, upper score): the due-wait shards up to now, the
    # resume-pending shards up to a lease ago; each pages on independently
    shards = [(core.keys.wait_shard(i), now_ms) for i in range(len(core.keys.wait_shards()))]
    shards += [(core.keys.resume_shard(i), expired_ms) for i in range(len(shards))]
    random.shuffle(shards)  # concurrent sweepers start on different shards
    offsets = dict.fromkeys((key for key, _ in shards), 0)
    while len(claimed) < limit and shards:
        # a little more than what is still needed, spread over the shards left
        per = max(2, -(-(limit - len(claimed)) // len(shards)) + 1)
        cmds = [
            ("ZRANGEBYSCORE", key, "-inf", upper, "LIMIT", offsets[key], per)
            for key, upper in shards
        ]
        replies = yield Call(cmds)
        by_thread, sources, shards = _group_page(shards, replies, per, offsets)
        if not by_thread:
            break
        threads = list(by_thread)
        replies = yield Call(
            [
                script(
                    L.CLAIM,
                    core.keys.thread(t),
                    owner,
                    str(now_ms),
                    str(expired_ms),
                    kind_arg,
                    *by_thread[t],
                )
                for t in threads
            ]
        )
        unlist = _take_claims(core, threads, replies, claimed, taken, sources, offsets)
        if unlist:
            yield Call(unlist)
    return (yield from _give_back_extra(core, claimed, owner, limit, kinds))


def _group_page(
    shards: list[tuple[str, int]],
    replies: Sequence[Sequence[Any]],
    per: int,
    offsets: dict[str, int],
) -> tuple[dict[str, list[str]], dict[tuple[str, str], str], list[tuple[str, int]]]:
    """A page of shard members as ``(candidates by thread, shard of each, shards left)``.

    Moves each shard's offset past its page; a shard whose page came back
    short is done. A resume-pending member is a candidate of its own kind
    (``i:`` prefixed) so the claim script tells it from a due wait.
    """
    by_thread: dict[str, list[str]] = {}
    sources: dict[tuple[str, str], str] = {}
    left = []
    for (key, upper), members in zip(shards, replies, strict=True):
        offsets[key] += len(members)
        if len(members) == per:
            left.append((key, upper))
        resume = ":wr:" in key
        for m in members:
            thread_id, _, rest = _text(m).partition(SEP)
            cand = "i:" + rest if resume else rest
            by_thread.setdefault(thread_id, []).append(cand)
            sources[(thread_id, cand)] = key
    return by_thread, sources, left


def _take_claims(
    core: RedisCore,
    threads: list[str],
    replies: Sequence[list[Any]],
    claimed: list[WaitEntry],
    taken: set[tuple[str, str]],
    sources: dict[tuple[str, str], str],
    offsets: dict[str, int],
) -> list[Cmd]:
    """Add the waits the claim scripts took to ``claimed``; the shard members to drop.

    Each reply is the claimed waits, an empty separator, then the candidates
    the thread no longer has (stale shard entries).
    """
    unlist: list[Cmd] = []
    for t, flat in zip(threads, replies, strict=True):
        split = flat.index(b"") if b"" in flat else len(flat)
        for raw in flat[:split]:
            entry = core.codec.decode_wait(raw)
            if (entry.thread_id, entry.interrupt_id) not in taken:
                taken.add((entry.thread_id, entry.interrupt_id))
                claimed.append(entry)
        for g in flat[split + 1 :]:
            cand = _text(g)
            member = t + SEP + (cand[2:] if cand.startswith("i:") else cand)
            unlist.append(("ZREM", sources[(t, cand)], member))
            offsets[sources[(t, cand)]] -= 1  # the members after it move up
    return unlist


def _give_back_extra(
    core: RedisCore,
    claimed: list[WaitEntry],
    owner: str,
    limit: int,
    kinds: Sequence[str] | None,
) -> Op[list[WaitEntry]]:
    """Release the claims not asked for; the ones kept (at most ``limit``)."""
    # entries of other kinds, and over-claimed ones (a page is claimed whole), go back
    wanted = [e for e in claimed if kinds is None or e.info.kind in kinds]
    back = wanted[limit:] + [e for e in claimed if kinds is not None and e.info.kind not in kinds]
    if back:
        yield Call(
            [
                script(L.RELEASE, core.keys.thread(e.thread_id), e.interrupt_id, owner, "0")
                for e in back
            ]
        )
    return wanted[:limit]


def release_wait_claim(
    core: RedisCore, thread_id: str, interrupt_id: str, owner: str, done: bool
) -> Op[Any]:
    """Drop ``owner``'s claim, or mark the wait resolved for good."""
    yield Call(
        [
            script(
                L.RELEASE,
                core.keys.thread(check_id("thread_id", thread_id)),
                interrupt_id,
                owner,
                "1" if done else "0",
            )
        ]
    )


def wait_counts(
    core: RedisCore, now: datetime, kinds: Sequence[str] | None
) -> Op[tuple[int, int, datetime | None]]:
    """``(waiting, overdue, oldest overdue deadline)`` from the due-wait shards.

    Counts every kind (the shards do not carry it); shard entries are hints
    and may briefly include waits the thread already moved past.
    """
    now_ms = _ms(now)
    cmds: list[Any] = []
    for key in core.keys.wait_shards():
        cmds += [
            ("ZCARD", key),
            ("ZCOUNT", key, "-inf", now_ms),
            ("ZRANGEBYSCORE", key, "-inf", now_ms, "WITHSCORES", "LIMIT", 0, 1),
        ]
    replies = yield Call(cmds)
    waiting = sum(int(r) for r in replies[0::3])
    overdue = sum(int(r) for r in replies[1::3])
    firsts = [
        float(r[0][1]) if r and isinstance(r[0], (list, tuple)) else (float(r[1]) if r else None)
        for r in replies[2::3]
    ]
    scores = [s for s in firsts if s is not None]
    oldest = None
    if scores:
        oldest = datetime.fromtimestamp(min(scores) / 1000, tz=now.tzinfo)
    return waiting, overdue, oldest
