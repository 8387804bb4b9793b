"""The I/O-free lease commands of the Redis saver: keys, records, scripts, flows.

What each lease operation sends (one Lua script over a thread's lease and record
keys, then the shard index) and how its replies read; the lease store of
:mod:`._lease_store_async` runs them.

Per thread, two keys in the thread's hash slot:

* ``<prefix>:{t:<thread>}:lease``: the lease itself, a string holding the
  owner id with a TTL (``PX``) equal to the lease; it vanishes by itself when
  its process stops renewing it;
* ``<prefix>:{t:<thread>}:run``: the lease record (a hash: state, owner,
  token, times in epoch milliseconds, attempts, recoveries, last error).

Every change of one thread is one Lua script over those two keys, so each
compare-and-set is atomic on a cluster too. Decisions use the record's
``expires_at`` against the caller's ``now`` (so workers can inject a clock),
and the script keeps the TTL key in step.

The index of running threads is a sorted set per shard (``{<prefix>:lr:N}``,
``SHARDS`` of them, each under its own hash tag, so they spread over the cluster), scored by
expiry. It is updated after the script, so it is a hint the finder verifies
against the record: a stale entry is fixed or dropped when seen. Threads that
finished or wait are not in it, so finding orphans costs the same however
many of them there are. Parked threads have their own shards, ``{<prefix>:lp:N}``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Generator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._lease_flows import Step
from langgraph_durable.checkpointers._leases import PARKED, RUNNING, LeaseCounts, LeaseRecord
from langgraph_durable.checkpointers.redis._keys import escape_tag
from langgraph_durable.checkpointers.redis._leases_lua import (
    ACQUIRE,
    CLAIM,
    PARK,
    RECORD_ERROR,
    RELEASE,
    RENEW,
    SCRIPTS,
    TAKE_OVER,
    UNPARK,
)
from langgraph_durable.checkpointers.redis._ops import Call, Cmd

T = TypeVar("T")

SHARDS = 16


_MS = timedelta(milliseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def to_ms(value: datetime | timedelta) -> int:
    """Epoch milliseconds of a datetime, or milliseconds of a duration."""
    if isinstance(value, timedelta):
        return int(value / _MS)
    return int((value - _EPOCH) / _MS)


def _from_ms(raw: Any) -> datetime | None:
    if raw in (None, b"", ""):
        return None
    return _EPOCH + timedelta(milliseconds=int(raw))


def _text(raw: Any) -> str | None:
    if raw is None:
        return None
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class RedisLeaseKeys:
    """Key names of one prefix (no I/O).

    The two keys of a thread sit under the saver's per-thread hash tag
    ``{t:<escaped thread id>}`` (``checkpointers/redis/_keys.py``), so they share
    the slot of the thread's checkpoints.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def _thread(self, thread_id: str) -> str:
        return f"{self.prefix}:{{t:{escape_tag(thread_id)}}}:"

    def lease(self, thread_id: str) -> str:
        return self._thread(thread_id) + "lease"

    def record(self, thread_id: str) -> str:
        return self._thread(thread_id) + "run"

    def _shard(self, kind: str, n: int) -> str:
        return f"{{{self.prefix}:{kind}:{n}}}"

    def running(self, thread_id: str) -> str:
        return self._shard("lr", zlib.crc32(thread_id.encode()) % SHARDS)

    def parked(self, thread_id: str) -> str:
        return self._shard("lp", zlib.crc32(thread_id.encode()) % SHARDS)

    def all_running(self) -> list[str]:
        return [self._shard("lr", n) for n in range(SHARDS)]

    def all_parked(self) -> list[str]:
        return [self._shard("lp", n) for n in range(SHARDS)]

    def pair(self, thread_id: str) -> list[str]:
        return [self.lease(thread_id), self.record(thread_id)]


def parse_record(raw: Any) -> LeaseRecord | None:
    """A record from ``HGETALL`` (a flat list from Lua, or a dict)."""
    if not raw:
        return None
    if isinstance(raw, Mapping):
        items = {_text(k): v for k, v in raw.items()}
    else:
        items = {_text(raw[i]): raw[i + 1] for i in range(0, len(raw), 2)}
    if "state" not in items:
        return None
    return LeaseRecord(
        thread_id=_text(items.get("thread_id")) or "",
        state=_text(items["state"]) or "",
        owner=_text(items.get("owner")),
        token=int(items.get("token") or 0),
        acquired_at=_from_ms(items.get("acquired_at")),
        renewed_at=_from_ms(items.get("renewed_at")),
        expires_at=_from_ms(items.get("expires_at")),
        progress_at=_from_ms(items.get("progress_at")),
        progress=_text(items.get("progress")),
        attempts=int(items.get("attempts") or 0),
        recoveries=int(items.get("recoveries") or 0),
        last_error=_text(items.get("last_error")),
        reason=_text(items.get("reason")),
        ended_at=_from_ms(items.get("ended_at")),
    )


def _members(raw: Sequence[Any]) -> list[str]:
    return [_text(m) or "" for m in raw]


Flow = Generator[Call, list[Any], T]


