"""The I/O-free core of the PostgreSQL savers.

Every saver operation is a generator method here: it yields :class:`Stmt`
objects (a query, its parameters, whether rows come back) and receives the
rows, then returns the operation's result. The sync and async savers only run
these generators against a connection (as psycopg's ``_connection_base.py``
does), so the logic exists once.
"""

from __future__ import annotations

import copy
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
    DeltaPolicy,
    WriteRef,
)
from langgraph_durable.checkpointers._errors import CorruptCheckpointError, InvalidConfigError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._migrations import check_migrations
from langgraph_durable.checkpointers._waits import WaitInfo
from langgraph_durable.checkpointers.postgres._arrays import ByteaArray, IntArray, TextArray
from langgraph_durable.checkpointers.postgres._codec import (
    PostgresCodec,
    _inline_ok,
    _StaleHeld,
    _Values,
)
from langgraph_durable.checkpointers.postgres._metadata import (
    _without_own_version,
    decode_metadata,
    encode_metadata,
)
from langgraph_durable.checkpointers.postgres._put_params import (
    blob_params,
    marked_interrupts,
    thread_config,
    whole_params,
)
from langgraph_durable.checkpointers.postgres._stmt import Op, Rows, Stmt, _ids, _Queries
from langgraph_durable.checkpointers.postgres._thread_ops import ThreadOpsCore
from langgraph_durable.migrations import (
    versions_to_store,
)

# The vocabulary every core module and shell imports from here
__all__ = ["Op", "PostgresCore", "Rows", "Stmt", "_Queries", "check_migrations"]


