"""Upgrading one stored checkpoint (pure: no I/O, the savers call it).

What an upgrade from version ``k`` to the code's version does, step by step:

1. The step's values function runs on a deep copy of the checkpoint's state keys
   (internal channels such as ``branch:to:x`` are kept aside and put back).
   A checkpoint with no state keys at all (taken before the graph's input was
   applied) is not passed to the values function: there is nothing to upgrade.
2. Pending writes to state keys (a parallel task that finished in the step where
   another one was interrupted, a ``Command(update=...)`` not yet applied) are
   upgraded consistently: for each task's writes ``W``, the step runs on the
   pre-step values overlaid with ``W``; the task then writes the step's result
   for the keys it wrote, plus every key whose result differs from the step run
   on the plain values (a renamed key appears under its new name). Keys the step
   removed are dropped from the write. This is exactly "the write, seen through
   the step" for keys a step computes from their own value.
3. The step's node renames are applied (see :mod:`langgraph_durable.migrations._renames`).
4. The result is validated (per-step ``schema=``, then ``state_schema``).

Channels whose value changed get a new *migrated version*: the stored version
with ``.m<to_version>`` appended. It compares greater than the stored one, so
LangGraph sees a newer value, and it is never produced by a saver's
``get_next_version``. Savers that store one blob per ``(channel, version)``
must therefore store these values on the next ``put`` even though LangGraph
does not list them in ``new_versions``: :func:`versions_to_store` says which.

Either every step applies or the call raises; the input tuple is never modified.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, CheckpointTuple, PendingWrite

from langgraph_durable.migrations._chain import StateMigrations, Step, is_state_channel, step_error
from langgraph_durable.migrations._errors import MigrationError, SchemaVersionError
from langgraph_durable.migrations._renames import rename_metadata, rename_nodes

SCHEMA_VERSION_KEY = "schema_version"
_MARK = ".m"


@dataclass(frozen=True)
class Upgrade:
    """The result of upgrading one checkpoint.

    Attributes:
        tuple: The upgraded checkpoint tuple, tagged with the code's version.
        from_version: The stored version.
        to_version: The code's version.
        new_versions: ``channel -> version`` of the channels whose value changed;
            a saver that rewrites the checkpoint stores these values.
        task_ids: ``old task id -> new task id`` of pending writes moved to a
            renamed node's task.
        task_nodes: ``new task id -> new node name`` for those tasks (a saver
            that stores a task path with each write rewrites it from this).
        writes_changed: Whether the pending writes differ from the stored ones
            (a saver rewriting the checkpoint replaces them only then).
    """

    tuple: CheckpointTuple
    from_version: int
    to_version: int
    new_versions: dict[str, Any] = field(default_factory=dict)
    task_ids: dict[str, str] = field(default_factory=dict)
    task_nodes: dict[str, str] = field(default_factory=dict)
    writes_changed: bool = False


def code_version(migrations: StateMigrations | None) -> int:
    """The schema version a saver with ``migrations=`` writes (0 without migrations)."""
    return 0 if migrations is None else migrations.version


def stored_version_of(metadata: Mapping[str, Any] | None) -> int:
    """The schema version recorded in a checkpoint's metadata (0 when absent: pre-tagging)."""
    if not metadata:
        return 0
    v = metadata.get(SCHEMA_VERSION_KEY, 0)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _where(tup: CheckpointTuple) -> dict[str, Any]:
    conf = tup.config.get("configurable", {})
    return {
        "thread_id": str(conf.get("thread_id", "")),
        "checkpoint_ns": str(conf.get("checkpoint_ns", "")),
        "checkpoint_id": conf.get("checkpoint_id") or tup.checkpoint.get("id"),
    }


def check_version(
    tup: CheckpointTuple, stored_version: int, migrations: StateMigrations | None
) -> list[Step]:
    """Return the steps from ``stored_version`` to the code's version, or raise.

    Raises:
        SchemaVersionError: stored version newer than the code, or no path.
    """
    current = code_version(migrations)
    if stored_version == current:
        return []
    steps = None if migrations is None else migrations.steps_from(stored_version)
    if steps is None:
        w = _where(tup)
        if stored_version > current:
            reason = "the checkpoint is newer than the code (was a deploy rolled back?)"
        elif migrations is None:
            reason = "no migrations are configured on this saver (pass migrations=)"
        else:
            reason = (
                f"no upgrade path: the oldest registered step upgrades from version "
                f"{migrations.oldest_supported}"
            )
        raise SchemaVersionError(
            thread_id=w["thread_id"],
            checkpoint_ns=w["checkpoint_ns"],
            checkpoint_id=w["checkpoint_id"],
            stored_version=stored_version,
            code_version=current,
            reason=reason,
        )
    return steps


