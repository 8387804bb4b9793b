"""The I/O-free core of the PostgreSQL savers.

Every saver operation is a generator method here: it yields :class:`Stmt`
objects (a query, its parameters, whether rows come back) and receives the
rows, then returns the operation's result. The sync and async savers only run
these generators against a connection (as psycopg's ``_connection_base.py``
does), so the logic exists once.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import INTERRUPT, TASKS, _DeltaSnapshot
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    BrokenChainError,
    ChainCache,
    DeltaPolicy,
    Link,
    Stored,
    WriteCache,
    WriteRef,
    WriteRows,
    encode_value,
    snapshot_link,
)
from langgraph_durable.checkpointers._delta_read import ChainReader, rebuilds_held
from langgraph_durable.checkpointers._errors import CorruptCheckpointError, InvalidConfigError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._readable import mark_readable
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.checkpointers._waits import WaitInfo, extract_wait
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._metadata import (
    decode_metadata,
    encode_metadata,
    float_survives_jsonb,
)
from langgraph_durable.checkpointers.postgres._stmt import Op, Rows, Stmt, _ids, _Queries
from langgraph_durable.checkpointers.postgres._thread_ops import ThreadOpsCore
from langgraph_durable.migrations import (
    SCHEMA_VERSION_KEY,
    finish_read,
    is_migrated_version,
    versions_to_store,
)
from langgraph_durable.migrations.postgres import LayoutStep, layout_steps

# The vocabulary every core module and shell imports from here
__all__ = ["Op", "PostgresCore", "Rows", "Stmt", "_Queries", "check_migrations"]


def _inline_ok(value: Any) -> bool:
    """Whether jsonb holds ``value`` exactly (so it can live in the checkpoint row)."""
    # exact types only: an IntEnum or a str subclass would come back as a plain value
    kind = type(value)
    if value is None or kind is bool or kind is int:
        return True
    if kind is float:
        return float_survives_jsonb(value)
    if kind is str:
        if "\x00" in value:
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return False


class PostgresCore(ThreadOpsCore):
    """Statement builders and row parsers shared by both Postgres savers.

    Subclasses provide ``serde`` (LangGraph's attribute, replaced by
    ``with_allowlist``), ``_q`` (the rendered statements) and ``_migrations``.
    """

    serde: SerializerProtocol
    _q: _Queries
    _migrations: Any

    # -- value encoding: the one place a channel value becomes bytes (issue 12) --

    delta_policy: DeltaPolicy = DeltaPolicy()
    """When a growing value is stored as a delta (the savers' ``deltas=`` option)."""

    @property
    def _chains(self) -> ChainCache:
        # per saver instance, created on first use (no I/O in constructors)
        cache = self.__dict__.get("_chain_cache")
        if cache is None:
            cache = self.__dict__.setdefault("_chain_cache", ChainCache())
        return cache  # type: ignore[no-any-return]

    @property
    def _write_cache(self) -> WriteCache:
        # the pending writes a put's deltas may refer to (issue 12)
        cache = self.__dict__.get("_pending_write_cache")
        if cache is None:
            cache = self.__dict__.setdefault("_pending_write_cache", WriteCache())
        return cache  # type: ignore[no-any-return]

    def _encode_value(
        self, value: Any, channel: str | None = None, extends: Link | None = None
    ) -> tuple[str, bytes]:
        return dumps_exact(
            self.serde, value, field="channel value", channel=channel, extends=extends
        )

    def _encode_channel_values(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: list[tuple[str, str, Any]],
        *,
        deltas: bool = True,
        writes_of: str | None = None,
    ) -> tuple[list[tuple[str, str, Stored]], list[tuple[str, Link | None]]]:
        """Rows to store for ``(channel, version, value)``: whole values or deltas.

        ``writes_of`` is the parent checkpoint: a delta refers to its pending
        writes (when this saver stored them) instead of copying their items.
        Returns the rows ``(channel, version, stored)`` and the chain states to
        remember once they are committed.
        """
        rows: list[tuple[str, str, Stored]] = []
        links: list[tuple[str, Link | None]] = []
        policy = self.delta_policy
        for channel, version, value in values:
            on = deltas and policy.enabled
            prev = self._chains.get(thread_id, checkpoint_ns, channel) if on else None
            # bases are always older than what extends them (reads fetch a chain
            # by range); an upgraded value is stored whole (issue 12)
            if prev is not None and (not prev.version < version or is_migrated_version(version)):
                prev = None
            type_, data = self._encode_value(value, channel, prev)
            pending = (
                self._write_cache.get(thread_id, checkpoint_ns, writes_of, channel)
                if prev is not None
                else []
            )
            # compact deltas: their base and writes_of are the row's columns
            stored, link = encode_value(
                prev,
                version,
                type_,
                data,
                policy,
                writes=pending,
                writes_of=writes_of if pending else None,
                compact=True,
            )
            mark_readable(self.serde, link)
            rows.append((channel, version, stored))
            links.append((channel, link))
        return rows, links

    def _remember(
        self, thread_id: str, checkpoint_ns: str, channel: str, link: Link | None
    ) -> None:
        """Cache a version read or written, unless a newer one is cached."""
        if link is None or not self.delta_policy.enabled:
            return
        cached = self._chains.get(thread_id, checkpoint_ns, channel)
        if cached is None or cached.version <= link.version:
            self._chains.put(thread_id, checkpoint_ns, channel, link)

    def _decode_channel(
        self,
        channel: str,
        version: str,
        rows: Mapping[str, tuple[Any, ...]],
        *,
        where: tuple[str, str, str],
        writes: WriteRows | None = None,
        reader: ChainReader | None = None,
    ) -> Any:
        """The value of ``channel`` at ``version`` from its row (and chain, for a delta).

        ``reader`` shares the rebuilding of one chain between the checkpoints
        of a read (made from ``rows`` and ``writes`` if not given).
        """
        type_, blob = rows[version][:2]
        rebuilt = type_ == DELTA_TYPE
        if rebuilt:
            try:
                if reader is None:
                    reader = ChainReader(rows, writes, self.delta_policy)
                type_, blob, link = reader.read(version)
            except BrokenChainError as exc:
                raise CorruptCheckpointError(
                    thread_id=where[0],
                    checkpoint_ns=where[1],
                    checkpoint_id=where[2],
                    channel=channel,
                    reason=str(exc),
                ) from exc
        elif blob is not None:
            link = snapshot_link(version, type_, blob, self.delta_policy)
        else:
            link = None
        value = self._decode_value(type_, blob, where=where, channel=channel, rebuilt=rebuilt)
        self._remember(where[0], where[1], channel, link)
        return value

    def _held_value(
        self,
        channel: str,
        version: str,
        rows: Mapping[str, tuple[Any, ...]],
        held: Link,
        where: tuple[str, str, str],
    ) -> Any:
        """The value of a version the saver holds whole, if its stored delta rebuilds it.

        Raises :class:`_StaleHeld` when the stored row rebuilds other bytes
        (another writer stored that version): the store wins, read with chains.
        """
        try:
            same = rebuilds_held(rows[version][1], version, held)
        except BrokenChainError as exc:
            raise CorruptCheckpointError(
                thread_id=where[0],
                checkpoint_ns=where[1],
                checkpoint_id=where[2],
                channel=channel,
                reason=str(exc),
            ) from exc
        if not same:
            raise _StaleHeld(channel)
        return self._decode_value(held.type, held.data, where=where, channel=channel)

    def _decode_value(
        self,
        type_: str,
        blob: bytes | None,
        *,
        where: tuple[str, str, str],
        channel: str,
        rebuilt: bool = False,
    ) -> Any:
        try:
            return loads_exact(
                self.serde, type_, blob if blob is not None else b"", rebuilt=rebuilt
            )
        except Exception as exc:
            raise CorruptCheckpointError(
                thread_id=where[0],
                checkpoint_ns=where[1],
                checkpoint_id=where[2],
                channel=channel,
                reason=f"{type(exc).__name__}: {exc}",
            ) from exc

    # -- schema version (issue 4 fills _finish_read in) --

    def _schema_version(self) -> int:
        return int(getattr(self._migrations, "version", 0) or 0) if self._migrations else 0

    def _finish_read(self, tup: CheckpointTuple, stored_version: int) -> CheckpointTuple:
        """Every read builds its tuple through here: upgrade to the code's schema version.

        Stored version == code version (the common case) returns ``tup`` as is;
        an older one is upgraded in memory by the migrations' steps; one with no
        path raises ``langgraph_durable.migrations.SchemaVersionError``.
        """
        if stored_version == self._schema_version():
            return tup
        # the version is the row's column: the metadata stays as written
        return finish_read(tup, stored_version, self._migrations, tag_metadata=False)

    def _op_schema_version(self, config: RunnableConfig) -> Op:
        thread_id, checkpoint_ns, checkpoint_id = _ids(config)
        params: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id:
            params["checkpoint_id"] = checkpoint_id
            query = self._q.schema_version_by_id
        else:
            query = self._q.schema_version_latest
        rows = yield Stmt(query, params, fetch=True)
        return int(rows[0][0]) if rows else None

    # -- setup --

    def _op_setup(self) -> Op:
        """Apply the pending layout steps, each in one locked transaction."""
        schema = self._q.schema
        steps: tuple[LayoutStep, ...] = layout_steps()
        lock = {"schema": schema}
        # nothing of setup is prepared: each statement runs once per process,
        # and psycopg drops its prepared statements when an ALTER or DROP of a
        # step completes, which in pipeline mode may be after the next
        # statement was sent under its old name
        while True:
            yield Stmt(_sql.BEGIN)
            yield Stmt(_sql.SETUP_LOCK, lock, prepare=False)
            yield Stmt(self._q.setup_schema)
            yield Stmt(self._q.setup_prepare)
            rows = yield Stmt(self._q.setup_current, None, fetch=True)
            current = int(rows[0][0]) if rows else 0
            pending = [s for s in steps if s.version > current]
            if not pending:
                yield Stmt(_sql.COMMIT)
                return current
            step = pending[0]
            # search_path only for this transaction: the step files name tables
            # unqualified, and pg_catalog stays resolvable.
            yield Stmt(_sql.SETUP_SEARCH_PATH, {"path": _search_path(schema)}, prepare=False)
            # statement by statement: a connection in pipeline mode refuses a script
            for statement in step.statements:
                yield Stmt(statement)
            record = {"version": step.version, "name": step.name}
            yield Stmt(self._q.setup_record, record, prepare=False)
            yield Stmt(_sql.COMMIT)

    # -- reads --

    def _op_get_tuple(self, config: RunnableConfig) -> Op:
        thread_id, checkpoint_ns, checkpoint_id = _ids(config)
        params: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id:
            params["checkpoint_id"] = checkpoint_id
            query = self._q.get_by_id
        else:
            query = self._q.get_latest
        # the chains of versions this saver holds whole are not fetched (issue 12)
        held = dict(self._chains.links(thread_id, checkpoint_ns))
        params["held_channels"] = list(held)
        params["held_versions"] = [link.version for link in held.values()]
        rows = yield Stmt(query, params, fetch=True)
        if not rows:
            return None
        values = self._values(rows)
        values.held = {(thread_id, checkpoint_ns, ch): link for ch, link in held.items()}
        try:
            return self._parse_tuple(rows[0], values)
        except _StaleHeld:
            # another writer stored other bytes at a held version: read the chains
            params["held_channels"] = params["held_versions"] = []
            rows = yield Stmt(query, params, fetch=True)
            return self._parse_tuple(rows[0], self._values(rows)) if rows else None

    def _parse_tuple(self, row: tuple[Any, ...], values: _Values) -> CheckpointTuple:
        return self._finish_read(self._parse_raw(row, values), int(row[7] or 0))

    def _values(self, rows: Sequence[tuple[Any, ...]]) -> _Values:
        """The value rows a ``SELECT_TUPLES`` statement fetched once for all its checkpoints."""
        out = _Values(self.delta_policy)
        for row in rows:
            versions = row[19]
            if versions:
                if row[8] is None and row[20] is None:
                    # get_tuple of one channel's chain (the common case)
                    chain = out.blobs.setdefault((row[0], row[1], row[31]), {})
                    for version, type_, blob, base, writes_of in zip(
                        versions, row[9], row[10], row[29], row[30], strict=True
                    ):
                        # a NULL type is a delta's (the statement sends no 'delta')
                        chain[version] = (
                            DELTA_TYPE if type_ is None else type_,
                            blob,
                            base,
                            writes_of,
                        )
                else:
                    n = len(versions)
                    # NULL: every row's is the statement row's (thread, namespace)
                    # or the one channel sent beside the arrays
                    channels = row[8] if row[8] is not None else [row[31]] * n
                    threads = row[20] if row[20] is not None else [row[0]] * n
                    nss = row[21] if row[21] is not None else [row[1]] * n
                    for thread_id, ns, channel, version, type_, blob, base, writes_of in zip(
                        threads,
                        nss,
                        channels,
                        versions,
                        row[9],
                        row[10],
                        row[29],
                        row[30],
                        strict=True,
                    ):
                        out.blobs.setdefault((thread_id, ns, channel), {})[version] = (
                            DELTA_TYPE if type_ is None else type_,
                            blob,
                            base,
                            writes_of,
                        )
            if row[24]:
                # the statement sends msgpack writes only (what deltas refer to)
                if row[22] is None:
                    writes = out.writes.setdefault((row[0], row[1]), {})
                    for cid, task_id, idx, blob in zip(
                        row[24], row[25], row[26], row[28], strict=True
                    ):
                        writes[(cid, task_id, idx)] = (_MSGPACK, blob)
                else:
                    for thread_id, ns, cid, task_id, idx, blob in zip(
                        row[22], row[23], row[24], row[25], row[26], row[28], strict=True
                    ):
                        out.writes.setdefault((thread_id, ns), {})[(cid, task_id, idx)] = (
                            _MSGPACK,
                            blob,
                        )
        return out

    def _parse_raw(self, row: tuple[Any, ...], fetched: _Values) -> CheckpointTuple:
        """The tuple of a ``SELECT_TUPLES`` row exactly as stored (no upgrade).

        ``fetched`` holds the value rows of the whole statement (:meth:`_values`).
        """
        (
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            parent_id,
            checkpoint,
            metadata,
            metadata_exact,
            _schema_version,
            _b_channels,
            _b_types,
            _b_blobs,
            w_tasks,
            w_channels,
            w_types,
            w_blobs,
            w_paths,
            w_idxs,
            s_types,
            s_blobs,
        ) = row[:19]
        where = (thread_id, checkpoint_ns, checkpoint_id)
        inline = checkpoint.get("channel_values") or {}
        values = dict(inline)
        for channel, version in (checkpoint.get("channel_versions") or {}).items():
            if channel in inline and inline[channel] is not True:
                continue  # stored in the row (the `true` marker: a DeltaChannel snapshot)
            key = (thread_id, checkpoint_ns, channel)
            chain = fetched.blobs.get(key)
            version = str(version)
            if chain is None or version not in chain or chain[version][0] == "empty":
                continue
            held = fetched.held.get(key)
            if held is not None and held.version == version and chain[version][0] == DELTA_TYPE:
                values[channel] = self._held_value(channel, version, chain, held, where)
                continue
            values[channel] = self._decode_channel(
                channel,
                version,
                chain,
                where=where,
                reader=fetched.reader(key, chain),
            )
        if s_types and checkpoint.get("v", 4) < 4:
            # checkpoint format < 4: pending sends lived in the parent's writes
            values[TASKS] = [
                self._decode_value(t, b, where=where, channel=TASKS)
                for t, b in zip(s_types, s_blobs, strict=True)
            ]
            versions = checkpoint.setdefault("channel_versions", {})
            versions[TASKS] = (
                max(versions.values()) if versions else self.get_next_version(None, None)
            )
        checkpoint["channel_values"] = values
        caller_key = False
        if metadata_exact is not None:
            try:
                metadata, caller_key = decode_metadata(self.serde, metadata_exact)
            except Exception as exc:
                raise CorruptCheckpointError(
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    checkpoint_id=checkpoint_id,
                    channel="<metadata>",
                    reason=f"{type(exc).__name__}: {exc}",
                ) from exc
        if not caller_key:
            metadata = _without_own_version(metadata, _schema_version)
        writes: list[PendingWrite] = []
        if w_tasks:
            order = sorted(
                range(len(w_tasks)),
                key=lambda i: writes_sort_key(w_paths[i] or "", w_tasks[i], w_idxs[i]),
            )
            writes = [
                (
                    w_tasks[i],
                    w_channels[i],
                    self._decode_value(w_types[i], w_blobs[i], where=where, channel=w_channels[i]),
                )
                for i in order
            ]
        tup = CheckpointTuple(
            config={
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": checkpoint_ns,
                    "checkpoint_id": checkpoint_id,
                }
            },
            checkpoint=checkpoint,
            metadata=metadata,
            parent_config=(
                {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": checkpoint_ns,
                        "checkpoint_id": parent_id,
                    }
                }
                if parent_id
                else None
            ),
            pending_writes=writes,
        )
        return tup

    # -- writes --

    def _op_put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Op:
        thread_id, checkpoint_ns, parent_id = _ids(config, write=True)
        checkpoint_id = check_id("checkpoint_id", checkpoint["id"])
        # values a read upgraded in memory (migrated versions) are stored too
        stored, blob_values = self._split_inline(checkpoint)
        to_store = [
            (k, str(ver), blob_values[k])
            for k, ver in versions_to_store(checkpoint, new_versions).items()
            if k in blob_values
        ]
        rows, links = self._encode_channel_values(
            thread_id, checkpoint_ns, to_store, writes_of=parent_id
        )
        md = self._merge_metadata(config, metadata)
        json_md, exact_md = encode_metadata(md, self.serde)
        params: dict[str, Any] = {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
            "parent_id": parent_id,
            "channels": [r[0] for r in rows],
            "versions": [r[1] for r in rows],
            "types": [r[2].type for r in rows],
            "blobs": [r[2].blob for r in rows],
            "bases": [r[2].base for r in rows],
            "roots": [r[2].root for r in rows],
            "writes_of": [r[2].writes_of for r in rows],
            **_ref_params(rows),
            "checkpoint": Jsonb(stored),
            "metadata": Jsonb(json_md),
            "metadata_exact": exact_md,
            "schema_version": self._schema_version(),
        }
        done = yield Stmt(self._q.put, params, fetch=True)
        if done is not None and not done:
            # a delta's base is gone (another process deleted or pruned it):
            # nothing was written; store the values whole
            self._chains.forget(thread_id, checkpoint_ns)
            rows, links = self._encode_channel_values(
                thread_id, checkpoint_ns, to_store, deltas=False
            )
            params.update(
                types=[r[2].type for r in rows],
                blobs=[r[2].blob for r in rows],
                bases=[None] * len(rows),
                roots=[None] * len(rows),
                writes_of=[None] * len(rows),
                **_ref_params([]),
            )
            yield Stmt(self._q.put, params, fetch=True)
        for channel, link in links:
            self._remember(thread_id, checkpoint_ns, channel, link)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
            }
        }

    def _split_inline(self, checkpoint: Checkpoint) -> tuple[dict[str, Any], dict[str, Any]]:
        """The checkpoint row's jsonb (with the inline values) and the values stored as blobs."""
        stored: dict[str, Any] = dict(checkpoint)
        inline: dict[str, Any] = {}
        blob_values: dict[str, Any] = {}
        for k, v in checkpoint["channel_values"].items():
            if isinstance(v, _DeltaSnapshot):
                # the `true` marker is what langgraph-checkpoint-postgres writes
                blob_values[k] = v
                inline[k] = True
            elif _inline_ok(v):
                inline[k] = v
            else:
                blob_values[k] = v
        stored["channel_values"] = inline
        return stored, blob_values

    def _split_values(
        self, checkpoint: Checkpoint, new_versions: Mapping[str, Any]
    ) -> tuple[dict[str, Any], tuple[list[str], list[str], list[str], list[bytes | None]]]:
        """The checkpoint row's jsonb and the blobs of ``new_versions``, as whole values.

        The upgrade path writes these: an upgraded value is never a delta.
        """
        stored, blob_values = self._split_inline(checkpoint)
        channels: list[str] = []
        versions: list[str] = []
        types: list[str] = []
        blobs: list[bytes | None] = []
        for k, ver in new_versions.items():
            if k in blob_values:
                type_, blob = self._encode_value(blob_values[k], k)
                channels.append(k)
                versions.append(str(ver))
                types.append(type_)
                blobs.append(blob)
        return stored, (channels, versions, types, blobs)

    def _merge_metadata(
        self, config: RunnableConfig, metadata: CheckpointMetadata
    ) -> dict[str, Any]:
        # LangGraph's get_checkpoint_metadata, minus its stripping of "\u0000"
        # (data loss): we store such values exactly.
        md: dict[str, Any] = dict(metadata)
        for obj in (config.get("metadata"), config.get("configurable")):
            if not obj:
                continue
            for key, v in obj.items():
                if key in md or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                    continue
                if isinstance(v, (str, int, bool, float)):
                    md[key] = v
        md.pop("writes", None)
        return md

    def _op_put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Op:
        thread_id, checkpoint_ns, checkpoint_id = _ids(config, write=True)
        if not checkpoint_id:
            raise InvalidConfigError(field="checkpoint_id", reason="put_writes needs one")
        idxs: list[int] = []
        channels: list[str] = []
        types: list[str] = []
        blobs: list[bytes] = []
        waits: list[tuple[str, WaitInfo, Any]] = []
        for idx, (channel, value) in enumerate(writes):
            type_, blob = self._encode_value(value, channel)
            idxs.append(WRITES_IDX_MAP.get(channel, idx))
            channels.append(channel)
            types.append(type_)
            blobs.append(blob)
            if channel == INTERRUPT:
                waits.extend(_marked_interrupts(value))
        upsert = all(w[0] in WRITES_IDX_MAP for w in writes)
        params: dict[str, Any] = {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "has_interrupt": INTERRUPT in channels,
            "idxs": idxs,
            "channels": channels,
            "types": types,
            "blobs": blobs,
            "w_ids": [],
            "w_kinds": [],
            "w_deadlines": [],
            "w_approvers": [],
            "w_levels": [],
            "w_types": [],
            "w_values": [],
        }
        for interrupt_id, info, value in waits:
            v_type, v_blob = self._encode_value(value)
            params["w_ids"].append(interrupt_id)
            params["w_kinds"].append(info.kind)
            params["w_deadlines"].append(info.deadline)
            params["w_approvers"].append(Jsonb(list(info.approvers)))
            params["w_levels"].append(info.escalation_level)
            params["w_types"].append(v_type)
            params["w_values"].append(v_blob)
        yield Stmt(self._q.put_writes_upsert if upsert else self._q.put_writes_insert, params)
        if self.delta_policy.enabled and not upsert:
            self._write_cache.add(
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                [
                    (ch, WriteRef(task_id, i, t, b))
                    for i, ch, t, b in zip(idxs, channels, types, blobs, strict=True)
                ],
            )

    # -- versions (the official saver's format, so both read each other's rows) --

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Next channel version, ``"<counter:032>.<random:016>"`` as the official saver."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


