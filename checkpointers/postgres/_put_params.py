"""The array parameters of the Postgres put statements, and the configs a read returns.

I/O-free pieces of :mod:`._core`: one statement carries every row of a put as
parallel arrays (``unnest`` on the server), so each builder here turns the
encoded values into those arrays.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_durable.checkpointers._delta import Stored
from langgraph_durable.checkpointers._waits import WaitInfo, extract_wait
from langgraph_durable.checkpointers.postgres._arrays import ByteaArray, IntArray, TextArray

__all__ = ["blob_params", "marked_interrupts", "ref_params", "thread_config", "whole_params"]


def thread_config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    """The config naming one checkpoint, as LangGraph expects it back."""
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def blob_params(rows: Sequence[tuple[str, str, Stored]]) -> dict[str, Any]:
    """The blob arrays of a put: one entry per ``(channel, version, stored)`` row."""
    return {
        "channels": TextArray([r[0] for r in rows]),
        "versions": TextArray([r[1] for r in rows]),
        "types": TextArray([r[2].type for r in rows]),
        "blobs": ByteaArray([r[2].blob for r in rows]),
        "bases": TextArray([r[2].base for r in rows]),
        "roots": TextArray([r[2].root for r in rows]),
        "writes_of": TextArray([r[2].writes_of for r in rows]),
        **ref_params(rows),
    }


def whole_params(rows: Sequence[tuple[str, str, Stored]]) -> dict[str, Any]:
    """The blob arrays that change when a put stores its values whole (no delta, no ref).

    The channels and versions are those of the first attempt: the same values
    are stored, only encoded otherwise.
    """
    return {
        "types": TextArray([r[2].type for r in rows]),
        "blobs": ByteaArray([r[2].blob for r in rows]),
        "bases": TextArray([None] * len(rows)),
        "roots": TextArray([None] * len(rows)),
        "writes_of": TextArray([None] * len(rows)),
        **ref_params([]),
    }


def ref_params(rows: Sequence[tuple[str, str, Stored]]) -> dict[str, list[Any]]:
    """The pending writes the put's deltas refer to, with the md5 of their bytes."""
    out: dict[str, list[Any]] = {
        "r_channels": TextArray(),
        "r_tasks": TextArray(),
        "r_idxs": IntArray(),
        "r_md5s": TextArray(),
    }
    for channel, _, stored in rows:
        for task_id, idx, blob in stored.refs:
            out["r_channels"].append(channel)
            out["r_tasks"].append(task_id)
            out["r_idxs"].append(idx)
            out["r_md5s"].append(hashlib.md5(blob, usedforsecurity=False).hexdigest())
    return out


def marked_interrupts(value: Any) -> list[tuple[str, WaitInfo, Any]]:
    """The interrupts of an ``__interrupt__`` write whose value carries the wait marker."""
    items = value if isinstance(value, (list, tuple)) else [value]
    found = []
    for item in items:
        info = extract_wait(item)
        interrupt_id = getattr(item, "id", None)
        if info is not None and isinstance(interrupt_id, str):
            found.append((interrupt_id, info, getattr(item, "value", item)))
    return found