def finish_read(
    tup: CheckpointTuple,
    stored_version: int,
    migrations: StateMigrations | None,
    *,
    tag_metadata: bool = True,
) -> CheckpointTuple:
    """What a saver's ``_finish_read`` does: return ``tup`` at the code's version.

    The fast path (stored version == code version) returns ``tup`` itself.

    Args:
        tup: The tuple as read from storage.
        stored_version: The schema version it was stored with.
        migrations: The saver's migrations (``None``: code version 0).
        tag_metadata: Record the code's version as ``metadata["schema_version"]``
            of an upgraded tuple (for savers that keep it there). A saver that
            stores the version beside the metadata passes ``False``: the
            metadata then reads back as it was written (:func:`untagged`).

    Raises:
        SchemaVersionError: no way to reach the code's version.
        MigrationError: a step failed.
    """
    if stored_version == (0 if migrations is None else migrations.version):
        return tup
    upgraded = upgrade_checkpoint(tup, stored_version, migrations).tuple
    return upgraded if tag_metadata else untagged(upgraded, tup)


def untagged(upgraded: CheckpointTuple, stored: CheckpointTuple) -> CheckpointTuple:
    """``upgraded`` with the ``schema_version`` metadata key as ``stored`` had it.

    An upgrade records the code's version in the metadata; a saver that stores
    the version beside the metadata (a column, a record field) gives the user's
    metadata back exactly instead: the key is put back as it was, or left out
    if it was not there.
    """
    md: dict[str, Any] = dict(upgraded.metadata or {})
    before: Mapping[str, Any] = stored.metadata or {}
    if SCHEMA_VERSION_KEY in before:
        md[SCHEMA_VERSION_KEY] = before[SCHEMA_VERSION_KEY]
    else:
        md.pop(SCHEMA_VERSION_KEY, None)
    return upgraded._replace(metadata=cast(CheckpointMetadata, md))


def _run_fn(step: Step, values: dict[str, Any], where: Mapping[str, Any]) -> dict[str, Any]:
    assert step.fn is not None
    try:
        out = step.fn(values)
    except Exception as exc:
        raise step_error(step, exc, f"the step raised {type(exc).__name__}: {exc}", where) from exc
    if not isinstance(out, dict):
        raise MigrationError(
            step=step.name,
            thread_id=where["thread_id"],
            checkpoint_ns=where["checkpoint_ns"],
            checkpoint_id=where["checkpoint_id"],
            from_version=step.from_version,
            to_version=step.from_version + 1,
            reason=f"the step returned {type(out).__name__}, expected the values dict "
            "(did it forget `return values`?)",
        )
    bad = [k for k in out if not isinstance(k, str) or not is_state_channel(k)]
    if bad:
        raise MigrationError(
            step=step.name,
            thread_id=where["thread_id"],
            checkpoint_ns=where["checkpoint_ns"],
            checkpoint_id=where["checkpoint_id"],
            from_version=step.from_version,
            to_version=step.from_version + 1,
            reason=f"the step returned keys that are not state keys: {bad!r}",
        )
    return out