_MSGPACK = "msgpack"


class _StaleHeld(Exception):
    """A version read without its chain is not the one the saver holds: read again."""


class _Values:
    """The value rows one read fetched for all its checkpoints, and a reader per chain."""

    __slots__ = ("blobs", "held", "policy", "readers", "writes")

    def __init__(self, policy: DeltaPolicy) -> None:
        self.policy = policy
        # (thread, ns, channel) -> {version: (type, blob, base version, writes_of)}
        self.blobs: dict[tuple[str, str, str], dict[str, tuple[Any, ...]]] = {}
        # (thread, ns) -> {(checkpoint id, task id, idx): (type, blob)}
        self.writes: dict[tuple[str, str], dict[tuple[str, str, int], tuple[str, bytes | None]]]
        self.writes = {}
        self.readers: dict[tuple[str, str, str], ChainReader] = {}
        # (thread, ns, channel) -> the version the saver holds whole, whose
        # chain the statement did not fetch (get_tuple only)
        self.held: dict[tuple[str, str, str], Link] = {}

    def reader(
        self, key: tuple[str, str, str], chain: Mapping[str, tuple[Any, ...]]
    ) -> ChainReader:
        reader = self.readers.get(key)
        if reader is None:
            reader = self.readers[key] = ChainReader(
                chain, self.writes.get((key[0], key[1]), {}), self.policy
            )
        return reader


