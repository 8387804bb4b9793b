"""How the PostgreSQL savers turn values into rows and rows into values (no I/O).

:class:`PostgresCodec` is the one place a channel value becomes bytes (whole,
or as a delta of the version it extends, as :mod:`.._delta` decides) and bytes
become a value again, with the chains of deltas a read rebuilds, the versions
this saver holds whole (its caches), and the upgrade of an older schema
version on the way out. :class:`~._core.PostgresCore` builds the statements
on top of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import (
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._delta import (
    DELTA_TYPE,
    BrokenChainError,
    DeltaPolicy,
    Link,
    Stored,
    WriteRows,
    encode_value,
    snapshot_link,
)
from langgraph_durable.checkpointers._delta_caches import ChainCache, WriteCache
from langgraph_durable.checkpointers._delta_read import ChainReader, rebuilds_held
from langgraph_durable.checkpointers._errors import CorruptCheckpointError
from langgraph_durable.checkpointers._readable import mark_readable
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.checkpointers.postgres._metadata import (
    float_survives_jsonb,
)
from langgraph_durable.checkpointers.postgres._stmt import _Queries
from langgraph_durable.migrations import (
    finish_read,
    is_migrated_version,
)

__all__ = ["PostgresCodec"]


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


class PostgresCodec:
    """Value encoding and decoding shared by every operation of one saver.

    Holds ``serde`` (replaced by ``with_allowlist`` on a clone of the saver),
    ``queries`` (the rendered statements), ``_migrations`` and the delta policy.
    """

    serde: SerializerProtocol
    queries: _Queries
    _migrations: Any

    # -- value encoding: the one place a channel value becomes bytes --

    delta_policy: DeltaPolicy = DeltaPolicy()
    """When a growing value is stored as a delta (the savers' ``deltas=`` option)."""

    @property
    def _chains(self) -> ChainCache:
        # per saver instance, created on first use (no I/O in constructors)
        cache: ChainCache | None = self.__dict__.get("_chain_cache")
        if cache is None:
            cache = self.__dict__.setdefault("_chain_cache", ChainCache())
        return cache

    @property
    def _write_cache(self) -> WriteCache:
        # the pending writes a put's deltas may refer to
        cache: WriteCache | None = self.__dict__.get("_pending_write_cache")
        if cache is None:
            cache = self.__dict__.setdefault("_pending_write_cache", WriteCache())
        return cache

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
            # by range); an upgraded value is stored whole
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

    # -- schema version: every read is upgraded to the code's version here --

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

    def _values(self, rows: Sequence[tuple[Any, ...]]) -> _Values:
        """The value rows a ``SELECT_TUPLES`` statement fetched once for all its checkpoints."""
        out = _Values(self.delta_policy)
        for row in rows:
            if row[19]:
                out.add_chains(row)
            if row[24]:
                out.add_writes(row)
        return out


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

    def add_chains(self, row: tuple[Any, ...]) -> None:
        """Index the chain rows a statement row carries (columns 8-10, 19-21, 29-31)."""
        versions = row[19]
        if row[8] is None and row[20] is None:
            # get_tuple of one channel's chain (the common case)
            chain = self.blobs.setdefault((row[0], row[1], row[31]), {})
            for version, type_, blob, base, writes_of in zip(
                versions, row[9], row[10], row[29], row[30], strict=True
            ):
                # a NULL type is a delta's (the statement sends no 'delta')
                chain[version] = (DELTA_TYPE if type_ is None else type_, blob, base, writes_of)
            return
        n = len(versions)
        # NULL: every row's is the statement row's (thread, namespace)
        # or the one channel sent beside the arrays
        channels = row[8] if row[8] is not None else [row[31]] * n
        threads = row[20] if row[20] is not None else [row[0]] * n
        nss = row[21] if row[21] is not None else [row[1]] * n
        for thread_id, ns, channel, version, type_, blob, base, writes_of in zip(
            threads, nss, channels, versions, row[9], row[10], row[29], row[30], strict=True
        ):
            self.blobs.setdefault((thread_id, ns, channel), {})[version] = (
                DELTA_TYPE if type_ is None else type_,
                blob,
                base,
                writes_of,
            )

    def add_writes(self, row: tuple[Any, ...]) -> None:
        """Index the pending writes deltas refer to that a statement row carries (22-28)."""
        # the statement sends msgpack writes only (what deltas refer to)
        if row[22] is None:
            writes = self.writes.setdefault((row[0], row[1]), {})
            for cid, task_id, idx, blob in zip(row[24], row[25], row[26], row[28], strict=True):
                writes[(cid, task_id, idx)] = (_MSGPACK, blob)
            return
        for thread_id, ns, cid, task_id, idx, blob in zip(
            row[22], row[23], row[24], row[25], row[26], row[28], strict=True
        ):
            self.writes.setdefault((thread_id, ns), {})[(cid, task_id, idx)] = (_MSGPACK, blob)

    def reader(
        self, key: tuple[str, str, str], chain: Mapping[str, tuple[Any, ...]]
    ) -> ChainReader:
        reader = self.readers.get(key)
        if reader is None:
            reader = self.readers[key] = ChainReader(
                chain, self.writes.get((key[0], key[1]), {}), self.policy
            )
        return reader