class RedisLeaseCore:
    """Every lease operation as a flow of ``Call`` (no I/O).

    A flow yields commands for one pipeline, receives the replies, and returns
    the operation's result; the savers' shells run it (``_run``).
    """

    def __init__(self, prefix: str, ttl_ms: int = 0) -> None:
        self.keys = RedisLeaseKeys(prefix)
        # the saver's thread TTL: released records expire with the thread's keys
        self.ttl_ms = ttl_ms

    def _script(self, text: str, thread_id: str, *args: Any) -> Cmd:
        # EVALSHA (the script registered in BY_SHA, so the shells fall back to
        # EVAL on NOSCRIPT): the body is not sent, nor hashed by the server, per call
        return ("EVALSHA", SCRIPTS[text].sha, 2, *self.keys.pair(thread_id), *args)

    def _index(self, thread_id: str, expires: datetime) -> Cmd:
        return ("ZADD", self.keys.running(thread_id), to_ms(expires), thread_id)

    def acquire(
        self, thread_id: str, owner: str, now: datetime, ttl: timedelta
    ) -> Flow[LeaseRecord | None]:
        check_id("thread_id", thread_id)
        # index first: a crash right after it leaves a hint the finder verifies
        replies = yield Call(
            [
                self._index(thread_id, now + ttl),
                self._script(ACQUIRE, thread_id, thread_id, owner, to_ms(now), to_ms(ttl)),
            ]
        )
        return parse_record(replies[1])

    def renew(
        self,
        owner: str,
        thread_ids: Sequence[str],
        now: datetime,
        ttl: timedelta,
        progress: dict[str, tuple[datetime, str | None]] | None,
    ) -> Flow[list[str]]:
        if not thread_ids:
            return []
        progress = progress or {}
        cmds: list[Cmd] = []
        for thread_id in thread_ids:
            at, note = progress.get(thread_id, (None, None))
            cmds.append(
                self._script(
                    RENEW,
                    thread_id,
                    owner,
                    to_ms(now),
                    to_ms(ttl),
                    "" if at is None else to_ms(at),
                    note or "",
                )
            )
        kept = yield Call(cmds)
        renewed = [t for t, ok in zip(thread_ids, kept, strict=True) if ok]
        if renewed:
            yield Call([self._index(t, now + ttl) for t in renewed])
        return [t for t, ok in zip(thread_ids, kept, strict=True) if not ok]

    def release(
        self, thread_id: str, owner: str, now: datetime, reason: str, error: str | None
    ) -> Flow[bool]:
        # one round trip (the end of every run pays it): the index entry goes
        # with the release; in the rare case the lease was no longer ours, the
        # new owner's entry is put back from its record (a renewal would too)
        done, _ = yield Call(
            [
                self._script(
                    RELEASE, thread_id, owner, to_ms(now), reason, error or "", 2 * self.ttl_ms
                ),
                ("ZREM", self.keys.running(thread_id), thread_id),
            ]
        )
        if not done:
            (raw,) = yield Call([("HGETALL", self.keys.record(thread_id))])
            record = parse_record(raw)
            if record is not None and record.state == RUNNING and record.expires_at:
                yield Call([self._index(thread_id, record.expires_at)])
        return bool(done)

    def record_error(self, thread_id: str, owner: str, error: str) -> Flow[Any]:
        yield Call([self._script(RECORD_ERROR, thread_id, owner, error)])

    def find_expired(self, now: datetime, limit: int) -> Flow[list[LeaseRecord]]:
        now_ms = to_ms(now)
        found = yield Call(
            [
                ("ZRANGEBYSCORE", shard, "-inf", now_ms, "LIMIT", 0, int(limit))
                for shard in self.keys.all_running()
            ]
        )
        candidates = [m for members in found for m in _members(members)]
        if not candidates:
            return []
        raws = yield Call([("HGETALL", self.keys.record(t)) for t in candidates])
        fix: list[Cmd] = []
        expired = []
        for thread_id, raw in zip(candidates, raws, strict=True):
            record = parse_record(raw)
            if record is None or record.state != RUNNING:
                fix.append(("ZREM", self.keys.running(thread_id), thread_id))
            elif record.is_orphaned(now):
                expired.append(record)
            elif record.expires_at is not None:
                fix.append(self._index(thread_id, record.expires_at))
        if fix:
            yield Call(fix)
        expired.sort(key=lambda r: r.expires_at or now)
        return expired[:limit]

    def claim(
        self, thread_id: str, token: int, owner: str, now: datetime, ttl: timedelta
    ) -> Flow[LeaseRecord | None]:
        (raw,) = yield Call(
            [self._script(CLAIM, thread_id, int(token), owner, to_ms(now), to_ms(ttl))]
        )
        record = parse_record(raw)
        if record is not None:
            yield Call([self._index(thread_id, now + ttl)])
        return record

    def take_over(
        self,
        thread_id: str,
        token: int,
        renewed_at: datetime | None,
        owner: str,
        now: datetime,
        ttl: timedelta,
    ) -> Flow[LeaseRecord | None]:
        renewed = "" if renewed_at is None else str(to_ms(renewed_at))
        (raw,) = yield Call(
            [self._script(TAKE_OVER, thread_id, int(token), renewed, owner, to_ms(now), to_ms(ttl))]
        )
        record = parse_record(raw)
        if record is not None:
            yield Call([self._index(thread_id, now + ttl)])
        return record

    def park(
        self, thread_id: str, token: int, now: datetime, reason: str
    ) -> Flow[LeaseRecord | None]:
        (raw,) = yield Call([self._script(PARK, thread_id, int(token), to_ms(now), reason)])
        record = parse_record(raw)
        if record is not None:
            yield Call(
                [
                    ("ZADD", self.keys.parked(thread_id), to_ms(now), thread_id),
                    ("ZREM", self.keys.running(thread_id), thread_id),
                ]
            )
        return record

    def unpark(self, thread_id: str, retry_at: datetime | None) -> Flow[bool]:
        at = "" if retry_at is None else to_ms(retry_at)
        (done,) = yield Call([self._script(UNPARK, thread_id, at)])
        if done:
            index = [] if retry_at is None else [self._index(thread_id, retry_at)]
            yield Call([("ZREM", self.keys.parked(thread_id), thread_id), *index])
        return bool(done)

    def get(self, thread_id: str) -> Flow[LeaseRecord | None]:
        (raw,) = yield Call([("HGETALL", self.keys.record(thread_id))])
        return parse_record(raw)

    def list(self, state: str, limit: int) -> Flow[list[LeaseRecord]]:
        if state not in (RUNNING, PARKED):
            raise ValueError(f"only running and parked leases are listed, not {state!r}")
        shards = self.keys.all_running() if state == RUNNING else self.keys.all_parked()
        found = yield Call([("ZRANGE", shard, 0, int(limit) - 1) for shard in shards])
        members = [m for f in found for m in _members(f)]
        if not members:
            return []
        raws = yield Call([("HGETALL", self.keys.record(t)) for t in members])
        records = [r for r in map(parse_record, raws) if r is not None and r.state == state]
        records.sort(key=lambda r: (r.expires_at if state == RUNNING else r.ended_at) or _EPOCH)
        return records[:limit]

    def counts(self, now: datetime) -> Flow[LeaseCounts]:
        cmds: list[Cmd] = []
        for shard in self.keys.all_running():
            cmds += [("ZCARD", shard), ("ZCOUNT", shard, "-inf", to_ms(now))]
        cmds += [("ZCARD", shard) for shard in self.keys.all_parked()]
        out = yield Call(cmds)
        total = sum(out[0 : 2 * SHARDS : 2])
        orphaned = sum(out[1 : 2 * SHARDS : 2])
        return LeaseCounts(total - orphaned, orphaned, sum(out[2 * SHARDS :]))

    def delete(self, thread_id: str) -> Flow[Any]:
        yield Call(
            [
                ("DEL", *self.keys.pair(thread_id)),
                ("ZREM", self.keys.running(thread_id), thread_id),
                ("ZREM", self.keys.parked(thread_id), thread_id),
            ]
        )


