"""Pending waits read from checkpoints: the wait index of a saver that keeps none.

Our savers index every marked interrupt when they store it
(:class:`~langgraph_durable.checkpointers.WaitIndex`); on any other saver the
helpers find the waits by reading the latest checkpoint of each thread here, and
filter them the way ``list_waits`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_durable.checkpointers import WaitEntry, extract_wait

__all__ = ["INTERRUPT_CHANNEL", "entries_from_tuples", "filter_entries"]

INTERRUPT_CHANNEL = "__interrupt__"


def entries_from_tuples(tuples: Iterable[CheckpointTuple]) -> list[WaitEntry]:
    """The marked interrupts pending in the latest checkpoint of each thread and namespace."""
    latest: dict[tuple[str, str], CheckpointTuple] = {}
    for tup in tuples:
        conf = tup.config["configurable"]
        where = (str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")))
        seen = latest.get(where)
        if seen is None or conf["checkpoint_id"] > seen.config["configurable"]["checkpoint_id"]:
            latest[where] = tup
    found: dict[tuple[str, str], WaitEntry] = {}
    # root namespace first, so an interrupt re-reported by a parent task wins
    for (thread_id, ns), tup in sorted(latest.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        for _task, channel, value in tup.pending_writes or ():
            if channel != INTERRUPT_CHANNEL:
                continue
            for intr in value if isinstance(value, (list, tuple)) else [value]:
                info = extract_wait(intr)
                intr_id = getattr(intr, "id", None)
                if info is None or intr_id is None or (thread_id, intr_id) in found:
                    continue
                found[(thread_id, intr_id)] = WaitEntry(
                    thread_id=thread_id,
                    checkpoint_ns=ns,
                    checkpoint_id=str(tup.config["configurable"]["checkpoint_id"]),
                    interrupt_id=str(intr_id),
                    info=info,
                    value=intr.value,
                )
    return sorted(found.values(), key=_deadline_order)


def _deadline_order(entry: WaitEntry) -> tuple[int, str, str]:
    deadline = entry.info.deadline
    return (0, deadline.isoformat(), entry.thread_id) if deadline else (1, "", entry.thread_id)


def filter_entries(
    entries: Iterable[WaitEntry],
    *,
    kind: str | None = None,
    kinds: Sequence[str] | None = None,
    approver: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
) -> list[WaitEntry]:
    """Entries matching the ``WaitIndex.list_waits`` filters."""
    out: list[WaitEntry] = []
    for e in entries:
        if kind is not None and e.info.kind != kind:
            continue
        if kinds is not None and e.info.kind not in kinds:
            continue
        if thread_id is not None and e.thread_id != thread_id:
            continue
        if approver is not None and e.info.approvers and approver not in e.info.approvers:
            continue
        if limit is not None and len(out) >= limit:
            break
        out.append(e)
    return out
