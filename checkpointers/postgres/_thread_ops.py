"""I/O-free operations on whole threads: delete, copy, prune, delta history, waits.

A base of :class:`langgraph_durable.checkpointers.postgres._core.PostgresCore`; same protocol
(generators of :class:`~langgraph_durable.checkpointers.postgres._stmt.Stmt`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import DeltaChannelHistory, PendingWrite, writes_sort_key
from langgraph.checkpoint.serde.types import INTERRUPT

from langgraph_durable.checkpointers._delta import DELTA_TYPE
from langgraph_durable.checkpointers._delta_caches import ChainCache
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import WaitEntry, WaitInfo
from langgraph_durable.checkpointers.postgres import _sql
from langgraph_durable.checkpointers.postgres._stmt import Op, Stmt, _ids, _Queries, key_to_store

PRUNE_STRATEGIES = ("keep_latest", "delete")


class ThreadOpsCore:
    """Whole-thread operations; needs ``queries``, ``_chains`` and the decoders from the core."""

    queries: _Queries

    @property
    def _chains(self) -> ChainCache:
        raise NotImplementedError

    def _decode_value(
        self, type_: str, blob: bytes | None, *, where: tuple[str, str, str], channel: str
    ) -> Any:
        raise NotImplementedError

    def _decode_channel(
        self,
        channel: str,
        version: str,
        rows: Mapping[str, tuple[Any, ...]],
        *,
        where: tuple[str, str, str],
        writes: Mapping[tuple[str, str, int], tuple[str, bytes | None]] | None = None,
    ) -> Any:
        raise NotImplementedError

    def _op_delete_threads(self, thread_ids: Sequence[str]) -> Op[Any]:
        ids = [check_id("thread_id", t) for t in thread_ids]
        if ids:
            yield Stmt(self.queries.delete_threads, {"thread_ids": ids})
            for t in ids:
                self._chains.forget(t)

    def _op_delete_for_runs(self, run_ids: Sequence[str]) -> Op[Any]:
        ids = [str(r) for r in run_ids]
        if ids:
            yield Stmt(self.queries.delete_for_runs, {"run_ids": ids}, prepare=False)
            # which threads the runs touched is not known here; a put re-checks
            # its base anyway, this only spares it the retry
            self._chains.clear()

    def _op_copy_thread(self, source: str, target: str) -> Op[Any]:
        params = {
            "source": check_id("thread_id", source),
            "target": key_to_store("thread_id", target),
        }
        yield Stmt(_sql.BEGIN)
        yield Stmt(self.queries.copy_thread, params)
        yield Stmt(_sql.COMMIT)

    def _op_prune(self, thread_ids: Sequence[str], strategy: str) -> Op[Any]:
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        if strategy not in PRUNE_STRATEGIES:
            raise ValueError(f"unknown prune strategy {strategy!r}; expected {PRUNE_STRATEGIES}")
        ids = [check_id("thread_id", t) for t in thread_ids]
        if not ids:
            return
        if strategy == "delete":
            yield from self._op_delete_threads(ids)
            return
        yield Stmt(_sql.BEGIN_SNAPSHOT)
        yield from self._prune_to_heads(ids)
        yield Stmt(_sql.COMMIT)
        for t in ids:
            self._chains.forget(t)

    def _prune_to_heads(self, ids: list[str]) -> Op[Any]:
        """Keep-latest pruning of ``ids`` inside the caller's transaction."""
        heads = yield Stmt(self.queries.prune_heads, {"thread_ids": ids}, fetch=True, prepare=False)
        keep: list[tuple[str, str, str]] = []
        for thread_id, ns, head_id, delta_channels in heads or ():
            keep.append((thread_id, ns, head_id))
            if not delta_channels:
                continue
            # DeltaChannel: keep the ancestors back to the nearest one holding a
            # stored value for every delta channel, so the kept head still
            # rebuilds those channels (BaseCheckpointSaver.prune's contract).
            chain = yield Stmt(
                self.queries.prune_chain,
                {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": head_id,
                    "channels": list(delta_channels),
                },
                fetch=True,
                prepare=False,
            )
            open_channels = set(delta_channels)
            for ancestor_id, seeded in chain or ():
                if ancestor_id != head_id:
                    keep.append((thread_id, ns, ancestor_id))
                open_channels.difference_update(seeded)
                if not open_channels:
                    break
        yield Stmt(
            self.queries.prune_delete,
            {
                "thread_ids": ids,
                "keep_threads": [k[0] for k in keep],
                "keep_ns": [k[1] for k in keep],
                "keep_ids": [k[2] for k in keep],
            },
            prepare=False,
        )

    # -- delta channel history --

    def _op_delta_history(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Op[Mapping[str, DeltaChannelHistory]]:
        channels = list(channels)
        if not channels:
            return {}
        thread_id, checkpoint_ns, checkpoint_id = _ids(config)
        rows = yield Stmt(
            self.queries.delta_history,
            {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
                "channels": channels,
            },
            fetch=True,
        )
        where = (thread_id, checkpoint_ns, checkpoint_id or "<latest>")
        # rows: (depth, kind, channel, type, blob, inline, task_id, task_path, idx)
        writes: dict[str, list[tuple[int, tuple[str, str, int], PendingWrite]]] = {
            ch: [] for ch in channels
        }
        seeds: dict[str, Any] = {}
        for depth, kind, channel, type_, blob, inline, task_id, task_path, idx in rows or ():
            if kind == "w":
                value = self._decode_value(type_, blob, where=where, channel=channel)
                key = writes_sort_key(task_path or "", task_id, idx)
                writes[channel].append((depth, key, (task_id, channel, value)))
            elif type_ == DELTA_TYPE:
                # seed rows carry their version in the task_id column
                seeds[channel] = yield from self._op_delta_seed(where, channel, task_id)
            elif type_ is not None:
                seeds[channel] = self._decode_value(type_, blob, where=where, channel=channel)
            else:
                seeds[channel] = inline
        return _history_entries(channels, writes, seeds)

    def _op_delta_seed(self, where: tuple[str, str, str], channel: str, version: str) -> Op[Any]:
        """The value of a history's seed stored as a delta: its chain is fetched and walked."""
        thread_id, checkpoint_ns, _ = where
        chain = yield Stmt(
            self.queries.value_chain,
            {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "channel": channel,
                "version": version,
            },
            fetch=True,
        )
        refs: dict[tuple[str, str, int], tuple[str, bytes | None]] = {}
        for _, _, _, of, tasks, idxs, types, blobs, _ in chain or ():
            for w in zip(tasks or (), idxs or (), types or (), blobs or (), strict=True):
                refs[(of, w[0], w[1])] = (w[2], w[3])
        return self._decode_channel(
            channel,
            version,
            {r[0]: (r[1], r[2], r[8], r[3]) for r in chain or ()},
            where=where,
            writes=refs,
        )

    # -- wait index --

    def _op_list_waits(
        self,
        kind: str | None,
        approver: str | None,
        thread_id: str | None,
        limit: int | None,
    ) -> Op[list[WaitEntry]]:
        rows = yield Stmt(
            self.queries.list_waits,
            {
                "kind": kind,
                "approver": approver,
                "thread_id": None if thread_id is None else check_id("thread_id", thread_id),
                "limit": limit,
            },
            fetch=True,
        )
        entries = []
        for tid, ns, cid, iid, kind_, deadline, approvers, level, v_type, v_blob, created in (
            rows or ()
        ):
            entries.append(
                WaitEntry(
                    thread_id=tid,
                    checkpoint_ns=ns,
                    checkpoint_id=cid,
                    interrupt_id=iid,
                    info=WaitInfo(kind_, deadline, tuple(approvers or ()), level),
                    value=self._decode_value(
                        v_type, v_blob, where=(tid, ns, cid), channel=INTERRUPT
                    ),
                    created_at=created,
                )
            )
        return entries


def _history_entries(
    channels: Sequence[str],
    writes: Mapping[str, list[tuple[int, tuple[str, str, int], PendingWrite]]],
    seeds: Mapping[str, Any],
) -> dict[str, DeltaChannelHistory]:
    """Each channel's history: its seed if any, then its writes, oldest ancestor first."""
    result: dict[str, DeltaChannelHistory] = {}
    for ch in channels:
        # oldest ancestor first (largest depth); within one, writes_sort_key order
        ordered = sorted(writes[ch], key=lambda w: (-w[0], w[1]))
        entry: DeltaChannelHistory = {"writes": [w[2] for w in ordered]}
        if ch in seeds:
            entry["seed"] = seeds[ch]
        result[ch] = entry
    return result