def _upgrade_writes(
    step: Step,
    base_in: dict[str, Any],
    base_out: dict[str, Any],
    writes: list[tuple[str, str, Any]],
    where: Mapping[str, Any],
) -> list[tuple[str, str, Any]]:
    # Group each task's state writes into batches with one write per key (a
    # reducer channel may receive several writes from one task).
    batches: list[list[int]] = []
    open_batch: dict[str, tuple[list[int], set[str]]] = {}
    for i, (tid, ch, _) in enumerate(writes):
        if not is_state_channel(ch):
            continue
        cur = open_batch.get(tid)
        if cur is None or ch in cur[1]:
            cur = ([], set())
            open_batch[tid] = cur
            batches.append(cur[0])
        cur[0].append(i)
        cur[1].add(ch)
    if not batches:
        return writes
    replace: dict[int, list[tuple[str, str, Any]]] = {}
    for idxs in batches:
        tid = writes[idxs[0]][0]
        overlay = copy.deepcopy(base_in)
        for i in idxs:
            overlay[writes[i][1]] = copy.deepcopy(writes[i][2])
        out = _run_fn(step, overlay, where)
        written = {writes[i][1] for i in idxs}
        for i in idxs:
            ch = writes[i][1]
            if ch not in out:
                replace[i] = []
            elif _same(out[ch], writes[i][2]):
                replace[i] = [writes[i]]  # unchanged: keep the stored write as is
            else:
                replace[i] = [(tid, ch, out[ch])]
        extra = [
            (tid, k, v)
            for k, v in out.items()
            if k not in written and (k not in base_out or not _same(v, base_out[k]))
        ]
        replace[idxs[-1]] = replace[idxs[-1]] + extra
    result: list[tuple[str, str, Any]] = []
    for i, w in enumerate(writes):
        if i in replace:
            result.extend(replace[i])
        else:
            result.append(w)
    return result


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def migrated_version(version: Any, to_version: int) -> Any:
    """The version given to a channel whose value a step changed (see module docs)."""
    if isinstance(version, str):
        return f"{version}{_MARK}{to_version}"
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        # Numeric versions (very old savers) have no room for a marker; half a
        # step keeps them ordered and distinct from anything the saver issues.
        return version + 0.5
    return version


def is_migrated_version(version: Any) -> bool:
    """Tell whether ``version`` was issued by an upgrade (not by a saver)."""
    return isinstance(version, str) and _MARK in version


