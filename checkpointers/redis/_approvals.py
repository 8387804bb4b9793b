"""The approvals fast path on Redis: decisions (CAS) and claims with leases.

Decisions live in the thread's ``dc`` hash (``HSETNX``: the first one wins),
claims in its ``cl`` hash; every script touches one thread's slot, so all of
it runs on Redis Cluster. Due waits are found through the saver's due-wait
shards (sorted by deadline), abandoned decisions through the resume-pending
shards (sorted by decision time): a sweep reads only what is due, whatever
the number of threads waiting. Shard entries are hints; the thread's own keys
are the truth, checked by the claim script.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Generator, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from langgraph_durable.checkpointers._audit import AUDIT_FIELDS
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import WaitEntry, decision_claim_time
from langgraph_durable.checkpointers.redis import _approvals_lua as L
from langgraph_durable.checkpointers.redis._codec import SEP
from langgraph_durable.checkpointers.redis._core import Call, RedisCore, script
from langgraph_durable.checkpointers.redis._keys import shard_of


def entry_json(entry: dict[str, Any]) -> str:
    """An audit entry as stored in a stream (the known fields only)."""
    return json.dumps({k: entry.get(k) for k in AUDIT_FIELDS}, separators=(",", ":"))


def entry_args(entry: dict[str, Any]) -> list[Any]:
    """An entry's JSON and its digest, as the chained append takes them."""
    text = entry_json(entry)
    return [text, hashlib.sha256(text.encode("utf-8")).digest()]


Op = Generator[Call, Any, Any]


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _decision_cmds(
    core: RedisCore,
    thread_id: str,
    key: str,
    decision: dict[str, Any],
    audit: dict[str, Any] | None,
) -> list[Any]:
    """The commands of one decision's CAS; the first one's reply is the stored decision."""
    thread_id = check_id("thread_id", thread_id)
    key = check_id("key", key)
    at = _ms(decision_claim_time(decision))
    is_wait = "/" not in key
    keys = core.keys.thread(thread_id)
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
    cmds: list[Any] = [script(L.RECORD_DECISION, keys, *args)]
    if is_wait:
        # a hint for the sweepers, in case the decider dies before resuming
        cmds.append(
            ("ZADD", core.keys.resume_shard(shard_of(thread_id)), "NX", at, thread_id + SEP + key)
        )
    return cmds


def record_decision(
    core: RedisCore,
    thread_id: str,
    key: str,
    decision: dict[str, Any],
    audit: dict[str, Any] | None = None,
) -> Op:
    """CAS ``decision`` under ``key``; the stored decision comes back.

    ``audit``: an entry appended to the thread's audit stream in the same
    script, only if this call stored the decision.
    """
    replies = yield Call(_decision_cmds(core, thread_id, key, decision, audit))
    return json.loads(replies[0])


def record_decisions(core: RedisCore, items: Sequence[dict[str, Any]]) -> Op:
    """:func:`record_decision` of each item (its keyword arguments), in one pipeline.

    Each item is its own script in its own thread's slot (Redis Cluster
    works); the stored decisions come back in the order of ``items``.
    """
    cmds: list[Any] = []
    firsts: list[int] = []
    for item in items:
        firsts.append(len(cmds))
        cmds += _decision_cmds(
            core, item["thread_id"], item["key"], item["decision"], item.get("audit")
        )
    if not cmds:
        return []
    replies = yield Call(cmds)
    for i in firsts:
        if isinstance(replies[i], Exception):
            raise replies[i]
    return [json.loads(replies[i]) for i in firsts]


def get_decisions(core: RedisCore, thread_id: str, keys: Sequence[str]) -> Op:
    """The stored decisions among ``keys``."""
    keys = list(keys)
    if not keys:
        return {}
    dc = core.keys.thread(check_id("thread_id", thread_id))[11]
    (values,) = yield Call([("HMGET", dc, *keys)])
    return {k: json.loads(v) for k, v in zip(keys, values, strict=True) if v is not None}


def count_decisions(core: RedisCore, thread_id: str, keys: Sequence[str]) -> Op:
    """How many of ``keys`` have a stored decision (no values are read)."""
    if not keys:
        return 0
    (n,) = yield Call([script(L.COUNT, core.keys.thread(check_id("thread_id", thread_id)), *keys)])
    return int(n)


def claim_due_waits(
    core: RedisCore,
    now: datetime,
    owner: str,
    lease: timedelta,
    limit: int,
    kinds: Sequence[str] | None,
) -> Op:
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
        shards = left
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
        unlist: list[Any] = []
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
        if unlist:
            yield Call(unlist)
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
) -> Op:
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


def wait_counts(core: RedisCore, now: datetime, kinds: Sequence[str] | None) -> Op:
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


