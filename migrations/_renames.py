"""Node renames inside a stored checkpoint.

A LangGraph checkpoint refers to nodes by name in several places; all of them
must change together or the renamed node will not resume:

* trigger channels: ``branch:to:<node>`` and ``join:<a>+<b>:<node>`` (keys of
  ``channel_values``, ``channel_versions``, ``updated_channels``, the inner
  keys of ``versions_seen``, and the channels of pending writes);
* ``versions_seen[<node>]``: what the node has already consumed;
* ``Send(<node>, arg)`` packets, pending as writes to ``__pregel_tasks`` (and
  in ``channel_values`` for pre-v4 checkpoints);
* the task id of the node's pending writes and the id of its pending
  interrupts. Both are hashes of the node name (LangGraph recomputes them on
  resume), so an interrupt stored under ``review`` would not be matched by the
  task of ``human_review``. We recompute them with LangGraph's stored-format
  formula, and only after checking that the formula reproduces the stored id:
  a task we cannot verify keeps its ids (a plain ``Command(resume=value)``
  still reaches the renamed node, only a resume addressed by interrupt id
  would not).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from hashlib import sha1
from itertools import combinations
from typing import Any

from xxhash import xxh3_128_hexdigest

_PULL = "__pregel_pull"
_PUSH = "__pregel_push"
_TASKS = "__pregel_tasks"
_INTERRUPT = "__interrupt__"
_NS_SEP = "|"
_NS_END = ":"


def rename_channel(channel: str, renames: Mapping[str, str]) -> str:
    """Return ``channel`` with node names replaced (trigger channels only)."""
    if channel.startswith("branch:to:"):
        node = channel[10:]
        new = renames.get(node)
        return channel if new is None else f"branch:to:{new}"
    if channel.startswith("join:"):
        # join:<a>+<b>:<target>
        body = channel[5:]
        sources, sep, target = body.rpartition(":")
        if not sep:
            return channel
        srcs = "+".join(renames.get(s, s) for s in sources.split("+"))
        return f"join:{srcs}:{renames.get(target, target)}"
    return channel


def _targets(channel: str, node: str) -> bool:
    return channel == f"branch:to:{node}" or (
        channel.startswith("join:") and channel.rpartition(":")[2] == node
    )


def _task_id(checkpoint: Mapping[str, Any], *parts: str) -> str:
    id_bytes = binascii.unhexlify(str(checkpoint["id"]).replace("-", ""))
    data = b"".join(p.encode() for p in parts)
    if checkpoint.get("v", 1) > 1:
        hexd = xxh3_128_hexdigest(id_bytes + data)
    else:
        sha = sha1(id_bytes, usedforsecurity=False)
        sha.update(data)
        hexd = sha.hexdigest()
    return f"{hexd[:8]}-{hexd[8:12]}-{hexd[12:16]}-{hexd[16:20]}-{hexd[20:32]}"


def _interrupt_id(task_ns: str, answered: int) -> str:
    return xxh3_128_hexdigest((f"{task_ns}{_NS_SEP}{answered}" if answered else task_ns).encode())


def _rename_send(value: Any, renames: Mapping[str, str]) -> Any:
    node = getattr(value, "node", None)
    if isinstance(node, str) and node in renames and hasattr(value, "arg"):
        from langgraph.types import Send

        return Send(renames[node], value.arg)
    return value


def _find_pull_tasks(
    checkpoint: Mapping[str, Any],
    metadata: Mapping[str, Any],
    checkpoint_ns: str,
    task_ids: set[str],
    renames: Mapping[str, str],
) -> dict[str, tuple[str, str, str, str]]:
    """Map stored task ids of renamed nodes' pull tasks to ``(new_id, old_ns, new_ns, new)``."""
    step = metadata.get("step")
    if not isinstance(step, int) or "id" not in checkpoint:
        return {}
    found: dict[str, tuple[str, str, str, str]] = {}
    channels = list(checkpoint.get("channel_versions", {}))
    for old, new in renames.items():
        trig = sorted(c for c in channels if _targets(c, old))
        if not trig:
            continue
        # The node's trigger set is a subset of the channels that target it;
        # in practice one or two, so trying the subsets is cheap.
        candidates = [
            combo for r in range(1, min(len(trig), 3) + 1) for combo in combinations(trig, r)
        ]
        old_ns = f"{checkpoint_ns}{_NS_SEP}{old}" if checkpoint_ns else old
        new_ns = f"{checkpoint_ns}{_NS_SEP}{new}" if checkpoint_ns else new
        for combo in candidates:
            tid = _task_id(checkpoint, old_ns, str(step + 1), old, _PULL, *combo)
            if tid in task_ids:
                new_trig = sorted(rename_channel(c, renames) for c in combo)
                new_tid = _task_id(checkpoint, new_ns, str(step + 1), new, _PULL, *new_trig)
                found[tid] = (
                    new_tid,
                    f"{old_ns}{_NS_END}{tid}",
                    f"{new_ns}{_NS_END}{new_tid}",
                    new,
                )
                break
    # Send targets: PUSH tasks hash the node name and the Send's position in
    # the checkpoint's __pregel_tasks.
    sends = checkpoint.get("channel_values", {}).get(_TASKS)
    if isinstance(sends, list):
        for idx, packet in enumerate(sends):
            node = getattr(packet, "node", None)
            if not isinstance(node, str) or node not in renames:
                continue
            new = renames[node]
            old_ns = f"{checkpoint_ns}{_NS_SEP}{node}" if checkpoint_ns else node
            new_ns = f"{checkpoint_ns}{_NS_SEP}{new}" if checkpoint_ns else new
            tid = _task_id(checkpoint, old_ns, str(step + 1), node, _PUSH, str(idx))
            if tid in task_ids:
                new_tid = _task_id(checkpoint, new_ns, str(step + 1), new, _PUSH, str(idx))
                found[tid] = (new_tid, f"{old_ns}{_NS_END}{tid}", f"{new_ns}{_NS_END}{new_tid}", "")
    return found


