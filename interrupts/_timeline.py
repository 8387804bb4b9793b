"""A thread's timeline: what ``langgraph-durable inspect`` prints and notebooks draw.

The drawing is :mod:`._timeline_plot`.

Built from plain saver calls (``list``) plus the decision store and the audit
trail, so it needs no graph: which nodes ran is read off ``versions_seen`` (a
node's entry changes in the checkpoint its step produced).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from pydantic import BaseModel, Field

from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts._audit import AuditEntry
from langgraph_durable.interrupts._audit_calls import audit_log
from langgraph_durable.interrupts._records import item_key, section
from langgraph_durable.migrations import stored_version_of

INTERRUPT = "__interrupt__"
TRIGGER = "branch:to:"


class TimelineInterrupt(BaseModel):
    """A pending interrupt at one checkpoint."""

    interrupt_id: str
    kind: str | None = None
    deadline: datetime | None = None
    approvers: list[str] = Field(default_factory=list)
    escalation_level: int = 0
    decision: dict[str, Any] | None = None
    resumed: bool = False
    """The thread moved past this interrupt (a later checkpoint exists)."""
    value: Any = None
    """The whole interrupt value as raised (the request payload and what the UI shows)."""
    item_decisions: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """For a batch: each decided item's record, by item key."""


class TimelineEntry(BaseModel):
    """One checkpoint of a thread, oldest first in :func:`thread_timeline`."""

    checkpoint_id: str
    checkpoint_ns: str = ""
    step: int | None = None
    source: str | None = None
    ts: str | None = None
    nodes: list[str] = Field(default_factory=list)
    next_nodes: list[str] = Field(default_factory=list)
    """The nodes this checkpoint triggers: where a run paused at it waits."""
    schema_version: int = 0
    """The schema version the checkpoint is stored with (``saver.schema_version``)."""
    interrupts: list[TimelineInterrupt] = Field(default_factory=list)
    compensations: list[Any] = Field(default_factory=list)
    audit: list[AuditEntry] = Field(default_factory=list)
    """Audit entries about this checkpoint: those of its pending interrupts (request,
    attempts, timeouts), and for a compensation step its undo."""


def stored_schema_version(saver: Any, tup: CheckpointTuple) -> int:
    """The schema version ``tup`` is stored with.

    Our savers keep it beside the metadata (``saver.schema_version(config)``,
    one lookup); for any other saver it is ``metadata["schema_version"]``
    (0 when absent).
    """
    reader = getattr(saver, "schema_version", None)
    if callable(reader):
        version = reader(tup.config)
        if version is not None:
            return int(version)
    return stored_version_of(tup.metadata)


def _nodes(prev: CheckpointTuple | None, cur: CheckpointTuple) -> list[str]:
    before = prev.checkpoint.get("versions_seen", {}) if prev else {}
    after = cur.checkpoint.get("versions_seen", {})
    ran = [n for n, seen in after.items() if before.get(n) != seen]
    # LangGraph's own entry nodes say nothing; ours (``__compensate__``) do
    return sorted(n.strip("_") for n in ran if n not in ("__start__", "__input__", "__interrupt__"))


def _next_nodes(tup: CheckpointTuple) -> list[str]:
    # a StateGraph node runs when its trigger channel holds a value newer than the
    # one the node last saw; read off the checkpoint alone, no graph needed
    ck = tup.checkpoint
    values, versions = ck.get("channel_values", {}), ck.get("channel_versions", {})
    seen = ck.get("versions_seen", {})
    out = []
    for channel in values:
        if not channel.startswith(TRIGGER):
            continue
        node = channel[len(TRIGGER) :]
        if str(versions.get(channel, "")) > str(seen.get(node, {}).get(channel, "")):
            out.append(node.strip("_"))
    return sorted(out)