def together(flows: Sequence[Flow[Any]]) -> Flow[Any]:
    """Run flows side by side: each round sends every flow's next commands in one pipeline.

    Returns:
        The flows' results, in order.
    """
    results: list[Any] = [None] * len(flows)
    steps: dict[int, Any] = {}
    for i, flow in enumerate(flows):
        try:
            steps[i] = next(flow)
        except StopIteration as done:
            results[i] = done.value
    while steps:
        cmds: list[Cmd] = []
        spans: dict[int, tuple[int, int]] = {}
        for i, step in steps.items():
            if not isinstance(step, Call):
                raise TypeError(f"only command steps can run together, not {step!r}")
            spans[i] = (len(cmds), len(cmds) + len(step.cmds))
            cmds += step.cmds
        replies = yield Call(cmds)
        following: dict[int, Any] = {}
        for i, (a, b) in spans.items():
            try:
                following[i] = flows[i].send(replies[a:b])
            except StopIteration as done:
                results[i] = done.value
        steps = following
    return results


def with_lease(
    commands: RedisLeaseCore, op: Flow[Any], pre: Step | None, post: Step | None
) -> Flow[tuple[Any, Any, Any]]:
    """A run's write with its lease commands, sent together (one pipeline).

    ``pre``: the acquire sent with a run's first write; ``post``: the release
    sent with its last. Returns ``(the write's result, the acquire's, the
    release's)``, ``None`` for a step not sent.
    """
    steps: dict[str, Callable[..., Flow[Any]]] = {
        "acquire_lease": commands.acquire,
        "release_lease": commands.release,
    }
    flows = [op]
    if pre is not None:
        flows.insert(0, steps[pre[0]](**pre[1]))
    if post is not None:
        flows.append(steps[post[0]](**post[1]))
    results = yield from together(flows)
    first = 1 if pre is not None else 0
    return (
        results[first],
        results[0] if pre is not None else None,
        results[-1] if post is not None else None,
    )
