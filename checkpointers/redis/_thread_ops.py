"""Whole-thread operations of the Redis saver: delete, delete a run's checkpoints, prune, copy.

Each is an I/O-free operation on the core (see :mod:`._ops`); deletes drop
the thread's due-wait shard entries and registry entries too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers._waits import decision_claim_time
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import SEP, index_prefix
from langgraph_durable.checkpointers.redis._core import RedisCore
from langgraph_durable.checkpointers.redis._keys import shard_of
from langgraph_durable.checkpointers.redis._ops import Call, Cmd, Op, script


def delete_thread(core: RedisCore, thread_id: str) -> Op[Any]:
    """Delete every key of a thread (one script) and its registry entries."""
    thread_id = check_id("thread_id", thread_id)
    registry = core.keys.registry(shard_of(thread_id))
    core.registry.forget(registry, thread_id)
    core.codec.chains.forget(thread_id)
    core.codec.writes.forget(thread_id)
    replies = yield Call(
        [
            ("INCR", core.keys.registry_generation()),
            script(S.DELETE_THREAD, core.keys.thread(thread_id)),
            ("SREM", registry, thread_id),
            ("ZREM", core.keys.registry_expiry(shard_of(thread_id)), thread_id),
        ]
    )
    if replies[1]:
        yield Call(core.unshard(thread_id, replies[1]))


def delete_for_runs(core: RedisCore, run_ids: Sequence[str]) -> Op[Any]:
    """Delete the checkpoints (and their writes) of runs, via the run index."""
    run_ids = [check_id("run_id", r) for r in run_ids]
    if not run_ids:
        return
    core.codec.chains.clear()  # a put re-checks its base anyway; this spares the retry
    reply = yield Call([("SMEMBERS", core.keys.run(r)) for r in run_ids])
    cmds: list[Cmd] = []
    owners: list[str] = []
    for run_id, threads in zip(run_ids, reply, strict=True):
        prefix = index_prefix("run_id", run_id)
        for t in sorted(threads):
            thread_id = t.decode()
            owners.append(thread_id)
            cmds.append(script(S.DELETE_RUN, core.keys.thread(thread_id), prefix))
    if cmds:
        replies = yield Call(cmds)
        unshard = [c for t, r in zip(owners, replies, strict=True) for c in core.unshard(t, r)]
        if unshard:
            yield Call(unshard)
    for run_id in run_ids:
        run_key = core.keys.run(run_id)
        core.registry.forget_key(run_key)
    yield Call(
        [
            ("INCR", core.keys.registry_generation()),
            *(("DEL", core.keys.run(r)) for r in run_ids),
        ]
    )


def prune(core: RedisCore, thread_ids: Sequence[str], strategy: str) -> Op[Any]:
    """``keep_latest`` (DeltaChannel-safe) or ``delete`` for each thread."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread ids, not a str")
    if strategy not in ("keep_latest", "delete"):
        raise ValueError(f"unknown prune strategy: {strategy!r}")
    for thread_id in thread_ids:
        if strategy == "delete":
            yield from delete_thread(core, thread_id)
            continue
        thread_id = check_id("thread_id", thread_id)
        core.codec.chains.forget(thread_id)
        (gone,) = yield Call([script(S.PRUNE_KEEP_LATEST, core.keys.thread(thread_id))])
        if gone:
            yield Call(core.unshard(thread_id, gone))


def copy_thread(core: RedisCore, source: str, target: str) -> Op[Any]:
    """Copy everything of ``source`` onto ``target`` in one script.

    Checkpoints, channel values, pending writes, waits, approval decisions
    and claims, activity results. Not the run lease: that belongs to the
    process running ``source``.
    """
    source, target = check_id("thread_id", source), check_id("thread_id", target)
    (dump,) = yield Call([script(S.EXPORT, core.keys.thread(source))])
    c, r, b, w, z, za, x, wi, wt, wl, wd, dc, cl, act = dump
    if not z:
        return
    wt = [v if i % 2 == 0 else core.codec.rethread_wait(v, target) for i, v in enumerate(wt)]
    groups = [c, r, b, w, z, za, x, wi, wt, wl, wd, dc, cl, act]
    args: list[Any] = [*core.ttl_args(), *(len(g) for g in groups)]
    for g in groups:
        args += g
    cmds = core.registry.thread(target)
    # the schema versions the copied checkpoints were written with (migrations)
    for version in sorted({core.codec.record_version(c[i]) for i in range(1, len(c), 2)}):
        cmds += core.registry.add(core.keys.version(version), target)
    run_prefix = index_prefix("run_id", "")
    assert run_prefix is not None
    key_part = run_prefix.split(SEP)[0] + SEP
    for m in x:
        text = m.decode()
        if text.startswith(key_part):
            value = text[len(key_part) :].split(SEP)[0]
            if value.startswith('"'):
                cmds += core.registry.add(core.keys.run(json.loads(value)), target)
    cmds.append(script(S.IMPORT, core.keys.thread(target), *args))
    shard = core.keys.wait_shard(shard_of(target))
    scores = {wd[i]: wd[i + 1] for i in range(0, len(wd), 2)}
    for fld in wl:
        score = scores.get(fld, b"+inf")
        cmds.append(("ZADD", shard, score, target.encode() + b"\x00" + fld))
    # a decision recorded on a wait still open but not yet resumed: the
    # sweepers' hint to finish it on the copy too (they check the thread)
    open_ids = {fld.rsplit(b"\x00", 1)[-1] for fld in wl}
    resume = core.keys.resume_shard(shard_of(target))
    for i in range(0, len(dc), 2):
        if dc[i] in open_ids:
            decision = json.loads(dc[i + 1])
            # when its claim counts from (a deferred decision: at once), as
            # record_decision scores it on the source
            ms = int(decision_claim_time(decision).timestamp() * 1000) if decision.get("at") else 0
            cmds.append(("ZADD", resume, "NX", ms, target.encode() + b"\x00" + dc[i]))
    yield Call(cmds)
