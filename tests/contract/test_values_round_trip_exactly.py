"""Metadata and channel values jsonb cannot hold (\\u0000, NaN...) round-trip exactly."""

from __future__ import annotations

import math
import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

NUL = "a\x00b"


def _config(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}


async def test_nul_and_non_json_values_round_trip(saver) -> None:
    tid = f"t-{uuid.uuid4()}"
    cp = empty_checkpoint()
    cp["channel_values"] = {
        "text": NUL,
        "nested": {"k": [NUL, 1.5]},
        "nan": float("inf"),
        "plain": "ok",
        "num": 7,
    }
    cp["channel_versions"] = {k: saver.get_next_version(None, None) for k in cp["channel_values"]}
    metadata = {"source": "loop", "step": 1, "note": NUL, "deep": {"x": [NUL]}, "ratio": math.inf}
    stored = await saver.aput(_config(tid), cp, metadata, cp["channel_versions"])
    tup = await saver.aget_tuple(stored)
    assert tup.checkpoint["channel_values"] == cp["channel_values"]
    for key in ("source", "step", "note", "deep", "ratio"):
        assert tup.metadata[key] == metadata[key], key
    await saver.aput_writes(stored, [("text", NUL)], "task-1")
    tup = await saver.aget_tuple(stored)
    assert tup.pending_writes == [("task-1", "text", NUL)]


async def test_filter_on_a_nul_value_matches_exactly(saver) -> None:
    tid = f"t-{uuid.uuid4()}"
    first = await saver.aput(_config(tid), empty_checkpoint(), {"tag": NUL, "step": 1}, {})
    cfg = _config(tid)
    cfg["configurable"]["checkpoint_id"] = first["configurable"]["checkpoint_id"]
    await saver.aput(cfg, empty_checkpoint(), {"tag": "ab", "step": 2}, {})
    hits = [t.metadata["step"] async for t in saver.alist(_config(tid), filter={"tag": NUL})]
    assert hits == [1]
    hits = [t.metadata["step"] async for t in saver.alist(_config(tid), filter={"tag": "ab"})]
    assert hits == [2]