class PostgresCore(PostgresCodec, ThreadOpsCore):
    """Statement builders and row parsers shared by both Postgres savers (no I/O).

    One per saver, held by the saver and by its stores. Args: ``serde``,
    ``queries`` (the statements of the saver's schema), ``migrations`` (a
    checked ``StateMigrations`` or ``None``) and ``delta_policy``.
    """

    def __init__(
        self,
        serde: SerializerProtocol,
        queries: _Queries,
        migrations: Any,
        delta_policy: DeltaPolicy,
    ) -> None:
        self.serde = serde
        self.queries = queries
        self._migrations = migrations
        self.delta_policy = delta_policy

    def with_serde(self, serde: SerializerProtocol) -> PostgresCore:
        """A core like this one with another serializer, sharing its caches."""
        # created now so that the copy shares them
        _ = self._chains, self._write_cache
        clone = copy.copy(self)
        clone.serde = serde
        return clone

    def _op_schema_version(self, config: RunnableConfig) -> Op[int | None]:
        thread_id, checkpoint_ns, checkpoint_id = _ids(config)
        params: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id:
            params["checkpoint_id"] = checkpoint_id
            query = self.queries.schema_version_by_id
        else:
            query = self.queries.schema_version_latest
        rows = yield Stmt(query, params, fetch=True)
        return int(rows[0][0]) if rows else None

    # -- reads --

    def _op_get_tuple(self, config: RunnableConfig) -> Op[CheckpointTuple | None]:
        thread_id, checkpoint_ns, checkpoint_id = _ids(config)
        params: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
        if checkpoint_id:
            params["checkpoint_id"] = checkpoint_id
            query = self.queries.get_by_id
        else:
            query = self.queries.get_latest
        # the chains of versions this saver holds whole are not fetched
        held = dict(self._chains.links(thread_id, checkpoint_ns))
        params["held_channels"] = TextArray(held)
        params["held_versions"] = TextArray([link.version for link in held.values()])
        rows = yield Stmt(query, params, fetch=True)
        if not rows:
            return None
        values = self._values(rows)
        values.held = {(thread_id, checkpoint_ns, ch): link for ch, link in held.items()}
        try:
            return self._parse_tuple(rows[0], values)
        except _StaleHeld:
            # another writer stored other bytes at a held version: read the chains
            params["held_channels"] = params["held_versions"] = TextArray()
            rows = yield Stmt(query, params, fetch=True)
            return self._parse_tuple(rows[0], self._values(rows)) if rows else None

    def _parse_tuple(self, row: tuple[Any, ...], values: _Values) -> CheckpointTuple:
        return self._finish_read(self._parse_raw(row, values), int(row[7] or 0))

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
            schema_version,
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
        values = self._row_channel_values(checkpoint, fetched, where)
        if s_types and checkpoint.get("v", 4) < 4:
            # checkpoint format < 4: pending sends lived in the parent's writes
            self._add_parent_sends(checkpoint, values, s_types, s_blobs, where)
        checkpoint["channel_values"] = values
        metadata = self._row_metadata(metadata, metadata_exact, schema_version, where)
        writes = (
            self._row_writes(w_tasks, w_channels, w_types, w_blobs, w_paths, w_idxs, where)
            if w_tasks
            else []
        )
        return CheckpointTuple(
            config=thread_config(thread_id, checkpoint_ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=metadata,
            parent_config=(
                thread_config(thread_id, checkpoint_ns, parent_id) if parent_id else None
            ),
            pending_writes=writes,
        )

    def _row_channel_values(
        self, checkpoint: dict[str, Any], fetched: _Values, where: tuple[str, str, str]
    ) -> dict[str, Any]:
        """The checkpoint's channel values: those inline in its row, the others decoded."""
        thread_id, checkpoint_ns, _ = where
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
        return values

    def _add_parent_sends(
        self,
        checkpoint: dict[str, Any],
        values: dict[str, Any],
        s_types: Sequence[str],
        s_blobs: Sequence[bytes],
        where: tuple[str, str, str],
    ) -> None:
        """Give a format < 4 checkpoint the sends its parent's writes held, as a channel."""
        values[TASKS] = [
            self._decode_value(t, b, where=where, channel=TASKS)
            for t, b in zip(s_types, s_blobs, strict=True)
        ]
        versions = checkpoint.setdefault("channel_versions", {})
        versions[TASKS] = max(versions.values()) if versions else self.get_next_version(None, None)

    def _row_metadata(
        self,
        metadata: dict[str, Any],
        metadata_exact: bytes | None,
        schema_version: int | None,
        where: tuple[str, str, str],
    ) -> Any:
        """The metadata exactly as the caller wrote it.

        The jsonb column cannot hold every value (NUL characters, non-JSON types),
        so an exact copy beside it wins when there is one; the schema version
        we add is dropped unless the caller wrote that key itself.
        """
        caller_key = False
        if metadata_exact is not None:
            try:
                metadata, caller_key = decode_metadata(self.serde, metadata_exact)
            except Exception as exc:
                thread_id, checkpoint_ns, checkpoint_id = where
                raise CorruptCheckpointError(
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    checkpoint_id=checkpoint_id,
                    channel="<metadata>",
                    reason=f"{type(exc).__name__}: {exc}",
                ) from exc
        if not caller_key:
            metadata = _without_own_version(metadata, schema_version)
        return metadata

    def _row_writes(
        self,
        w_tasks: Sequence[str],
        w_channels: Sequence[str],
        w_types: Sequence[str],
        w_blobs: Sequence[bytes],
        w_paths: Sequence[str | None],
        w_idxs: Sequence[int],
        where: tuple[str, str, str],
    ) -> list[PendingWrite]:
        """The checkpoint's pending writes, decoded, in LangGraph's order."""
        order = sorted(
            range(len(w_tasks)),
            key=lambda i: writes_sort_key(w_paths[i] or "", w_tasks[i], w_idxs[i]),
        )
        return [
            (
                w_tasks[i],
                w_channels[i],
                self._decode_value(w_types[i], w_blobs[i], where=where, channel=w_channels[i]),
            )
            for i in order
        ]

    # -- writes --

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Op[RunnableConfig]:
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
            **blob_params(rows),
            "checkpoint": Jsonb(stored),
            "metadata": Jsonb(json_md),
            "metadata_exact": exact_md,
            "schema_version": self._schema_version(),
        }
        done = yield Stmt(self.queries.put, params, fetch=True)
        if done is not None and not done:
            # a delta's base is gone (another process deleted or pruned it):
            # nothing was written; store the values whole
            self._chains.forget(thread_id, checkpoint_ns)
            rows, links = self._encode_channel_values(
                thread_id, checkpoint_ns, to_store, deltas=False
            )
            params.update(whole_params(rows))
            yield Stmt(self.queries.put, params, fetch=True)
        for channel, link in links:
            self._remember(thread_id, checkpoint_ns, channel, link)
        return thread_config(thread_id, checkpoint_ns, checkpoint_id)

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

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Op[Any]:
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
                waits.extend(marked_interrupts(value))
        upsert = all(w[0] in WRITES_IDX_MAP for w in writes)
        params: dict[str, Any] = {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "has_interrupt": INTERRUPT in channels,
            "idxs": IntArray(idxs),
            "channels": TextArray(channels),
            "types": TextArray(types),
            "blobs": ByteaArray(blobs),
            **self._wait_params(waits),
        }
        yield Stmt(
            self.queries.put_writes_upsert if upsert else self.queries.put_writes_insert, params
        )
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

    def _wait_params(self, waits: Sequence[tuple[str, WaitInfo, Any]]) -> dict[str, Any]:
        """The wait-index arrays of the marked interrupts a ``put_writes`` stores."""
        params: dict[str, Any] = {
            "w_ids": TextArray(),
            "w_kinds": TextArray(),
            # timestamptz[] and jsonb[] in the statement: an empty text[] casts
            # to either; entries go as lists psycopg adapts
            "w_deadlines": TextArray() if not waits else [],
            "w_approvers": TextArray() if not waits else [],
            "w_levels": IntArray(),
            "w_types": TextArray(),
            "w_values": ByteaArray(),
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
        return params

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
