"""The I/O-free core of the Redis saver, driven by the sync and async shells.

Every operation is a generator (as psycopg's ``_connection_base`` does): it
yields a :class:`Call` (commands to run in one pipeline, one round trip) and
receives the list of replies, or yields an :class:`Emit` (a listed item), and
returns the operation's result. :mod:`._sync` and :mod:`._async` only execute.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import INTERRUPT

from langgraph_durable.checkpointers._delta import DeltaPolicy, resolve_policy
from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._waits import WaitEntry, decision_claim_time
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import (
    SEP,
    Codec,
    StaleKnown,
    index_prefix,
    now_utc,
    share_chains,
)
from langgraph_durable.checkpointers.redis._keys import SHARDS, Keys, check_prefix, shard_of
from langgraph_durable.checkpointers.redis._listing import list_all_threads
from langgraph_durable.migrations import (
    code_version,
    finish_read,
    versions_to_store,
)

Cmd = tuple[Any, ...]
BASE_MISSING = b"\xffbase-missing"
"""What the put script answers when a delta's base is gone (nothing written)."""
WRITES_MISSING = b"\xffwrites-missing"
"""What it answers when a write a delta refers to is not stored as cached (nothing written)."""


@dataclass(frozen=True)
class Call:
    """Commands for the shell to run in one pipeline; the generator gets the replies."""

    cmds: list[Cmd]


@dataclass(frozen=True)
class Sleep:
    """Ask the shell to wait (lock polling in ``setup()``)."""

    seconds: float


@dataclass(frozen=True)
class Emit:
    """An item of a listing, for the shell to yield."""

    value: Any


Op = Generator[Call | Sleep, Any, Any]
ListOp = Generator[Call | Emit, Any, None]


def _ms(value: float | timedelta | None, field: str) -> int:
    if value is None:
        return 0
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise InvalidConfigError(field=field, reason="must be positive")
    return max(1, int(seconds * 1000))


def script(s: S.Script, keys: Sequence[str], *args: Any) -> Cmd:
    """An EVALSHA command (the shell falls back to EVAL on NOSCRIPT)."""
    return ("EVALSHA", s.sha, len(keys), *keys, *args)