def _rename_interrupts(value: Any, old_task_ns: str, new_task_ns: str) -> Any:
    from langgraph.types import Interrupt

    if not isinstance(value, (list, tuple)):
        return value
    out = []
    for item in value:
        if isinstance(item, Interrupt):
            for n in range(0, 64):
                if _interrupt_id(old_task_ns, n) == item.id:
                    item = Interrupt(
                        value=item.value,
                        id=_interrupt_id(new_task_ns, n),
                        response_schema=item.response_schema,
                    )
                    break
        out.append(item)
    return type(value)(out) if isinstance(value, tuple) else out


def rename_nodes(
    checkpoint: dict[str, Any],
    metadata: Mapping[str, Any],
    writes: list[tuple[str, str, Any]],
    renames: Mapping[str, str],
    checkpoint_ns: str,
) -> tuple[dict[str, Any], list[tuple[str, str, Any]], dict[str, tuple[str, str]]]:
    """Apply ``renames`` to a checkpoint and its pending writes.

    Args:
        checkpoint: The checkpoint (not modified; a new dict is returned).
        metadata: Its metadata (for the step number that task ids hash).
        writes: Its pending writes ``(task_id, channel, value)``.
        renames: ``old node -> new node``.
        checkpoint_ns: Namespace of the checkpoint.

    Returns:
        ``(checkpoint, writes, moved)``: the renamed copies, and
        ``old task id -> (new task id, new node)`` for the tasks whose ids changed.

    Raises:
        ValueError: a new name is already used by a node in the checkpoint.
    """
    seen = checkpoint.get("versions_seen", {})
    channels = list(checkpoint.get("channel_versions", {}))

    def present(node: str) -> bool:
        return node in seen or any(_targets(c, node) for c in channels)

    for old, new in renames.items():
        # merging two nodes' bookkeeping would lose what one of them has seen
        if new not in renames and present(old) and present(new):
            raise ValueError(f"cannot rename node {old!r} to {new!r}: {new!r} already exists")

    def rc(ch: str) -> str:
        return rename_channel(ch, renames)

    cp = dict(checkpoint)
    cp["channel_values"] = {rc(k): v for k, v in checkpoint.get("channel_values", {}).items()}
    if _TASKS in cp["channel_values"] and isinstance(cp["channel_values"][_TASKS], list):
        cp["channel_values"][_TASKS] = [
            _rename_send(s, renames) for s in cp["channel_values"][_TASKS]
        ]
    cp["channel_versions"] = {rc(k): v for k, v in checkpoint.get("channel_versions", {}).items()}
    cp["versions_seen"] = {
        renames.get(node, node): {rc(k): v for k, v in vs.items()} for node, vs in seen.items()
    }
    if checkpoint.get("updated_channels") is not None:
        cp["updated_channels"] = [rc(c) for c in checkpoint["updated_channels"]]
    if isinstance(checkpoint.get("pending_sends"), list):
        cp["pending_sends"] = [_rename_send(s, renames) for s in checkpoint["pending_sends"]]

    tasks = _find_pull_tasks(checkpoint, metadata, checkpoint_ns, {w[0] for w in writes}, renames)
    new_writes: list[tuple[str, str, Any]] = []
    for w in writes:
        tid, ch, val = w
        task = tasks.get(tid)
        if ch == _TASKS:
            val = _rename_send(val, renames)
        elif ch == _INTERRUPT and task is not None:
            val = _rename_interrupts(val, task[1], task[2])
        moved = (task[0] if task else tid, rc(ch), val)
        # unchanged writes stay the same object, so savers can tell what changed
        new_writes.append(w if moved[0] == tid and moved[1] == ch and val is w[2] else moved)
    return cp, new_writes, {tid: (t[0], t[3]) for tid, t in tasks.items()}


def rename_metadata(metadata: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """Rename node keys of ``metadata["writes"]`` (written by older LangGraph versions)."""
    md = dict(metadata)
    writes = md.get("writes")
    if isinstance(writes, dict):
        md["writes"] = {renames.get(k, k): v for k, v in writes.items()}
    return md