def _interrupts(tup: CheckpointTuple) -> list[TimelineInterrupt]:
    out: dict[str, TimelineInterrupt] = {}
    for _task, channel, value in tup.pending_writes or ():
        if channel != INTERRUPT:
            continue
        for intr in value if isinstance(value, (list, tuple)) else [value]:
            iid = str(getattr(intr, "id", ""))
            info = extract_wait(intr)
            out[iid] = TimelineInterrupt(
                interrupt_id=iid,
                kind=info.kind if info else None,
                deadline=info.deadline if info else None,
                approvers=list(info.approvers) if info else [],
                escalation_level=info.escalation_level if info else 0,
                value=getattr(intr, "value", None),
            )
    return list(out.values())


def _attach_audit(entries: list[TimelineEntry], trail: list[AuditEntry]) -> None:
    """Put each audit entry on the checkpoint it is about.

    An approval's entries go where its interrupt was pending; undo entries go,
    in order, on the checkpoints the compensation node produced (one undo per
    superstep); anything left over goes on the newest checkpoint.
    """
    if not entries:
        return
    where = {i.interrupt_id: e for e in entries for i in e.interrupts}
    undo_steps = iter([e for e in entries if "compensate" in e.nodes])
    for a in trail:
        target = where.get(a.approval_id or "")
        if target is None and a.action == "undo":
            target = next(undo_steps, None)
        (target or entries[-1]).audit.append(a)


def thread_timeline(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    checkpoint_ns: str | None = "",
    audit: bool = True,
) -> list[TimelineEntry]:
    """Every checkpoint of ``thread_id`` (root namespace by default), oldest first.

    Each entry carries the step, the nodes that ran to produce it, its schema
    version, the interrupts pending at it (with deadlines and, where decided,
    the decision record), compensation records found in its state and (with
    ``audit``, root namespace) the audit entries about it.

    Raises:
        KeyError: the thread has no checkpoint.
    """
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_ns is not None:
        configurable["checkpoint_ns"] = checkpoint_ns
    tuples = list(saver.list({"configurable": configurable}))
    if not tuples:
        raise KeyError(f"thread {thread_id!r} has no checkpoints")
    tuples.reverse()
    entries: list[TimelineEntry] = []
    prev: CheckpointTuple | None = None
    for tup in tuples:
        entries.append(_entry(saver, prev, tup))
        prev = tup
    for e in entries[:-1]:
        for i in e.interrupts:
            i.resumed = True
    _attach_decisions(saver, thread_id, entries)
    if audit and not checkpoint_ns:
        _attach_audit(entries, audit_log(saver, thread_id=thread_id))
    return entries


def _entry(
    saver: BaseCheckpointSaver[Any], prev: CheckpointTuple | None, tup: CheckpointTuple
) -> TimelineEntry:
    """The entry of one checkpoint; ``prev`` is the one before it (which nodes ran)."""
    md: dict[str, Any] = dict(tup.metadata or {})
    values = tup.checkpoint.get("channel_values", {})
    return TimelineEntry(
        checkpoint_id=tup.checkpoint["id"],
        checkpoint_ns=tup.config["configurable"].get("checkpoint_ns", ""),
        step=md.get("step"),
        source=md.get("source"),
        ts=tup.checkpoint.get("ts"),
        nodes=_nodes(prev, tup),
        next_nodes=_next_nodes(tup),
        schema_version=stored_schema_version(saver, tup),
        interrupts=_interrupts(tup),
        compensations=[v for k, v in values.items() if "compensat" in k and v],
    )


def _attach_decisions(
    saver: BaseCheckpointSaver[Any], thread_id: str, entries: list[TimelineEntry]
) -> None:
    """Give each interrupt its decision record, and each batch item its own, in one read."""
    from langgraph_durable.interrupts._store import Backend

    ids = [i.interrupt_id for e in entries for i in e.interrupts]
    items = {
        item_key(i.interrupt_id, str(it.get("key"))): (i, str(it.get("key")))
        for e in entries
        for i in e.interrupts
        if i.kind == "batch"
        for it in section(i.value).get("items") or []
    }
    if not ids:
        return
    decisions = Backend(saver).get_decisions(thread_id, ids + list(items))
    for e in entries:
        for i in e.interrupts:
            i.decision = decisions.get(i.interrupt_id)
    for k, (i, key) in items.items():
        if k in decisions:
            i.item_decisions[key] = decisions[k]
