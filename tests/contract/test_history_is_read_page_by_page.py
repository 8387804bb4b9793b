"""``list()`` reads a thread's history page by page, on every saver.

The first tuple comes after one small page (``PAGE_FIRST`` checkpoints), not
after the whole history; pages grow, at most doubling, to at most
``PAGE_MAX`` checkpoints or about ``PAGE_BYTES`` of stored values; and every
way of listing one thread (one namespace or all of them, ``before``,
``limit``, a filter the index answers or one checked after decoding) returns
across page boundaries exactly what it returns in one piece. The page sizes
are observed on the real saver by recording what each page asks the server for
(the Postgres list statement's limit, the Redis list script's count). Both
backends, sync and async. What a connection is left with when a listing stops
early is Postgres's own (``tests/postgres/test_pg_history_is_read_page_by_page.py``);
memory over a whole history is
``tests/test_listing_a_long_history_holds_about_one_page.py``.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
import pytest
import redis
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint
from psycopg import sql

from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.postgres import _listing as pg_listing
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from langgraph_durable.checkpointers.redis import _listing as redis_listing
from tests._backends import POSTGRES, SAVER_KINDS, area_fixture
from tests._durability import open_saver
from tests._growing import put_items

# both backends page alike: the same constants
PAGE_FIRST = pg_listing.PAGE_FIRST
PAGE_FIRST_LIMITED = pg_listing.PAGE_FIRST_LIMITED
PAGE_MAX = pg_listing.PAGE_MAX
assert (PAGE_FIRST, PAGE_FIRST_LIMITED, PAGE_MAX) == (
    redis_listing.PAGE_FIRST,
    redis_listing.PAGE_FIRST_LIMITED,
    redis_listing.PAGE_MAX,
)

ROOT = 150
SUB = 30
Stored = list[tuple[str, str, int]]  # (checkpoint id, namespace, step), newest first


def _backend(kind: str) -> str:
    return kind.split("-")[0]


@pytest.fixture
def area(kind: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """``(url, schema or prefix)`` of this test's own."""
    return request.getfixturevalue(area_fixture(kind))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def seeded() -> Iterator[dict[str, tuple[str, str, Stored]]]:
    """The seeded thread of each backend, written once for the module's reading tests.

    The tests that only read share it: ``(url, schema or prefix, stored)`` by backend.
    """
    out: dict[str, tuple[str, str, Stored]] = {}
    yield out
    for backend, (url, area, _) in out.items():
        if backend == POSTGRES:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(area)))
        else:
            with redis.Redis.from_url(url) as client:
                keys = list(client.scan_iter(match=f"*{area}*", count=1000))
                for i in range(0, len(keys), 500):
                    client.delete(*keys[i : i + 500])


@pytest.fixture
def history(
    kind: str, seeded: dict[str, tuple[str, str, Stored]], request: pytest.FixtureRequest
) -> tuple[str, str, Stored]:
    """``(url, area, stored)`` of the seeded thread of ``kind``'s backend."""
    backend = _backend(kind)
    if backend not in seeded:
        area = f"t{uuid.uuid4().hex[:12]}"
        if backend == POSTGRES:
            url = request.getfixturevalue("pg_server_url")
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(area)))
        else:
            url = request.getfixturevalue("redis_server_url")
        seeded[backend] = (url, area, [])  # dropped at the module's end even if seeding fails
        seeded[backend] = (url, area, _seed(kind, url, area))
    return seeded[backend]


