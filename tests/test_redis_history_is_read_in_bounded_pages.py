"""The Redis savers read a thread's history in pages, as the Postgres ones do.

``list()`` without a limit used to fetch every record of the thread before the
first tuple came (seconds at 3,000 steps). Now the first tuple comes after one
small page, pages grow to at most ``PAGE_MAX`` checkpoints or about
``PAGE_BYTES`` of stored entries, and every way of listing one thread
(namespace or all of them, ``before``, ``limit``, a filter the index answers or
one checked after decoding) returns across page boundaries exactly what it
returned in one piece. The page sizes are observed on the real saver by
recording what ``ThreadPages`` asks the list script for.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver, _listing

ROOT = 150
SUB = 30


def _put(saver: RedisSaver, ns: str, parent: str | None, n: int, payload: str) -> str:
    cp = empty_checkpoint()
    cp["channel_values"] = {"note": f"{n}:{payload}"}
    cp["channel_versions"] = {"note": f"{n:06}"}
    conf: dict[str, Any] = {"configurable": {"thread_id": "t", "checkpoint_ns": ns}}
    if parent:
        conf["configurable"]["checkpoint_id"] = parent
    metadata = {"step": n, "source": "loop" if n % 2 else "input", "tag": {"k": n % 3}}
    saver.put(conf, cp, metadata, {"note": f"{n:06}"})  # type: ignore[arg-type]
    return str(cp["id"])


@pytest.fixture
def history(redis_prefix: tuple[str, str]) -> Iterator[tuple[str, str, list[tuple[str, str, int]]]]:
    """``(url, prefix, [(checkpoint id, ns, step)...] newest first)`` of thread ``t``."""
    url, prefix = redis_prefix
    stored: list[tuple[str, str, int]] = []
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        parents: dict[str, str | None] = {"": None, "sub": None}
        for n in range(ROOT + SUB):
            ns = "sub" if n % 6 == 5 else ""  # every sixth checkpoint is the subgraph's
            parents[ns] = _put(saver, ns, parents[ns], n, "x" * 200)
            stored.append((str(parents[ns]), ns, n))
    yield url, prefix, sorted(stored, reverse=True)


@pytest.fixture
def page_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every page size a listing asks the list script for, in order."""
    asked: list[int] = []
    original = _listing.ThreadPages.next_size

    def recorded(self: _listing.ThreadPages) -> int:
        asked.append(original(self))
        return asked[-1]

    monkeypatch.setattr(_listing.ThreadPages, "next_size", recorded)
    return asked


CASES: list[tuple[str, dict[str, Any]]] = [
    ("all namespaces", {}),
    ("root namespace", {"ns": ""}),
    ("limit", {"ns": "", "limit": 55}),
    ("before", {"ns": "", "before": 40}),
    ("indexed filter", {"filter": {"source": "loop"}}),
    ("checked filter", {"filter": {"tag": {"k": 1}}}),
    ("checked filter with a limit", {"ns": "", "filter": {"tag": {"k": 2}}, "limit": 30}),
    (
        "indexed filter, before and limit",
        {"filter": {"source": "input"}, "before": 20, "limit": 40},
    ),
]


def _expected(stored: list[tuple[str, str, int]], case: dict[str, Any]) -> list[str]:
    rows = [r for r in stored if "ns" not in case or r[1] == case["ns"]]
    if "before" in case:
        rows = [r for r in rows if r[0] < stored[case["before"]][0]]
    flt = case.get("filter", {})
    if "source" in flt:
        rows = [r for r in rows if ("loop" if r[2] % 2 else "input") == flt["source"]]
    if "tag" in flt:
        rows = [r for r in rows if r[2] % 3 == flt["tag"]["k"]]
    return [r[0] for r in rows[: case.get("limit")]]


def _args(stored: list[tuple[str, str, int]], case: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    conf: dict[str, Any] = {"thread_id": "t"}
    if "ns" in case:
        conf["checkpoint_ns"] = case["ns"]
    kwargs: dict[str, Any] = {"filter": case.get("filter"), "limit": case.get("limit")}
    if "before" in case:
        kwargs["before"] = {
            "configurable": {"thread_id": "t", "checkpoint_id": stored[case["before"]][0]}
        }
    return {"configurable": conf}, kwargs


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_listing_of_one_thread_is_the_same_across_pages(
    history: tuple[str, str, list[tuple[str, str, int]]], page_sizes: list[int], mode: str
) -> None:
    url, prefix, stored = history

    async def alisted(config: Any, kwargs: dict[str, Any]) -> list[str]:
        async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
            return [t.checkpoint["id"] async for t in saver.alist(config, **kwargs)]

    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        for name, case in CASES:
            page_sizes.clear()
            config, kwargs = _args(stored, case)
            if mode == "sync":
                got = [t.checkpoint["id"] for t in saver.list(config, **kwargs)]
            else:
                got = asyncio.run(alisted(config, kwargs))
            assert got == _expected(stored, case), name
            assert len(page_sizes) > 1 or len(got) <= _listing.PAGE_FIRST_LIMITED, (
                name,
                page_sizes,
            )
            assert all(0 < s <= _listing.PAGE_MAX for s in page_sizes), (name, page_sizes)


def test_the_first_tuple_comes_after_one_small_page(
    history: tuple[str, str, list[tuple[str, str, int]]], page_sizes: list[int]
) -> None:
    url, prefix, stored = history
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        listing = saver.list({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        first = next(listing)
        assert first.checkpoint["id"] == _expected(stored, {"ns": ""})[0]
        assert page_sizes == [_listing.PAGE_FIRST]
        rest = list(listing)
    assert len(rest) == ROOT - 1
    # pages grow, at most doubling (a full last page costs one empty page more)
    assert page_sizes[:4] == [10, 20, 40, 80], page_sizes
    assert all(b <= 2 * a for a, b in itertools.pairwise(page_sizes))


def test_pages_keep_to_about_page_bytes_of_stored_entries(
    redis_prefix: tuple[str, str], page_sizes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, prefix = redis_prefix
    monkeypatch.setattr(_listing, "PAGE_BYTES", 64_000)
    with RedisSaver.from_conn_string(url, prefix=prefix, deltas=False) as saver:
        saver.setup()
        parent = None
        for n in range(120):
            parent = _put(saver, "", parent, n, "y" * 8_000)  # ~8 kB stored per checkpoint
        got = [t.metadata["step"] for t in saver.list({"configurable": {"thread_id": "t"}})]
    assert got == list(range(119, -1, -1))
    # 64 kB at ~8 kB a checkpoint: pages of at most 8 after the first
    assert max(page_sizes[1:]) <= 8, page_sizes
    assert len(page_sizes) >= 120 // 8
