"""Bulk schema-version upgrades on Redis: the saver's side of ``MigrationStore``.

Candidates are found through the per-version sets ``{<prefix>:v:<N>}`` (thread
ids that hold checkpoints written at version N), scanned in order with SSCAN,
so a batch holds ``limit`` threads at a time. A worker claims a thread with
``SET <thread>:mig NX PX`` (in the thread's slot; it expires if the worker
dies), reads all its checkpoints in one LIST script, upgrades the candidates in
Python, and rewrites each with the ``REWRITE`` script: atomic, and a
compare-and-set on the stored record, so a checkpoint changed by anyone since it
was read (another worker, a put) is left alone and never upgraded twice.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import Any, TypeVar

from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple
from langgraph.checkpoint.serde.types import INTERRUPT

from langgraph_durable.checkpointers._errors import LayoutVersionError, setup_hint
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import SEP, Codec, chain_map, now_utc
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._delta_lua import WREF
from langgraph_durable.checkpointers.redis._keys import shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, script
from langgraph_durable.migrations import (
    BatchOutcome,
    CheckpointRef,
    ItemOutcome,
    Upgrade,
    VersionStatus,
    untagged,
)
from langgraph_durable.migrations.redis import steps

LEASE_MS = 10_000
"""How long a claim on a thread lasts if its worker dies without releasing it.

Short on purpose: a batch takes well under a second, a restarted run waits for
a dead worker's claims to expire, and an expired claim is harmless (the
rewrite is a compare-and-set)."""

T = TypeVar("T")
Gen = Generator[Call, Any, T]
_PAGE = 200
"""Threads per SSCAN page in counts, samples and status."""
_Entry = list[Any]


def _claim_key(core: RedisCore, thread_id: str) -> str:
    return core.keys.thread(thread_id)[0][:-1] + "mig"  # <prefix>:{t:...}:mig


def _read_threads(core: RedisCore, threads: list[str]) -> Gen[Any]:
    """Every checkpoint of each thread, raw entries with their channel values filled in."""
    if not threads:
        return {}
    replies = yield Call([script(S.LIST, core.keys.thread(t), "all", "", "", 0) for t in threads])
    entries: dict[str, list[_Entry]] = {
        t: list(r or []) for t, r in zip(threads, replies, strict=True)
    }
    gets: list[Cmd] = []
    wanted: list[tuple[str, list[bytes]]] = []
    for t, es in entries.items():
        fields = list(dict.fromkeys(f for e in es for f in core.codec.blob_fields(e[3])))
        if fields:
            gets.append(("HMGET", core.keys.thread(t)[4], *fields))
            wanted.append((t, fields))
    if gets:
        values = yield Call(gets)
        chains: list[tuple[str, list[bytes]]] = []
        for (t, fields), vals in zip(wanted, values, strict=True):
            found = dict(zip(fields, vals, strict=True))
            for e in entries[t]:
                e[4] = [found[f] for f in core.codec.blob_fields(e[3])]
            deltas = [f for f, v in found.items() if Codec.is_delta(v)]
            if deltas:
                chains.append((t, deltas))
        if chains:
            # values stored as deltas are read with their chains
            replies = yield Call(
                [script(S.CHAIN, core.keys.thread(t), *fields) for t, fields in chains]
            )
            for (t, _), pairs in zip(chains, replies, strict=True):
                for e in entries[t]:
                    e[6] = pairs
    return entries


def _candidates(
    entries: list[_Entry], versions: list[int], below: int, all_history: bool
) -> list[int]:
    """Indexes of the entries to upgrade (LIST returns them newest first)."""
    seen_ns: set[bytes] = set()
    out = []
    for i, e in enumerate(entries):
        latest = e[0] not in seen_ns
        seen_ns.add(e[0])
        if versions[i] < below and (all_history or latest):
            out.append(i)
    return out


def _record_version(core: RedisCore, entry: _Entry) -> int:
    return core.codec.record_version(entry[2])


def _referenced(entries: list[_Entry]) -> set[str]:
    """The write members the deltas of a thread's values refer to."""
    out: set[str] = set()
    for e in entries:
        pairs = e[6] if len(e) > 6 and e[6] else []
        chain = pairs if isinstance(pairs, dict) else chain_map(pairs)
        out.update(k[len(WREF) :] for k in chain if k.startswith(WREF))
    return out