@pytest.fixture
def page_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every page size a listing asks the server for, in order."""
    asked: list[int] = []
    next_statement = pg_listing.ListPages.next_statement
    next_size = redis_listing.ThreadPages.next_size

    def pg_recorded(self: pg_listing.ListPages) -> Any:
        stmt = next_statement(self)
        if stmt is not None and stmt.params is not None:
            asked.append(stmt.params["limit"])
        return stmt

    def redis_recorded(self: redis_listing.ThreadPages) -> int:
        asked.append(next_size(self))
        return asked[-1]

    monkeypatch.setattr(pg_listing.ListPages, "next_statement", pg_recorded)
    monkeypatch.setattr(redis_listing.ThreadPages, "next_size", redis_recorded)
    return asked


@asynccontextmanager
async def _reader(kind: str, url: str, area: str) -> AsyncIterator[Any]:
    """A saver of ``kind`` on the area: a sync one as it is, an async one as an async saver."""
    if kind.endswith("-sync"):
        with open_saver(_backend(kind), url, area) as saver:
            yield saver
    elif kind.startswith(POSTGRES):
        async with AsyncPostgresSaver.from_conn_string(url, schema=area) as asaver:
            yield asaver
    else:
        async with AsyncRedisSaver.from_conn_string(url, prefix=area) as rsaver:
            yield rsaver


class _Steps:
    """A listing taken one tuple at a time: ``alist``, or a sync ``list`` stepped in a thread."""

    _END = object()

    def __init__(self, saver: Any, config: Any, **kwargs: Any) -> None:
        self._sync: Iterator[CheckpointTuple] | None = None
        if isinstance(saver, (AsyncPostgresSaver, AsyncRedisSaver)):
            self._async = saver.alist(config, **kwargs)
        else:
            self._sync = saver.list(config, **kwargs)

    async def next(self) -> CheckpointTuple | None:
        if self._sync is not None:
            item = await asyncio.to_thread(next, self._sync, self._END)
            return None if item is self._END else item  # type: ignore[return-value]
        try:
            return await self._async.__anext__()  # type: ignore[no-any-return]
        except StopAsyncIteration:
            return None

    async def all(self) -> list[CheckpointTuple]:
        out = []
        while (item := await self.next()) is not None:
            out.append(item)
        return out


@contextmanager
def _whole_values_writer(kind: str, url: str, area: str) -> Iterator[Any]:
    """A sync saver of ``kind``'s backend that stores every value whole."""
    if kind.startswith(POSTGRES):
        with PostgresSaver.from_conn_string(url, schema=area, deltas=False) as saver:
            saver.setup()
            yield saver
    else:
        with RedisSaver.from_conn_string(url, prefix=area, deltas=False) as rsaver:
            rsaver.setup()
            yield rsaver


def _put(saver: Any, ns: str, parent: str | None, n: int, payload: str) -> str:
    cp = empty_checkpoint()
    cp["channel_values"] = {"note": f"{n}:{payload}"}
    cp["channel_versions"] = {"note": f"{n:06}"}
    conf: dict[str, Any] = {"configurable": {"thread_id": "t", "checkpoint_ns": ns}}
    if parent:
        conf["configurable"]["checkpoint_id"] = parent
    metadata = {"step": n, "source": "loop" if n % 2 else "input", "tag": {"k": n % 3}}
    saver.put(conf, cp, metadata, {"note": f"{n:06}"})
    return str(cp["id"])


def _seed(kind: str, url: str, area: str) -> Stored:
    """Thread ``t``: ROOT checkpoints in the root namespace, SUB in ``sub``, interleaved."""
    stored = []
    with open_saver(_backend(kind), url, area) as saver:
        parents: dict[str, str | None] = {"": None, "sub": None}
        for n in range(ROOT + SUB):
            ns = "sub" if n % 6 == 5 else ""  # every sixth checkpoint is the subgraph's
            parents[ns] = _put(saver, ns, parents[ns], n, "x" * 200)
            stored.append((str(parents[ns]), ns, n))
    return sorted(stored, reverse=True)


CASES: list[tuple[str, dict[str, Any]]] = [
    ("all namespaces", {}),
    ("root namespace", {"ns": ""}),
    ("limit", {"ns": "", "limit": 55}),
    ("before", {"ns": "", "before": 40}),
    ("before and limit", {"ns": "", "before": 30, "limit": 100}),
    ("indexed filter", {"filter": {"source": "loop"}}),
    ("filter on the step", {"ns": "", "filter": {"step": 7}}),
    ("checked filter", {"filter": {"tag": {"k": 1}}}),
    ("checked filter with a limit", {"ns": "", "filter": {"tag": {"k": 2}}, "limit": 30}),
    (
        "indexed filter, before and limit",
        {"filter": {"source": "input"}, "before": 20, "limit": 40},
    ),
]