class RedisCore:
    """Everything the Redis savers do, without I/O."""

    def __init__(
        self,
        *,
        serde: SerializerProtocol,
        prefix: str = "lgd",
        ttl: float | timedelta | None = None,
        refresh_on_read: bool = False,
        wait_grace: float | timedelta = timedelta(hours=1),
        migrations: Any = None,
        deltas: bool | DeltaPolicy = True,
    ) -> None:
        self.keys = Keys(check_prefix(prefix))
        self.codec = Codec(serde, policy=resolve_policy(deltas))
        self.ttl_ms = _ms(ttl, "ttl")
        self.refresh_on_read = refresh_on_read
        self.grace_ms = _ms(wait_grace, "wait_grace")
        self.migrations = check_migrations(migrations)
        self.schema_version = code_version(self.migrations)
        # registrations already sent (key, member) -> monotonic time to resend,
        # valid while the registry generation stays the one last read
        self._registered: dict[tuple[str, str], float] = {}
        self._generation: bytes | None = None

    def with_serde(self, serde: SerializerProtocol) -> RedisCore:
        """A copy using ``serde`` (``with_allowlist`` clones)."""
        clone = copy.copy(self)
        clone.codec = Codec(serde, self.codec.chains, self.codec.policy, self.codec.writes)
        return clone

    # -- the read hook agreed with the migrations engineer -----------------------
    def _finish_read(self, tup: CheckpointTuple, stored_version: int) -> CheckpointTuple:
        """Every read path builds its tuple through here: upgrade to the code's version.

        Stored version == code version (the common case) returns ``tup`` as is;
        an older one is upgraded in memory; one with no path raises
        ``langgraph_durable.migrations.SchemaVersionError``.
        """
        if stored_version == self.schema_version:
            return tup
        # the version is the record's field: the metadata stays as written
        return finish_read(tup, stored_version, self.migrations, tag_metadata=False)

    def _tuple(self, thread_id: str, entry: Sequence[Any]) -> CheckpointTuple:
        tup, version = self.codec.decode_entry(thread_id, entry)
        return self._finish_read(tup, version)

    def _ttl_args(self, *, read: bool = False) -> list[Any]:
        ttl = self.ttl_ms if (not read or self.refresh_on_read) else 0
        return [ttl, int(time.time() * 1000), self.grace_ms]

    def _registration(self, key: str, member: str, *, expire: bool = True) -> list[Cmd]:
        """SADD to a cross-slot registry, skipped while recently sent.

        With a TTL the run and version sets expire too (twice the TTL) and are
        sent again every half TTL, so a thread that stays in use stays
        findable. The thread registry never expires: readers drop entries of
        threads that are gone.
        """
        now = time.monotonic()
        if self._registered.get((key, member), 0.0) > now:
            return []
        if len(self._registered) > 50_000:
            self._registered.clear()
        ttl = self.ttl_ms / 1000
        self._registered[(key, member)] = now + (ttl / 2 if ttl else 3600.0)
        cmds: list[Cmd] = [("SADD", key, member)]
        if self.ttl_ms and expire:
            cmds.append(("PEXPIRE", key, 2 * self.ttl_ms))
        return cmds

    def _registry_changed(self, generation: bytes | None) -> bool:
        """Whether registries lost members since the last put read the generation.

        If so, the skip cache is dropped: what this saver registered may have
        been removed by another saver or process.
        """
        generation = generation or b"0"  # no counter yet: nothing was removed
        if generation == self._generation:
            return False
        self._generation = generation
        self._registered.clear()
        return True

    def _put_registrations(self, thread_id: str, run_id: Any) -> list[Cmd]:
        cmds = self._register_thread(thread_id)
        if isinstance(run_id, str) and run_id:
            cmds += self._registration(self.keys.run(run_id), thread_id)
        return cmds + self._registration(self.keys.version(self.schema_version), thread_id)

    def _register_thread(self, thread_id: str) -> list[Cmd]:
        """Registry entry of a thread, with its expiry hint when the saver has a TTL.

        The hint is when the thread's keys may have expired at the latest if
        nothing else is written: registration is re-sent every half TTL, so
        1.5 TTLs cover the writes in between. ``GT``: concurrent writers keep
        the latest hint. A thread kept longer (a wait's deadline, a read
        refresh) is checked by the reader, which then moves its hint on.
        """
        shard = shard_of(thread_id)
        cmds = self._registration(self.keys.registry(shard), thread_id, expire=False)
        if cmds and self.ttl_ms:
            hint = int(time.time() * 1000) + self.ttl_ms * 3 // 2
            cmds.append(("ZADD", self.keys.registry_expiry(shard), "GT", hint, thread_id))
        return cmds

    def _live_threads(self) -> Generator[Call, Any, list[str]]:
        """Registered thread ids, dropping (for good) those whose keys expired.

        Only threads whose expiry hint has passed are checked (one ``PTTL``
        each); no keyspace scan. A thread written again meanwhile has a newer
        hint and stays (the drop is a compare-and-set in the shard's slot).
        """
        reply = yield Call([("SMEMBERS", k) for k in self.keys.registries()])
        shards = [sorted(m.decode() for m in members) for members in reply]
        asked = [(i, ms) for i, ms in enumerate(shards) if ms]
        if not asked:
            return []
        now = int(time.time() * 1000)
        hints = yield Call([("ZMSCORE", self.keys.registry_expiry(i), *ms) for i, ms in asked])
        due = [
            (i, t)
            for (i, ms), scores in zip(asked, hints, strict=True)
            for t, score in zip(ms, scores, strict=True)
            if score is not None and float(score) <= now
        ]
        gone: set[str] = set()
        if due:
            ttls = yield Call([("PTTL", self.keys.thread(t)[0]) for _, t in due])
            cmds: list[Cmd] = []
            dead: dict[int, list[str]] = {}
            for (i, t), pttl in zip(due, ttls, strict=True):
                if int(pttl) == -2:
                    dead.setdefault(i, []).append(t)
                elif int(pttl) == -1:  # no TTL any more (a saver without one wrote it)
                    cmds.append(("ZREM", self.keys.registry_expiry(i), t))
                else:
                    cmds.append(("ZADD", self.keys.registry_expiry(i), "GT", now + int(pttl), t))
            if dead:
                cmds.append(("INCR", self.keys.registry_generation()))
            cmds += [
                script(
                    S.UNREGISTER, [self.keys.registry(i), self.keys.registry_expiry(i)], now, *ts
                )
                for i, ts in dead.items()
            ]
            replies = yield Call(cmds)
            for dropped in replies[len(replies) - len(dead) :]:
                gone.update(m.decode() for m in dropped)
        return [t for ms in shards for t in ms if t not in gone]

    @staticmethod
    def _target(config: RunnableConfig) -> tuple[str, str, str | None]:
        conf = config.get("configurable") or {}
        if "thread_id" not in conf:
            raise InvalidConfigError(
                field="thread_id", reason="missing from config['configurable']"
            )
        thread_id = check_id("thread_id", conf["thread_id"])
        ns = check_id("checkpoint_ns", conf.get("checkpoint_ns") or "")
        cid = get_checkpoint_id(config)
        return thread_id, ns, check_id("checkpoint_id", cid) if cid else None

    # -- reads ------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> Op:
        """Latest (or the given) checkpoint of a thread+namespace: one EVALSHA."""
        thread_id, ns, cid = self._target(config)
        keys = self.keys.thread(thread_id)
        args = [ns, cid or "", *self._ttl_args(read=True)]
        # the chains of versions this saver holds whole are not sent (issue 3)
        known = self.codec.known_fields(thread_id, ns)
        (entry,) = yield Call([script(S.GET, keys, *args, *known)])
        if not entry:
            return None
        try:
            tup, version = self.codec.decode_entry(thread_id, entry, known)
        except StaleKnown:
            # another writer stored other bytes at a held version: read it whole
            (entry,) = yield Call([script(S.GET, keys, *args)])
            if not entry:
                return None
            tup, version = self.codec.decode_entry(thread_id, entry)
        return self._finish_read(tup, version)

    def schema_version_of(self, config: RunnableConfig) -> Op:
        """The schema version ``config``'s checkpoint (or its thread's latest) is stored with."""
        thread_id, ns, cid = self._target(config)
        keys = self.keys.thread(thread_id)
        if not cid:
            # z holds ns\0cid in id order: the namespace's newest is its last
            low = f"[{ns}{SEP}".encode()
            (top,) = yield Call([("ZREVRANGEBYLEX", keys[0], low + b"\xff", low, "LIMIT", 0, 1)])
            if not top:
                return None
            cid = top[0].decode()[len(ns) + 1 :]
        (record,) = yield Call([("HGET", keys[2], f"{ns}{SEP}{cid}")])
        return None if record is None else self.codec.record_version(record)

    def list_checkpoints(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> ListOp:
        """Checkpoints newest first; cost grows with ``limit``, not the thread's length."""
        if limit is not None and limit <= 0:
            return
        filter = filter or {}
        before_id = get_checkpoint_id(before) if before else None
        if config is None:
            yield from self._list_all_threads(filter, before, limit)
            return
        thread_id, ns, cid = self._target(config)
        has_ns = "checkpoint_ns" in (config.get("configurable") or {})
        keys = self.keys.thread(thread_id)
        if cid is not None:
            # one checkpoint: read it, then check before/filter here
            if before_id is not None and cid >= before_id:
                return
            (entry,) = yield Call([script(S.GET, keys, ns, cid, 0, 0, 0)])
            if entry:
                tup = self._tuple(thread_id, entry)
                if _matches(tup.metadata, filter):
                    yield Emit(tup)
            return
        prefixes = [p for p in (index_prefix(k, v) for k, v in filter.items()) if p]
        exact = len(prefixes) == len(filter)  # every filter key is answered by the index
        page = limit if (exact and limit is not None) else (0 if exact else max(limit or 0, 64))
        mode = "ns" if has_ns else "all"
        cursor = before_id or ""
        left = limit
        while True:
            reply = yield Call([script(S.LIST, keys, mode, ns, cursor, page, *prefixes)])
            entries = reply[0] or []
            yield from self._fill_blobs(keys, entries)
            share_chains(entries)
            for entry in entries:
                tup = self._tuple(thread_id, entry)
                if exact or _matches(tup.metadata, filter):
                    yield Emit(tup)
                    if left is not None:
                        left -= 1
                        if left <= 0:
                            return
            if exact or page == 0 or len(entries) < page:
                return
            cursor = entries[-1][1].decode()

    def _fill_blobs(self, keys: list[str], entries: list[Any]) -> Generator[Call, Any, None]:
        """One HMGET for the channel values of listed checkpoints (shared versions once)."""
        wanted = [
            [] if len(e[4] or ()) else self.codec.blob_fields(e[3]) for e in entries
        ]  # the script attached small values itself
        unique = list(dict.fromkeys(f for fields in wanted for f in fields))
        if not unique:
            return
        (values,) = yield Call([("HMGET", keys[4], *unique)])
        found = dict(zip(unique, values, strict=True))
        # deltas (issue 12) need the versions they build on: one more script
        deltas = [f for f, v in found.items() if Codec.is_delta(v)]
        chain: list[Any] = []
        if deltas:
            (chain,) = yield Call([script(S.CHAIN, keys, *deltas)])
        for entry, fields in zip(entries, wanted, strict=True):
            if fields:
                entry[4] = [found[f] for f in fields]
                entry[6] = chain

    def _list_all_threads(
        self, filter: dict[str, Any], before: RunnableConfig | None, limit: int | None
    ) -> ListOp:
        # not a hot path: batched over the registry shards (see _listing)
        return list_all_threads(self, filter, before, limit)

    # -- writes -----------------------------------------------------------------
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Op:
        """Store a checkpoint atomically (one Lua script) in one round trip."""
        thread_id, ns, parent_id = self._target(config)
        cid = check_id("checkpoint_id", checkpoint["id"])
        md = _merge_metadata(config, metadata)
        # values a read upgraded in memory (migrated versions) are stored too
        to_store = versions_to_store(checkpoint, new_versions)
        checks: list[Any] = []  # the pending writes the deltas refer to (issue 12)
        record, refs, blobs, members, links = self.codec.encode_put(
            ns,
            checkpoint,
            md,  # type: ignore[arg-type]
            to_store,
            parent_id,
            self.schema_version,
            thread_id=thread_id,
            checks=checks,
        )
        keys = self.keys.thread(thread_id)
        registrations = self._put_registrations(thread_id, md.get("run_id"))
        cmds: list[Cmd] = [("GET", self.keys.registry_generation()), *registrations]
        cmds.append(
            script(
                S.PUT,
                keys,
                ns,
                cid,
                record,
                refs,
                *self._ttl_args(),
                len(blobs) // 2,
                *blobs,
                len(checks) // 3,
                *checks,
                *members,
            )
        )
        replies = yield Call(cmds)
        if self._registry_changed(replies[0]):
            again = self._put_registrations(thread_id, md.get("run_id"))
            if len(again) > len(registrations):  # some were skipped: send them now
                yield Call(again)
        gone = replies[-1] or []
        while gone in ([WRITES_MISSING], [BASE_MISSING]):
            # nothing was written (issue 12). A write a delta refers to is not
            # stored (yet) with the bytes we cached: copy the items instead. A
            # delta's base was deleted by another client: store the values whole
            whole = gone == [BASE_MISSING]
            if whole:
                self.codec.chains.forget(thread_id, ns)
            record, refs, blobs, members, links = self.codec.encode_put(
                ns,
                checkpoint,
                md,  # type: ignore[arg-type]
                to_store,
                parent_id,
                self.schema_version,
                thread_id=thread_id,
                deltas=not whole,
            )
            cmds[-1] = script(
                S.PUT,
                keys,
                ns,
                cid,
                record,
                refs,
                *self._ttl_args(),
                len(blobs) // 2,
                *blobs,
                0,
                *members,
            )
            replies = yield Call(cmds[-1:])
            gone = replies[-1] or []
        for channel, link in links:
            self.codec.remember(thread_id, ns, channel, link)
        if gone:
            yield Call(self._unshard(thread_id, gone))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Op:
        """Store pending writes (and index marked interrupts) atomically."""
        thread_id, ns, cid = self._target(config)
        if cid is None:
            raise InvalidConfigError(field="checkpoint_id", reason="put_writes needs one")
        task_id = check_id("task_id", task_id)
        args: list[Any] = []
        waits: list[Any] = []
        replace: list[str] = []
        refs: list[tuple[str, Any]] = []
        for idx, (channel, value) in enumerate(writes):
            i = WRITES_IDX_MAP.get(channel, idx)
            member = SEP.join((ns, cid, task_id, str(i)))
            raw, ref = self.codec.encode_write_ref(task_id, i, channel, task_path, value)
            args += [member, raw]
            args.append("1" if i < 0 else "0")
            refs.append((channel, ref))
            if channel == INTERRUPT:
                replace.append(SEP.join((ns, cid, task_id)) + SEP)
                items = value if isinstance(value, (list, tuple)) else [value]
                now = now_utc()
                for item in items:
                    w = self.codec.encode_wait(thread_id, ns, cid, task_id, item, now)
                    if w is not None:
                        waits.append(w)
        n = len(args) // 3
        args += replace
        for fld, entry, deadline in waits:
            args += [fld, entry, deadline]
        if self.codec.policy.enabled:
            # a later put's delta may refer to these instead of copying them
            # (issue 12). Remembered before they are stored: LangGraph may send
            # that put before this call's reply; the put script checks them
            self.codec.writes.add(thread_id, ns, cid, refs)
        keys = self.keys.thread(thread_id)
        cmds = [script(S.PUT_WRITES, keys, *self._ttl_args(), n, len(replace), *args)]
        shard = self.keys.wait_shard(shard_of(thread_id))
        for fld, _, deadline in waits:
            # best effort after the atomic write; readers check the thread
            cmds.append(("ZADD", shard, deadline or "+inf", thread_id + SEP + fld))
        replies = yield Call(cmds)
        added = {fld for fld, _, _ in waits}
        gone = [f for f in (x.decode() for x in replies[0] or []) if f not in added]
        if gone:
            yield Call(self._unshard(thread_id, gone))

    def _unshard(self, thread_id: str, fields: Iterable[Any]) -> list[Cmd]:
        shard = self.keys.wait_shard(shard_of(thread_id))
        members = [thread_id + SEP + (f.decode() if isinstance(f, bytes) else f) for f in fields]
        return [("ZREM", shard, *members)] if members else []

    # -- deletes, copies, prune ---------------------------------------------------
    def delete_thread(self, thread_id: str) -> Op:
        """Delete every key of a thread (one script) and its registry entries."""
        thread_id = check_id("thread_id", thread_id)
        registry = self.keys.registry(shard_of(thread_id))
        self._registered.pop((registry, thread_id), None)
        self.codec.chains.forget(thread_id)
        self.codec.writes.forget(thread_id)
        replies = yield Call(
            [
                ("INCR", self.keys.registry_generation()),
                script(S.DELETE_THREAD, self.keys.thread(thread_id)),
                ("SREM", registry, thread_id),
                ("ZREM", self.keys.registry_expiry(shard_of(thread_id)), thread_id),
            ]
        )
        if replies[1]:
            yield Call(self._unshard(thread_id, replies[1]))

    def delete_for_runs(self, run_ids: Sequence[str]) -> Op:
        """Delete the checkpoints (and their writes) of runs, via the run index."""
        run_ids = [check_id("run_id", r) for r in run_ids]
        if not run_ids:
            return
        self.codec.chains.clear()  # a put re-checks its base anyway; this spares the retry
        reply = yield Call([("SMEMBERS", self.keys.run(r)) for r in run_ids])
        cmds: list[Cmd] = []
        owners: list[str] = []
        for run_id, threads in zip(run_ids, reply, strict=True):
            prefix = index_prefix("run_id", run_id)
            for t in sorted(threads):
                thread_id = t.decode()
                owners.append(thread_id)
                cmds.append(script(S.DELETE_RUN, self.keys.thread(thread_id), prefix))
        if cmds:
            replies = yield Call(cmds)
            unshard = [c for t, r in zip(owners, replies, strict=True) for c in self._unshard(t, r)]
            if unshard:
                yield Call(unshard)
        for run_id in run_ids:
            run_key = self.keys.run(run_id)
            self._registered = {k: v for k, v in self._registered.items() if k[0] != run_key}
        yield Call(
            [
                ("INCR", self.keys.registry_generation()),
                *(("DEL", self.keys.run(r)) for r in run_ids),
            ]
        )

    def prune(self, thread_ids: Sequence[str], strategy: str) -> Op:
        """``keep_latest`` (DeltaChannel-safe) or ``delete`` for each thread."""
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread ids, not a str")
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy: {strategy!r}")
        for thread_id in thread_ids:
            if strategy == "delete":
                yield from self.delete_thread(thread_id)
                continue
            thread_id = check_id("thread_id", thread_id)
            self.codec.chains.forget(thread_id)
            (gone,) = yield Call([script(S.PRUNE_KEEP_LATEST, self.keys.thread(thread_id))])
            if gone:
                yield Call(self._unshard(thread_id, gone))

    def copy_thread(self, source: str, target: str) -> Op:
        """Copy everything of ``source`` onto ``target`` in one script.

        Checkpoints, channel values, pending writes, waits, approval decisions
        and claims, activity results. Not the run lease: that belongs to the
        process running ``source``.
        """
        source, target = check_id("thread_id", source), check_id("thread_id", target)
        (dump,) = yield Call([script(S.EXPORT, self.keys.thread(source))])
        c, r, b, w, z, za, x, wi, wt, wl, wd, dc, cl, act = dump
        if not z:
            return
        wt = [v if i % 2 == 0 else self.codec.rethread_wait(v, target) for i, v in enumerate(wt)]
        groups = [c, r, b, w, z, za, x, wi, wt, wl, wd, dc, cl, act]
        args: list[Any] = [*self._ttl_args(), *(len(g) for g in groups)]
        for g in groups:
            args += g
        cmds = self._register_thread(target)
        # the schema versions the copied checkpoints were written with (migrations)
        for version in sorted({self.codec.record_version(c[i]) for i in range(1, len(c), 2)}):
            cmds += self._registration(self.keys.version(version), target)
        run_prefix = index_prefix("run_id", "")
        assert run_prefix is not None
        key_part = run_prefix.split(SEP)[0] + SEP
        for m in x:
            text = m.decode()
            if text.startswith(key_part):
                value = text[len(key_part) :].split(SEP)[0]
                if value.startswith('"'):
                    cmds += self._registration(self.keys.run(json.loads(value)), target)
        cmds.append(script(S.IMPORT, self.keys.thread(target), *args))
        shard = self.keys.wait_shard(shard_of(target))
        scores = {wd[i]: wd[i + 1] for i in range(0, len(wd), 2)}
        for fld in wl:
            score = scores.get(fld, b"+inf")
            cmds.append(("ZADD", shard, score, target.encode() + b"\x00" + fld))
        # a decision recorded on a wait still open but not yet resumed: the
        # sweepers' hint to finish it on the copy too (they check the thread)
        open_ids = {fld.rsplit(b"\x00", 1)[-1] for fld in wl}
        resume = self.keys.resume_shard(shard_of(target))
        for i in range(0, len(dc), 2):
            if dc[i] in open_ids:
                decision = json.loads(dc[i + 1])
                # when its claim counts from (a deferred decision: at once), as
                # record_decision scores it on the source
                ms = (
                    int(decision_claim_time(decision).timestamp() * 1000)
                    if decision.get("at")
                    else 0
                )
                cmds.append(("ZADD", resume, "NX", ms, target.encode() + b"\x00" + dc[i]))
        yield Call(cmds)

    def delta_history(self, config: RunnableConfig, channels: Sequence[str]) -> Op:
        """Writes and seed per channel along the parent chain, in one script."""
        if not channels:
            return {}
        thread_id, ns, cid = self._target(config)
        (nodes,) = yield Call(
            [script(S.DELTA, self.keys.thread(thread_id), ns, cid or "", *channels)]
        )
        where = {"thread_id": thread_id, "checkpoint_ns": ns}
        writes: dict[str, list[Any]] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        for node_id, picked, seeded, node in reversed(nodes or []):
            here = {**where, "checkpoint_id": node_id.decode()}
            for w in self.codec.decode_writes(picked, here):
                writes[w[1]].append(w)
            if node:
                values = self._tuple(thread_id, node).checkpoint["channel_values"]
                for ch in seeded:
                    name = ch.decode()
                    if name in values:
                        seeds[name] = values[name]
        # the walk went newest -> oldest; writes of nodes older than a seed
        # never reach the reply, so replaying oldest -> newest is exact
        result: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            entry: DeltaChannelHistory = {"writes": writes[ch]}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            result[ch] = entry
        return result

    # -- wait index -------------------------------------------------------------
    def reconcile_waits(self) -> Op:
        """Re-add the shard entries of every registered thread's waits (idempotent)."""
        threads = yield from self._live_threads()
        if not threads:
            return 0
        replies = yield Call([script(S.WAITS, self.keys.thread(t)) for t in threads])
        cmds: list[Cmd] = []
        for thread_id, flat in zip(threads, replies, strict=True):
            shard = self.keys.wait_shard(shard_of(thread_id))
            for i in range(0, len(flat), 2):
                member = thread_id.encode() + b"\x00" + flat[i]
                deadline = self.codec.wait_deadline_ms(flat[i + 1])
                cmds.append(("ZADD", shard, "NX", deadline or "+inf", member))
        if not cmds:
            return 0
        added = yield Call(cmds)
        return sum(int(a) for a in added)

    def list_waits(
        self,
        *,
        kind: str | None = None,
        approver: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> Op:
        """Pending marked interrupts, oldest deadline first (``None`` last)."""
        if thread_id is not None:
            thread_id = check_id("thread_id", thread_id)
            (flat,) = yield Call([script(S.WAITS, self.keys.thread(thread_id))])
            raws = flat[1::2]
        else:
            shards = yield Call([("ZRANGE", k, 0, -1) for k in self.keys.wait_shards()])
            by_thread: dict[str, list[str]] = {}
            for members in shards:
                for m in members:
                    t, _, fld = m.decode().partition(SEP)
                    by_thread.setdefault(t, []).append(fld)
            if not by_thread:
                return []
            # the thread's own hash is the truth: stale shard entries drop out here
            replies = yield Call(
                [script(S.WAITS, self.keys.thread(t), *f) for t, f in by_thread.items()]
            )
            raws = [v for flat in replies for v in flat[1::2]]
            # and leave the shards: waits the thread moved past while their
            # ZREM was lost, or of a thread whose keys expired (no deadline)
            stale: list[Cmd] = []
            for (t, fields), flat in zip(by_thread.items(), replies, strict=True):
                found = {f.decode() for f in flat[0::2]}
                stale += self._unshard(t, [f for f in fields if f not in found])
            if stale:
                yield Call(stale)
        entries = [self.codec.decode_wait(raw) for raw in raws]
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


def _merge_metadata(config: RunnableConfig, metadata: CheckpointMetadata) -> dict[str, Any]:
    # LangGraph's get_checkpoint_metadata minus its stripping of "\u0000" (data
    # loss: values are stored exactly), the same merge as the Postgres saver
    md: dict[str, Any] = dict(metadata)
    for obj in (config.get("metadata"), config.get("configurable")):
        for key, v in (obj or {}).items():
            if key in md or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(v, (str, int, bool, float)):
                md[key] = v
    md.pop("writes", None)
    return md


def _matches(metadata: Any, filter: dict[str, Any]) -> bool:
    """Whether ``metadata`` holds every filter key with an equal value (as the index does).

    A key must be present (``{"k": None}`` does not match metadata without
    ``k``), and ``True`` and ``1`` differ, as in PostgreSQL's jsonb.
    """
    return all(k in metadata and _same(metadata[k], v) for k, v in filter.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


__all__ = ["SHARDS", "Call", "Emit", "RedisCore"]