def versions_to_store(
    checkpoint: Mapping[str, Any], new_versions: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``(channel, version)`` values a blob-per-version saver must write in ``put``.

    LangGraph lists in ``new_versions`` the channels written since the checkpoint
    it loaded. A checkpoint upgraded on read carries migrated versions for the
    channels a step changed, which LangGraph does not list (they did not change
    during the step) but which no stored blob holds yet. Returns
    ``new_versions`` plus those channels; with no migrated versions it returns
    ``new_versions`` itself.
    """
    versions = checkpoint.get("channel_versions", {})
    values = checkpoint.get("channel_values", {})
    extra = {
        c: v
        for c, v in versions.items()
        if c not in new_versions and c in values and is_migrated_version(v)
    }
    if not extra:
        return dict(new_versions) if not isinstance(new_versions, dict) else new_versions
    return {**new_versions, **extra}


def upgrade_checkpoint(
    tup: CheckpointTuple, stored_version: int, migrations: StateMigrations | None
) -> Upgrade:
    """Upgrade ``tup`` (stored with ``stored_version``) to the code's version.

    Args:
        tup: The tuple as read from storage (left untouched).
        stored_version: The schema version it was stored with.
        migrations: The saver's migrations (``None``: code version 0).

    Returns:
        The :class:`Upgrade`; its tuple's ``metadata["schema_version"]`` is the
        code's version.

    Raises:
        SchemaVersionError: newer than the code, or no path.
        MigrationError: a step raised, returned a non-dict, or failed validation.
    """
    steps = check_version(tup, stored_version, migrations)
    current = code_version(migrations)
    if not steps:
        md = dict(tup.metadata or {})
        md[SCHEMA_VERSION_KEY] = current
        upgraded = tup._replace(metadata=cast(CheckpointMetadata, md))
        return Upgrade(upgraded, stored_version, current)
    assert migrations is not None
    where = _where(tup)
    cp: dict[str, Any] = dict(tup.checkpoint)
    all_values = cp.get("channel_values", {})
    original = {k: v for k, v in all_values.items() if is_state_channel(k)}
    run = _StepRun(
        cp,
        internal={k: v for k, v in all_values.items() if not is_state_channel(k)},
        values=copy.deepcopy(original),
        writes=list(tup.pending_writes or []),
        metadata=dict(tup.metadata or {}),
    )
    for n, step in enumerate(steps):
        run.apply(step, migrations, final=n == len(steps) - 1, where=where)
    cp = run.checkpoint
    new_versions = _bump_versions(cp, run.values, original, current)
    cp["channel_values"] = {**run.internal, **run.values}
    if cp.get("updated_channels") is not None and new_versions:
        cp["updated_channels"] = sorted({*cp["updated_channels"], *new_versions})
    run.metadata[SCHEMA_VERSION_KEY] = current
    writes = run.writes
    new_tup = CheckpointTuple(
        config=tup.config,
        checkpoint=cast(Checkpoint, cp),
        metadata=cast(CheckpointMetadata, run.metadata),
        parent_config=tup.parent_config,
        pending_writes=None if tup.pending_writes is None else writes,
    )
    stored = tup.pending_writes or []
    changed = len(writes) != len(stored) or any(
        a is not b for a, b in zip(writes, stored, strict=True)
    )
    return Upgrade(
        new_tup, stored_version, current, new_versions, run.task_ids, run.task_nodes, changed
    )


class _StepRun:
    """A checkpoint on its way through the migration steps.

    ``values`` are the state channels (a copy the steps may change),
    ``internal`` the channels LangGraph keeps for itself (only renames touch
    them). ``task_ids`` maps each renamed task's stored id to its new one and
    ``task_nodes`` names the node of a renamed pull task, for its task path.
    """

    def __init__(
        self,
        checkpoint: dict[str, Any],
        *,
        internal: dict[str, Any],
        values: dict[str, Any],
        writes: list[PendingWrite],
        metadata: dict[str, Any],
    ) -> None:
        self.checkpoint = checkpoint
        self.internal = internal
        self.values = values
        self.writes = writes
        self.metadata = metadata
        self.task_ids: dict[str, str] = {}
        self.task_nodes: dict[str, str] = {}

    def apply(
        self, step: Step, migrations: StateMigrations, *, final: bool, where: Mapping[str, Any]
    ) -> None:
        """Run one step: its function on the state and the writes, its checks, its renames."""
        if step.fn is not None:
            base_in = self.values
            needs_base = any(is_state_channel(w[1]) for w in self.writes)
            # A checkpoint taken before the first input was applied has no state
            # keys: there is nothing to upgrade, and steps need not handle it.
            if base_in:
                arg = copy.deepcopy(base_in) if needs_base else base_in
                self.values = _run_fn(step, arg, where)
            if needs_base:
                self.writes = _upgrade_writes(step, base_in, self.values, self.writes, where)
        try:
            migrations.check_values(step, self.values, final=final)
        except Exception as exc:
            raise step_error(step, exc, f"the result fails validation: {exc}", where) from exc
        if step.renames:
            self._rename(step, where)

    def _rename(self, step: Step, where: Mapping[str, Any]) -> None:
        cp = self.checkpoint
        cp["channel_values"] = self.internal
        try:
            cp, self.writes, moved = rename_nodes(
                cp, self.metadata, self.writes, step.renames, where["checkpoint_ns"]
            )
        except ValueError as exc:
            raise step_error(step, exc, str(exc), where) from exc
        self.checkpoint = cp
        self.internal = cp["channel_values"]
        self.metadata = rename_metadata(self.metadata, step.renames)
        # Chain renames across steps: a task moved twice maps from its stored id.
        for old_id, (new_id, node) in moved.items():
            first = next((k for k, v in self.task_ids.items() if v == old_id), old_id)
            self.task_ids[first] = new_id
            self.task_nodes.pop(old_id, None)
            if node:  # pull tasks: their stored task path names the node
                self.task_nodes[new_id] = node


def _bump_versions(
    cp: dict[str, Any], values: Mapping[str, Any], original: Mapping[str, Any], current: int
) -> dict[str, Any]:
    """Give every state channel a step changed a migrated version; drop removed ones.

    Sets the checkpoint's ``channel_versions`` and returns the versions given.
    """
    versions = dict(cp.get("channel_versions", {}))
    new_versions: dict[str, Any] = {}
    top = _max_version(versions)
    for k, v in values.items():
        if k in original and _same(v, original[k]):
            continue
        base = versions.get(k, top)
        nv = migrated_version(base, current) if base is not None else f"{0:032}.0.0{_MARK}{current}"
        versions[k] = nv
        new_versions[k] = nv
    for k in original:
        if k not in values:
            versions.pop(k, None)
    cp["channel_versions"] = versions
    return new_versions


def _max_version(versions: Mapping[str, Any]) -> Any:
    strs = [v for v in versions.values() if isinstance(v, str)]
    if strs:
        return max(strs)
    nums = [v for v in versions.values() if isinstance(v, (int, float))]
    return max(nums) if nums else None
