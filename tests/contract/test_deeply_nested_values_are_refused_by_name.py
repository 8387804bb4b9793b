"""Metadata and values nested deeper than the serializer stores are refused by name.

Every backend stores dicts and lists nested up to 255 levels (msgpack's limit,
which the Redis saver meets first) and refuses deeper ones with
``UnstorableValueError`` naming ``metadata`` (or the channel value), storing
nothing: never a bare ``RecursionError``, even 3,000 levels deep.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import UnstorableValueError


def _nested(levels: int) -> dict[str, Any]:
    """``levels`` dicts, each holding the next under ``"a"``."""
    top: dict[str, Any] = {}
    cur = top
    for _ in range(levels - 1):
        cur["a"] = {}
        cur = cur["a"]
    return top


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": "t-" + uuid.uuid4().hex, "checkpoint_ns": ""}}


async def test_metadata_up_to_the_limit_round_trips(saver) -> None:
    config = _config()
    deep = _nested(254)  # under the metadata dict: 255 levels in all
    stored = await saver.aput(config, empty_checkpoint(), {"deep": deep, "source": "input"}, {})
    tup = await saver.aget_tuple(stored)
    assert tup.metadata["deep"] == deep


@pytest.mark.parametrize("levels", [255, 300, 3_000])
async def test_metadata_nested_too_deep_is_refused_naming_metadata(saver, levels) -> None:
    config = _config()
    with pytest.raises(UnstorableValueError) as refused:
        await saver.aput(config, empty_checkpoint(), {"deep": _nested(levels)}, {})
    assert refused.value.field == "metadata"
    assert await saver.aget_tuple(config) is None


@pytest.mark.parametrize("levels", [300, 3_000])
async def test_a_channel_value_nested_too_deep_is_refused_by_name(saver, levels) -> None:
    config = _config()
    cp = empty_checkpoint()
    cp["channel_values"] = {"doc": _nested(levels)}
    cp["channel_versions"] = {"doc": saver.get_next_version(None, None)}
    with pytest.raises(UnstorableValueError) as refused:
        await saver.aput(config, cp, {}, cp["channel_versions"])
    assert "value" in refused.value.field
    assert await saver.aget_tuple(config) is None
