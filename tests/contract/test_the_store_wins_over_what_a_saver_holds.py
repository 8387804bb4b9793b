"""What is stored wins over what a saver holds of a growing value.

A saver keeps the bytes of the versions it just wrote or read, so a read can
skip their delta chains. Two savers on one thread that each write other bytes
at the same version (same length and header, so the deltas look alike) must
then read back the same value, the one in storage: never each its own.
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint


def _item(i: int, fill: str = "x") -> dict[str, Any]:
    return {"id": i, "text": fill * 120}


async def _put(saver: Any, thread: str, parent: str | None, items: list[Any], version: str) -> str:
    cp = empty_checkpoint()
    cp["channel_values"] = {"items": items}
    cp["channel_versions"] = {"items": version}
    conf: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if parent:
        conf["configurable"]["checkpoint_id"] = parent
    await saver.aput(conf, cp, {"step": len(items)}, {"items": version})
    return str(cp["id"])


async def _items_at(saver: Any, thread: str, checkpoint_id: str | None = None) -> Any:
    conf: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if checkpoint_id:
        conf["configurable"]["checkpoint_id"] = checkpoint_id
    got = await saver.aget_tuple(conf)
    assert got is not None
    return got.checkpoint["channel_values"]["items"]


async def test_two_writers_of_one_version_read_back_what_is_stored(saver_factory: Any) -> None:
    thread = f"t-{uuid.uuid4()}"
    async with saver_factory() as a, saver_factory() as b:
        parent = None
        base: list[Any] = []
        for n in range(1, 4):
            base = [_item(i) for i in range(n * 3)]
            parent = await _put(a, thread, parent, base, f"{n:04}")
        assert await _items_at(b, thread) == base  # b holds 0003 now, as a does
        a_items = [*base, _item(99, "a")]
        b_items = [*base, _item(99, "b")]  # same length and header, other bytes
        a_id = await _put(a, thread, parent, a_items, "0004")
        b_id = await _put(b, thread, parent, b_items, "0004")
        stored = await _items_at(a, thread, b_id)
        assert stored in (a_items, b_items)
        # each writer reads what storage holds at 0004, whichever checkpoint names it
        for reader in (a, b):
            assert await _items_at(reader, thread, a_id) == stored
            assert await _items_at(reader, thread, b_id) == stored