class SyncApprovals:
    """Sync shell: the ``WaitClaims`` and ``DecisionStore`` protocols."""

    _core: RedisCore

    if TYPE_CHECKING:  # provided by RedisSaver

        def _run(self, operation: str, gen: Any) -> Any: ...

    def record_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store ``decision`` unless one exists for ``(thread_id, key)``; return the stored one.

        ``audit``: an audit entry appended in the same script, only if this
        call stored the decision.
        """
        return self._run(  # type: ignore[no-any-return]
            "record_decision", record_decision(self._core, thread_id, key, decision, audit)
        )

    def record_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`record_decision` of each item (its keyword arguments), in one round trip."""
        return self._run("record_decisions", record_decisions(self._core, items))  # type: ignore[no-any-return]

    def get_decisions(self, *, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored decisions among ``keys``."""
        return self._run(  # type: ignore[no-any-return]
            "get_decisions", get_decisions(self._core, thread_id, keys)
        )

    def count_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a stored decision."""
        return self._run(  # type: ignore[no-any-return]
            "count_decisions", count_decisions(self._core, thread_id, keys)
        )

    def claim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Claim up to ``limit`` due or abandoned waits."""
        return self._run(  # type: ignore[no-any-return]
            "claim_due_waits", claim_due_waits(self._core, now, owner, lease, limit, kinds)
        )

    def release_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Drop ``owner``'s claim, or mark the wait resolved (``done=True``)."""
        self._run(
            "release_wait_claim",
            release_wait_claim(self._core, thread_id, interrupt_id, owner, done),
        )

    def wait_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """``(waiting, overdue, oldest overdue deadline)``."""
        return self._run("wait_counts", wait_counts(self._core, now, kinds))  # type: ignore[no-any-return]


class AsyncApprovals:
    """Async shell, plus the sync bridges the async saver offers for other threads."""

    _core: RedisCore

    if TYPE_CHECKING:  # provided by AsyncRedisSaver

        async def _run(self, operation: str, gen: Any) -> Any: ...

        def _sync(self, coro: Any) -> Any: ...

    async def arecord_decision(
        self,
        *,
        thread_id: str,
        key: str,
        decision: dict[str, Any],
        audit: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Async twin of ``record_decision``."""
        return await self._run(  # type: ignore[no-any-return]
            "record_decision", record_decision(self._core, thread_id, key, decision, audit)
        )

    async def arecord_decisions(self, *, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Async twin of ``record_decisions``."""
        return await self._run(  # type: ignore[no-any-return]
            "record_decisions", record_decisions(self._core, items)
        )

    async def aget_decisions(
        self, *, thread_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Async twin of ``get_decisions``."""
        return await self._run(  # type: ignore[no-any-return]
            "get_decisions", get_decisions(self._core, thread_id, keys)
        )

    async def acount_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        """Async twin of ``count_decisions``."""
        return await self._run(  # type: ignore[no-any-return]
            "count_decisions", count_decisions(self._core, thread_id, keys)
        )

    async def aclaim_due_waits(
        self,
        *,
        now: datetime,
        owner: str,
        lease: timedelta,
        limit: int,
        kinds: Sequence[str] | None = None,
    ) -> list[WaitEntry]:
        """Async twin of ``claim_due_waits``."""
        return await self._run(  # type: ignore[no-any-return]
            "claim_due_waits", claim_due_waits(self._core, now, owner, lease, limit, kinds)
        )

    async def arelease_wait_claim(
        self, *, thread_id: str, interrupt_id: str, owner: str, done: bool = False
    ) -> None:
        """Async twin of ``release_wait_claim``."""
        await self._run(
            "release_wait_claim",
            release_wait_claim(self._core, thread_id, interrupt_id, owner, done),
        )

    async def await_counts(
        self, *, now: datetime, kinds: Sequence[str] | None = None
    ) -> tuple[int, int, datetime | None]:
        """Async twin of ``wait_counts``."""
        return await self._run("wait_counts", wait_counts(self._core, now, kinds))  # type: ignore[no-any-return]

    def record_decision(self, **kwargs: Any) -> dict[str, Any]:
        """Sync :meth:`arecord_decision` (from another thread than the saver's loop)."""
        return self._sync(self.arecord_decision(**kwargs))  # type: ignore[no-any-return]

    def record_decisions(self, **kwargs: Any) -> list[dict[str, Any]]:
        """Sync :meth:`arecord_decisions`."""
        return self._sync(self.arecord_decisions(**kwargs))  # type: ignore[no-any-return]

    def get_decisions(self, **kwargs: Any) -> dict[str, dict[str, Any]]:
        """Sync :meth:`aget_decisions`."""
        return self._sync(self.aget_decisions(**kwargs))  # type: ignore[no-any-return]

    def count_decisions(self, **kwargs: Any) -> int:
        """Sync :meth:`acount_decisions`."""
        return self._sync(self.acount_decisions(**kwargs))  # type: ignore[no-any-return]

    def claim_due_waits(self, **kwargs: Any) -> list[WaitEntry]:
        """Sync :meth:`aclaim_due_waits`."""
        return self._sync(self.aclaim_due_waits(**kwargs))  # type: ignore[no-any-return]

    def release_wait_claim(self, **kwargs: Any) -> None:
        """Sync :meth:`arelease_wait_claim`."""
        self._sync(self.arelease_wait_claim(**kwargs))

    def wait_counts(self, **kwargs: Any) -> tuple[int, int, datetime | None]:
        """Sync :meth:`await_counts`."""
        return self._sync(self.await_counts(**kwargs))  # type: ignore[no-any-return]