def _rewrite_cmd(
    core: RedisCore,
    thread_id: str,
    entry: _Entry,
    up: Upgrade,
    target: int,
    referenced: frozenset[str] | set[str] = frozenset(),
) -> tuple[Cmd, list[tuple[str, bytes, str]]]:
    """The REWRITE command of one upgraded checkpoint, and the waits it indexes.

    Replaced pending writes that a delta refers to (``referenced``) are kept
    for it, out of the checkpoint's pending writes.
    """
    new = up.tuple
    ns, cid = entry[0].decode(), entry[1].decode()
    parent = (new.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    # an upgraded value is stored whole, never as a delta
    record, refs, blobs, members, _ = core.codec.encode_put(
        ns, new.checkpoint, new.metadata, up.new_versions, parent, target, deltas=False
    )
    args: list[Any] = [ns, cid, entry[2], record, refs, *core.ttl_args()]
    args += [len(blobs) // 2, *blobs, len(members), *members]
    waits: list[tuple[str, bytes, str]] = []
    old_writes = entry[5] or []
    if up.writes_changed:
        paths: dict[str, str] = {}
        for raw in old_writes:
            if raw is not None:
                tid, _idx, _ch, path, _ = raw.split(b"\x00", 4)
                paths[tid.decode()] = path.decode()
        back = {v: k for k, v in up.task_ids.items()}
        position: dict[str, int] = {}
        flat: list[Any] = []
        now = now_utc()
        for tid, ch, val in new.pending_writes or ():
            node = up.task_nodes.get(tid)
            path = f"~__pregel_pull, {node}" if node else paths.get(back.get(tid, tid), "")
            idx = position.get(tid, 0)
            position[tid] = idx + 1
            i = WRITES_IDX_MAP.get(ch, idx)
            flat += [
                SEP.join((ns, cid, tid, str(i))),
                core.codec.encode_write(tid, i, ch, path, val),
            ]
            if ch == INTERRUPT:
                for item in val if isinstance(val, (list, tuple)) else [val]:
                    w = core.codec.encode_wait(thread_id, ns, cid, tid, item, now)
                    if w is not None:
                        waits.append(w)
        head = SEP.join((ns, cid)) + SEP
        keep = sorted(m for m in referenced if m.startswith(head))
        args += ["1", len(keep), *keep, len(flat) // 2, *flat]
        for fld, wentry, deadline in waits:
            args += [fld, wentry, deadline]
    else:
        args.append("0")
    return script(S.REWRITE, core.keys.thread(thread_id), *args), waits


def _plan_rewrites(
    core: RedisCore,
    mine: list[str],
    entries: dict[str, list[_Entry]],
    scope: tuple[int, int, bool],
    upgrade: Callable[[CheckpointTuple, int], Upgrade],
    items: list[ItemOutcome],
    left_at_v: dict[str, int],
) -> tuple[list[Cmd], list[tuple[str, CheckpointRef, list[tuple[str, bytes, str]]]]]:
    """The REWRITE scripts of the claimed threads' candidates, and what each rewrites.

    ``scope`` is ``(v, below, all_history)``. A candidate that fails to upgrade
    goes to ``items`` with its error; ``left_at_v`` gets each thread's count of
    checkpoints at ``v``.
    """
    v, below, all_history = scope
    cmds: list[Cmd] = []
    pending: list[tuple[str, CheckpointRef, list[tuple[str, bytes, str]]]] = []
    for t in mine:
        es = entries.get(t, [])
        referenced = _referenced(es)
        versions = [_record_version(core, e) for e in es]
        left_at_v[t] = versions.count(v)
        for i in _candidates(es, versions, below, all_history):
            ref = CheckpointRef(t, es[i][0].decode(), es[i][1].decode(), versions[i])
            try:
                raw, stored = core.codec.decode_entry(t, es[i])
                up = upgrade(raw, stored)
                # the version goes to the record's field: the metadata stays as written
                up = replace(up, tuple=untagged(up.tuple, raw))
                cmd, waits = _rewrite_cmd(core, t, es[i], up, below, referenced)
            except Exception as exc:
                items.append(ItemOutcome(ref, exc))
                continue
            cmds.append(cmd)
            pending.append((t, ref, waits))
    return cmds, pending


def _apply_rewrite_replies(
    core: RedisCore,
    pending: list[tuple[str, CheckpointRef, list[tuple[str, bytes, str]]]],
    replies: list[Any],
    v: int,
    items: list[ItemOutcome],
    left_at_v: dict[str, int],
) -> tuple[list[Cmd], int]:
    """The outcome of each rewrite into ``items``; the wait-shard commands that follow.

    Returns ``(commands, rewrites skipped)``: a rewrite that answers nothing
    found its checkpoint changed since it was read.
    """
    follow: list[Cmd] = []
    skipped_items = 0
    for (t, ref, waits), reply in zip(pending, replies or [], strict=True):
        if not reply:
            skipped_items += 1  # changed since read: someone else got there first
            continue
        items.append(ItemOutcome(ref))
        left_at_v[t] -= ref.schema_version == v
        gone = [
            f
            for f in reply[1:]
            if (f.decode() if isinstance(f, bytes) else f) not in {w[0] for w in waits}
        ]
        follow += core.unshard(t, gone)
        shard = core.keys.wait_shard(shard_of(t))
        for fld, _, deadline in waits:
            follow.append(("ZADD", shard, deadline or "+inf", t + SEP + fld))
    return follow, skipped_items


def upgrade_batch(
    core: RedisCore,
    below: int,
    all_history: bool,
    cursor: Any,
    limit: int,
    upgrade: Callable[[CheckpointTuple, int], Upgrade],
) -> Gen[BatchOutcome]:
    """One claimed batch of threads (see the module docs); returns a BatchOutcome."""
    v, scan = cursor if cursor is not None else (0, 0)
    if v >= below:
        return BatchOutcome([], 0, None)
    set_key = core.keys.version(v)
    ((next_scan, members),) = yield Call([("SSCAN", set_key, scan, "COUNT", limit)])
    next_scan = int(next_scan)
    threads = sorted({m.decode() for m in members})
    worker = f"{os.getpid()}-{secrets.token_hex(4)}"
    claimed = yield Call(
        [("SET", _claim_key(core, t), worker, "NX", "PX", LEASE_MS) for t in threads]
    )
    mine = [t for t, ok in zip(threads, claimed, strict=True) if ok]
    skipped_threads = len(threads) - len(mine)
    items: list[ItemOutcome] = []
    entries = yield from _read_threads(core, mine)
    # threads whose checkpoints at version v all get rewritten leave the set
    left_at_v: dict[str, int] = {}
    cmds, pending = _plan_rewrites(
        core, mine, entries, (v, below, all_history), upgrade, items, left_at_v
    )
    replies = (yield Call(cmds)) if cmds else []
    follow, skipped_items = _apply_rewrite_replies(core, pending, replies, v, items, left_at_v)
    for t in mine:
        follow += core.registry.add(core.keys.version(below), t)
        follow.append(script(S.UNLOCK, [_claim_key(core, t)], worker))
    done_at_v = [t for t in mine if left_at_v[t] == 0]
    if done_at_v:  # a removal from a registry: savers re-check what they skip
        follow += [
            ("INCR", core.keys.registry_generation()),
            *(("SREM", set_key, t) for t in done_at_v),
        ]
    if follow:
        yield Call(follow)
    nxt: Any = (v, next_scan)
    if next_scan == 0:  # this version's set is done: the next one, or the end
        nxt = (v + 1, 0) if v + 1 < below else None
    return BatchOutcome(items, skipped_threads + skipped_items, nxt)


def _thread_versions(core: RedisCore, threads: list[str]) -> Gen[Any]:
    """Per thread: (paused, [(ns, cid, version)...])."""
    if not threads:
        return {}
    replies = yield Call([script(S.VERSIONS, core.keys.thread(t)) for t in threads])
    out = {}
    for t, r in zip(threads, replies, strict=True):
        cps = []
        for i in range(1, len(r), 2):
            ns, _, cid = r[i].decode().partition(SEP)
            cps.append((ns, cid, core.codec.record_version(r[i + 1])))
        out[t] = (bool(r[0]), cps)
    return out


def _latest(cps: list[tuple[str, str, int]]) -> dict[str, tuple[str, int]]:
    top: dict[str, tuple[str, int]] = {}
    for ns, cid, v in cps:
        if ns not in top or cid > top[ns][0]:
            top[ns] = (cid, v)
    return top


def counts(core: RedisCore, below: int, all_history: bool) -> Gen[dict[int, int]]:
    """Candidates per stored version (see ``MigrationStore.migration_counts``)."""
    result: dict[int, int] = {}
    for v in range(below):
        cursor = 0
        while True:  # one SSCAN page at a time: memory stays one page
            ((cursor, members),) = yield Call(
                [("SSCAN", core.keys.version(v), cursor, "COUNT", _PAGE)]
            )
            info = yield from _thread_versions(core, sorted({m.decode() for m in members}))
            for _paused, cps in info.values():
                if all_history:
                    n = sum(1 for _, _, cv in cps if cv == v)
                else:
                    n = sum(1 for _, cv in _latest(cps).values() if cv == v)
                if n:
                    result[v] = result.get(v, 0) + n
            if int(cursor) == 0:
                break
    return result


def sample(
    core: RedisCore, version: int, all_history: bool, limit: int
) -> Gen[list[CheckpointTuple]]:
    """Up to ``limit`` candidates stored with ``version``, decoded, not claimed."""
    out: list[CheckpointTuple] = []
    cursor = 0
    while len(out) < limit:
        ((cursor, members),) = yield Call(
            [("SSCAN", core.keys.version(version), cursor, "COUNT", _PAGE)]
        )
        entries = yield from _read_threads(core, sorted({m.decode() for m in members}))
        for t, es in entries.items():
            versions = [_record_version(core, e) for e in es]
            for j in _candidates(es, versions, version + 1, all_history):
                if versions[j] == version and len(out) < limit:
                    out.append(core.codec.decode_entry(t, es[j])[0])
        if int(cursor) == 0:
            break
    return out


def status(core: RedisCore) -> Gen[list[VersionStatus]]:
    """Per version: threads (latest root checkpoint), checkpoints, paused threads.

    A prefix that was never set up raises :class:`LayoutVersionError`, as on
    Postgres (an empty table would read as "set up, nothing stored").
    """
    (layout,) = yield Call([("GET", core.keys.layout())])
    if layout is None:
        prefix = core.keys.prefix
        query = f"?prefix={prefix}" if prefix != "lgd" else ""
        raise LayoutVersionError(
            found=None,
            expected=len(steps()),
            hint=f"{setup_hint(f'redis://...{query}')}, before using the saver",
            where=f'prefix "{prefix}"',
        )
    agg: dict[int, list[int]] = {}
    for shard in core.keys.registries():
        cursor = 0
        while True:
            ((cursor, members),) = yield Call([("SSCAN", shard, cursor, "COUNT", _PAGE)])
            info = yield from _thread_versions(core, sorted({m.decode() for m in members}))
            for paused, cps in info.values():
                for _, _, v in cps:
                    agg.setdefault(v, [0, 0, 0])[1] += 1
                root = _latest(cps).get("")
                if root is not None:
                    row = agg.setdefault(root[1], [0, 0, 0])
                    row[0] += 1
                    row[2] += paused
            if int(cursor) == 0:
                break
    return [VersionStatus(v, *agg[v]) for v in sorted(agg)]