def _ref_params(rows: Sequence[tuple[str, str, Stored]]) -> dict[str, list[Any]]:
    """The pending writes the put's deltas refer to, with the md5 of their bytes."""
    out: dict[str, list[Any]] = {"r_channels": [], "r_tasks": [], "r_idxs": [], "r_md5s": []}
    for channel, _, stored in rows:
        for task_id, idx, blob in stored.refs:
            out["r_channels"].append(channel)
            out["r_tasks"].append(task_id)
            out["r_idxs"].append(idx)
            out["r_md5s"].append(hashlib.md5(blob, usedforsecurity=False).hexdigest())
    return out


def _marked_interrupts(value: Any) -> list[tuple[str, WaitInfo, Any]]:
    """The interrupts of an ``__interrupt__`` write whose value carries the wait marker."""
    items = value if isinstance(value, (list, tuple)) else [value]
    found = []
    for item in items:
        info = extract_wait(item)
        interrupt_id = getattr(item, "id", None)
        if info is not None and isinstance(interrupt_id, str):
            found.append((interrupt_id, info, getattr(item, "value", item)))
    return found


def _without_own_version(metadata: Any, schema_version: Any) -> Any:
    """A row's metadata without the ``schema_version`` key an earlier release put there.

    Rows of earlier releases hold the schema version twice, in their column and
    as ``metadata["schema_version"]`` (written over any value of the caller's);
    the key is left out where it equals the column. A row whose caller wrote a
    key of that name keeps it: such metadata is stored in its exact encoding
    with a mark (:func:`~._metadata.encode_metadata`), which skips this.
    """
    own = metadata.get(SCHEMA_VERSION_KEY) if isinstance(metadata, dict) else None
    if type(own) is int and own == int(schema_version or 0):
        return {k: v for k, v in metadata.items() if k != SCHEMA_VERSION_KEY}
    return metadata


def _contains(actual: Any, expected: Any) -> bool:
    """jsonb's ``@>`` on Python values: what ``list(filter=...)`` means."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _contains(actual[k], v) for k, v in expected.items()
        )
    if isinstance(expected, (list, tuple)):
        return isinstance(actual, (list, tuple)) and all(
            any(_contains(a, e) for a in actual) for e in expected
        )
    return bool(actual == expected)


def _search_path(schema: str) -> str:
    # set_config takes the list as text: quote the schema as an identifier
    return '"' + schema.replace('"', '""') + '", pg_catalog'
