"""list() filters on any metadata key (nested too), with before and limit."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint


async def _put(saver: Any, thread_id: str, metadata: dict[str, Any], parent: Any = None) -> Any:
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return await saver.aput(config, empty_checkpoint(), metadata, {})


async def _ids(saver: Any, config: Any = None, **kwargs: Any) -> list[str]:
    return [t.config["configurable"]["checkpoint_id"] async for t in saver.alist(config, **kwargs)]


async def test_filters_before_and_limit_combine(saver) -> None:
    tid = f"t-{uuid.uuid4()}"
    configs = []
    parent = None
    for i in range(6):
        parent = await _put(
            saver,
            tid,
            {"source": "loop", "step": i, "user": {"team": "a" if i % 2 else "b"}, "n": i % 3},
            parent,
        )
        configs.append(parent["configurable"]["checkpoint_id"])
    thread = {"configurable": {"thread_id": tid}}
    assert await _ids(saver, thread) == configs[::-1]
    assert await _ids(saver, thread, filter={"user": {"team": "a"}}) == [
        configs[5],
        configs[3],
        configs[1],
    ]
    assert await _ids(saver, thread, filter={"n": 0, "source": "loop"}) == [configs[3], configs[0]]
    assert await _ids(saver, thread, filter={"n": 0, "source": "input"}) == []
    before = {"configurable": {"thread_id": tid, "checkpoint_id": configs[3]}}
    assert await _ids(saver, thread, before=before) == configs[2::-1]
    assert await _ids(saver, thread, before=before, limit=2) == [configs[2], configs[1]]
    assert await _ids(saver, thread, filter={"user": {"team": "b"}}, limit=1) == [configs[4]]


async def test_filter_without_a_thread_searches_every_thread(saver) -> None:
    marker = str(uuid.uuid4())
    a = await _put(saver, f"a-{uuid.uuid4()}", {"marker": marker, "step": 1})
    b = await _put(saver, f"b-{uuid.uuid4()}", {"marker": marker, "step": 2})
    await _put(saver, f"c-{uuid.uuid4()}", {"marker": "other", "step": 3})
    found = {
        (t.config["configurable"]["thread_id"], t.metadata["step"])
        async for t in saver.alist(None, filter={"marker": marker})
    }
    assert found == {(a["configurable"]["thread_id"], 1), (b["configurable"]["thread_id"], 2)}