def _expected(stored: Stored, case: dict[str, Any]) -> list[str]:
    rows = [r for r in stored if "ns" not in case or r[1] == case["ns"]]
    if "before" in case:
        rows = [r for r in rows if r[0] < stored[case["before"]][0]]
    flt = case.get("filter", {})
    if "source" in flt:
        rows = [r for r in rows if ("loop" if r[2] % 2 else "input") == flt["source"]]
    if "tag" in flt:
        rows = [r for r in rows if r[2] % 3 == flt["tag"]["k"]]
    if "step" in flt:
        rows = [r for r in rows if r[2] == flt["step"]]
    return [r[0] for r in rows[: case.get("limit")]]


def _args(stored: Stored, case: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    conf: dict[str, Any] = {"thread_id": "t"}
    if "ns" in case:
        conf["checkpoint_ns"] = case["ns"]
    kwargs: dict[str, Any] = {"filter": case.get("filter"), "limit": case.get("limit")}
    if "before" in case:
        kwargs["before"] = {
            "configurable": {"thread_id": "t", "checkpoint_id": stored[case["before"]][0]}
        }
    return {"configurable": conf}, kwargs


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_the_first_tuple_comes_after_one_small_page_and_pages_grow(
    kind: str, history: tuple[str, str, Stored], page_sizes: list[int]
) -> None:
    url, area, stored = history
    root = _expected(stored, {"ns": ""})
    async with _reader(kind, url, area) as saver:
        page_sizes.clear()
        steps = _Steps(saver, {"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        first = await steps.next()
        assert first is not None and first.checkpoint["id"] == root[0]
        # what was asked before the first tuple: one small page, not the thread
        assert page_sizes == [PAGE_FIRST]
        rest = await steps.all()
    assert [t.checkpoint["id"] for t in rest] == root[1:]
    # pages grow, at most doubling (a full last page costs one empty page more)
    assert page_sizes[:4] == [10, 20, 40, 80], page_sizes
    assert all(b <= 2 * a for a, b in itertools.pairwise(page_sizes))
    # the rows each page brought: several pages, none of them the whole thread
    rows, left = [], len(root)
    for size in page_sizes:
        rows.append(min(size, left))
        left -= rows[-1]
    assert left == 0 and len(rows) > 2 and max(rows) < len(root), page_sizes


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_every_listing_of_one_thread_is_the_same_across_pages(
    kind: str, history: tuple[str, str, Stored], page_sizes: list[int]
) -> None:
    url, area, stored = history
    async with _reader(kind, url, area) as saver:
        for name, case in CASES:
            page_sizes.clear()
            config, kwargs = _args(stored, case)
            got = [t.checkpoint["id"] for t in await _Steps(saver, config, **kwargs).all()]
            assert got == _expected(stored, case), name
            assert len(page_sizes) > 1 or len(got) <= PAGE_FIRST_LIMITED, (name, page_sizes)
            assert all(0 < s <= PAGE_MAX for s in page_sizes), (name, page_sizes)


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_pages_of_whole_values_keep_to_about_page_bytes(
    kind: str, area: tuple[str, str], page_sizes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 64_000
    monkeypatch.setattr(pg_listing, "PAGE_BYTES", budget)
    monkeypatch.setattr(redis_listing, "PAGE_BYTES", budget)
    # ~8 kB stored per checkpoint, whole (no deltas), incompressible
    value = [secrets.token_hex(100) for _ in range(40)]

    def seed() -> None:
        with _whole_values_writer(kind, *area) as writer:
            parent = None
            for n in range(1, 121):
                parent = put_items(writer, parent, [n, *value], f"{n:06}")

    await asyncio.to_thread(seed)
    page_sizes.clear()
    async with _reader(kind, *area) as saver:
        listed = await _Steps(saver, {"configurable": {"thread_id": "t"}}).all()
    assert [t.checkpoint["channel_values"]["items"][0] for t in listed] == list(range(120, 0, -1))
    assert all(t.checkpoint["channel_values"]["items"][1:] == value for t in listed)
    # the first page is PAGE_FIRST checkpoints; at ~8 kB a checkpoint the next
    # ones shrink to the 64 kB budget: at most 8
    assert page_sizes[0] == PAGE_FIRST
    assert max(page_sizes[1:]) <= 8, page_sizes
    assert len(page_sizes) >= 120 // 8
