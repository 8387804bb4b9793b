"""The I/O-free core of the Redis saver: reads, puts and the state they share.

Every operation is a generator of :mod:`._ops` (``Call``, ``Emit``); the
runners (:mod:`._runner`, :mod:`._runner_async`) execute them. Whole-thread
operations are in :mod:`._thread_ops`, the wait index in :mod:`._wait_ops`,
the registries in :mod:`._registry`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Generator, Iterable, Mapping, Sequence
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
from langgraph_durable.checkpointers.redis._listing import ThreadPages, list_all_threads
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, Emit, ListOp, Op, script
from langgraph_durable.checkpointers.redis._outbox_events import outbox_hint, wait_event
from langgraph_durable.checkpointers.redis._registry import Registry
from langgraph_durable.migrations import (
    code_version,
    finish_read,
    versions_to_store,
)

BASE_MISSING = b"\xffbase-missing"
"""What the put script answers when a delta's base is gone (nothing written)."""
WRITES_MISSING = b"\xffwrites-missing"
"""What it answers when a write a delta refers to is not stored as cached (nothing written)."""


def _ms(value: float | timedelta | None, field: str) -> int:
    if value is None:
        return 0
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise InvalidConfigError(field=field, reason="must be positive")
    return max(1, int(seconds * 1000))


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
        self.registry = Registry(self.keys, self.ttl_ms, self.schema_version)

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

    def tuple_of(self, thread_id: str, entry: Sequence[Any]) -> CheckpointTuple:
        tup, version = self.codec.decode_entry(thread_id, entry)
        return self._finish_read(tup, version)

    def ttl_args(self, *, read: bool = False) -> list[Any]:
        ttl = self.ttl_ms if (not read or self.refresh_on_read) else 0
        return [ttl, int(time.time() * 1000), self.grace_ms]

    @staticmethod
    def target(config: RunnableConfig) -> tuple[str, str, str | None]:
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
    def get_tuple(self, config: RunnableConfig) -> Op[CheckpointTuple | None]:
        """Latest (or the given) checkpoint of a thread+namespace: one EVALSHA."""
        thread_id, ns, cid = self.target(config)
        keys = self.keys.thread(thread_id)
        args = [ns, cid or "", *self.ttl_args(read=True)]
        # the chains of versions this saver holds whole are not sent
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

    def schema_version_of(self, config: RunnableConfig) -> Op[int | None]:
        """The schema version ``config``'s checkpoint (or its thread's latest) is stored with."""
        thread_id, ns, cid = self.target(config)
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
        thread_id, ns, cid = self.target(config)
        has_ns = "checkpoint_ns" in (config.get("configurable") or {})
        keys = self.keys.thread(thread_id)
        if cid is not None:
            # one checkpoint: read it, then check before/filter here
            if before_id is not None and cid >= before_id:
                return
            (entry,) = yield Call([script(S.GET, keys, ns, cid, 0, 0, 0)])
            if entry:
                tup = self.tuple_of(thread_id, entry)
                if _matches(tup.metadata, filter):
                    yield Emit(tup)
            return
        prefixes = [p for p in (index_prefix(k, v) for k, v in filter.items()) if p]
        exact = len(prefixes) == len(filter)  # every filter key is answered by the index
        pages = ThreadPages(limit, exact)  # bounded pages: see _listing.ThreadPages
        mode = "ns" if has_ns else "all"
        cursor = before_id or ""
        while True:
            size = pages.next_size()
            reply = yield Call([script(S.LIST, keys, mode, ns, cursor, size, *prefixes)])
            entries = reply[0] or []
            yield from self._fill_blobs(keys, entries)
            share_chains(entries)
            pages.grow(entries)
            last = len(entries) < size
            if entries:
                cursor = entries[-1][1].decode()
            entries.reverse()
            while entries:
                # each entry dropped as it is decoded: the caller holds one page at most
                tup = self.tuple_of(thread_id, entries.pop())
                if exact or _matches(tup.metadata, filter):
                    yield Emit(tup)
                    if pages.emitted():
                        return
            if last:
                return

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
        # deltas need the versions they build on: one more script
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
    ) -> Op[RunnableConfig]:
        """Store a checkpoint atomically (one Lua script) in one round trip."""
        thread_id, ns, parent_id = self.target(config)
        cid = check_id("checkpoint_id", checkpoint["id"])
        md = _merge_metadata(config, metadata)
        # values a read upgraded in memory (migrated versions) are stored too
        to_store = versions_to_store(checkpoint, new_versions)
        checks: list[Any] = []  # the pending writes the deltas refer to
        encoded = self.codec.encode_put(
            ns,
            checkpoint,
            md,
            to_store,
            parent_id,
            self.schema_version,
            thread_id=thread_id,
            checks=checks,
        )
        keys = self.keys.thread(thread_id)
        registrations = self.registry.for_put(thread_id, md.get("run_id"))
        cmds: list[Cmd] = [("GET", self.keys.registry_generation()), *registrations]
        cmds.append(self._put_script(keys, ns, cid, encoded, checks))
        replies = yield Call(cmds)
        if self.registry.changed(replies[0]):
            again = self.registry.for_put(thread_id, md.get("run_id"))
            if len(again) > len(registrations):  # some were skipped: send them now
                yield Call(again)
        gone = replies[-1] or []
        links = encoded[4]
        if gone in ([WRITES_MISSING], [BASE_MISSING]):
            links, gone = yield from self._put_again(
                gone, keys, thread_id, ns, cid, (checkpoint, md, to_store, parent_id)
            )
        for channel, link in links:
            self.codec.remember(thread_id, ns, channel, link)
        if gone:
            yield Call(self.unshard(thread_id, gone))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}

    def _put_script(
        self,
        keys: Sequence[str],
        ns: str,
        cid: str,
        encoded: tuple[bytes, bytes, list[bytes], list[str], Any],
        checks: Sequence[Any],
    ) -> Cmd:
        """The PUT script of an encoded checkpoint, checking the writes its deltas refer to."""
        record, refs, blobs, members, _ = encoded
        return script(
            S.PUT,
            keys,
            ns,
            cid,
            record,
            refs,
            *self.ttl_args(),
            len(blobs) // 2,
            *blobs,
            len(checks) // 3,
            *checks,
            *members,
        )

    def _put_again(
        self,
        gone: list[Any],
        keys: Sequence[str],
        thread_id: str,
        ns: str,
        cid: str,
        put: tuple[Checkpoint, dict[str, Any], Mapping[str, Any], str | None],
    ) -> Op[tuple[list[Any], list[Any]]]:
        """Store a put the script refused, until it is stored: ``(chain states, gone)``.

        ``put`` is ``(checkpoint, metadata, versions to store, parent id)``.
        """
        checkpoint, md, to_store, parent_id = put
        while gone in ([WRITES_MISSING], [BASE_MISSING]):
            # nothing was written. A write a delta refers to is not
            # stored (yet) with the bytes we cached: copy the items instead. A
            # delta's base was deleted by another client: store the values whole
            whole = gone == [BASE_MISSING]
            if whole:
                self.codec.chains.forget(thread_id, ns)
            encoded = self.codec.encode_put(
                ns,
                checkpoint,
                md,
                to_store,
                parent_id,
                self.schema_version,
                thread_id=thread_id,
                deltas=not whole,
            )
            replies = yield Call([self._put_script(keys, ns, cid, encoded, ())])
            gone = replies[-1] or []
        return encoded[4], gone

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Op[Any]:
        """Store pending writes (and index marked interrupts) atomically."""
        thread_id, ns, cid = self.target(config)
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
                        waits.append((*w, *(wait_event(thread_id, ns, item, now) or ("", ""))))
        n = len(args) // 3
        args += replace
        for wait in waits:
            args += wait
        if self.codec.policy.enabled:
            # a later put's delta may refer to these instead of copying them.
            # Remembered before they are stored: LangGraph may send
            # that put before this call's reply; the put script checks them
            self.codec.writes.add(thread_id, ns, cid, refs)
        keys = [*self.keys.thread(thread_id), self.keys.outbox(thread_id)]
        # each event's outbox shard entry first, so a stored event is always listed
        cmds = [outbox_hint(self.keys, thread_id, w[3]) for w in waits if w[3]]
        first = len(cmds)
        cmds.append(script(S.PUT_WRITES, keys, *self.ttl_args(), n, len(replace), *args))
        shard = self.keys.wait_shard(shard_of(thread_id))
        for fld, _, deadline, _, _ in waits:
            # best effort after the atomic write; readers check the thread
            cmds.append(("ZADD", shard, deadline or "+inf", thread_id + SEP + fld))
        replies = yield Call(cmds)
        added = {w[0] for w in waits}
        gone = [f for f in (x.decode() for x in replies[first] or []) if f not in added]
        if gone:
            yield Call(self.unshard(thread_id, gone))

    def unshard(self, thread_id: str, fields: Iterable[Any]) -> list[Cmd]:
        shard = self.keys.wait_shard(shard_of(thread_id))
        members = [thread_id + SEP + (f.decode() if isinstance(f, bytes) else f) for f in fields]
        return [("ZREM", shard, *members)] if members else []

    def delta_history(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Op[Mapping[str, DeltaChannelHistory]]:
        """Writes and seed per channel along the parent chain, in one script."""
        if not channels:
            return {}
        thread_id, ns, cid = self.target(config)
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
                values = self.tuple_of(thread_id, node).checkpoint["channel_values"]
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


__all__ = ["BASE_MISSING", "SHARDS", "WRITES_MISSING", "RedisCore"]
