"""Cross-thread listing, ``list(None, filter=..., limit=...)`` (I/O-free).

Not a hot path (LangGraph never calls it while running a graph), but it must
stay proportionate: the threads come from the registry shards (or, for a
``run_id`` filter, from that run's index), never from a keyspace scan; every
round trip serves a batch of threads; and with a ``limit`` only the
``limit`` newest matches are decoded. Results come newest first across
threads (checkpoint ids are time-ordered), ties by thread id and namespace.

When every filter value is one the metadata index holds (the common case),
a first pass asks each thread's index for its ``limit`` newest matching
checkpoints (records only, no channel values), keeps the global ``limit``
newest, then fetches the values of just those. A filter value the index
cannot answer (a dict, a list...) is checked after decoding, thread by
thread (still batched).
"""

from __future__ import annotations

import heapq
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, get_checkpoint_id

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._codec import index_prefix, is_indexed, share_chains

if TYPE_CHECKING:
    from langgraph_durable.checkpointers.redis._core import RedisCore
    from langgraph_durable.checkpointers.redis._ops import Call, ListOp

BATCH = 64
"""Threads served by one round trip."""
GET_BATCH = 256
"""Checkpoints read by one round trip; larger limits list per thread instead."""

PAGE_FIRST = 10
"""Checkpoints in the first page of one thread's listing without a limit."""
PAGE_FIRST_LIMITED = 100
"""Checkpoints in the first page at most when a limit is given: ``list(limit=n)``
with ``n`` up to this is one round trip."""
PAGE_MAX = 1000
"""Checkpoints in a page at most."""
PAGE_BYTES = 8 << 20
"""Stored bytes (records and values) a page aims to stay under."""
CHECKED_PAGE_MIN = 64
"""Candidates a page asks for at least when a filter is checked after decoding."""


class ThreadPages:
    """Page sizes of one thread's listing (I/O-free).

    A history is read in pages (the list script, continued below the last
    checkpoint id of the previous page), so the first checkpoint comes after
    one small page and the caller holds at most one page of stored entries,
    whatever the thread's length. Pages grow, at most doubling, to as many
    checkpoints as :data:`PAGE_BYTES` holds at the last page's bytes per
    checkpoint, so values stored whole (``deltas=False``) keep pages to about
    that size too.

    Args:
        limit: ``list()``'s limit, or ``None``.
        exact: Whether the script answers the whole filter (every match it
            returns counts towards ``limit``); otherwise matches are checked
            after decoding and a page asks for at least
            :data:`CHECKED_PAGE_MIN` candidates.
    """

    def __init__(self, limit: int | None, exact: bool) -> None:
        self.left = limit
        self.exact = exact
        self.size = min(limit, PAGE_FIRST_LIMITED) if limit else PAGE_FIRST
        if not exact:
            self.size = min(max(self.size, CHECKED_PAGE_MIN), PAGE_MAX)

    def next_size(self) -> int:
        """Checkpoints to ask the script for (never 0, which means all)."""
        if self.exact and self.left is not None:
            return max(1, min(self.size, self.left))
        return self.size

    def emitted(self) -> bool:
        """Count one emitted tuple; whether the limit is reached."""
        if self.left is None:
            return False
        self.left -= 1
        return self.left <= 0

    def grow(self, entries: Sequence[Any]) -> None:
        """Size the next page from the bytes of this one's ``entries``."""
        if not entries:
            return
        seen: set[int] = set()
        total = 0
        for entry in entries:
            for field in entry:
                if isinstance(field, bytes):
                    total += len(field)
                elif isinstance(field, (list, dict)) and id(field) not in seen:
                    seen.add(id(field))  # a page's entries share one chain map
                    values = field.values() if isinstance(field, dict) else field
                    total += sum(len(v) for v in values if isinstance(v, bytes))
        per = max(1, total // len(entries))
        floor = 1 if self.exact else CHECKED_PAGE_MIN
        self.size = max(floor, min(2 * self.size, PAGE_MAX, PAGE_BYTES // per))


def _batches(items: Sequence[str], size: int = BATCH) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def together(ops: list[Generator[Call, Any, Any]]) -> Generator[Call, Any, list[Any]]:
    """Drive several operations in lockstep: their commands share each round trip.

    Every operation must yield only :class:`Call`; returns their results in order.
    """
    from langgraph_durable.checkpointers.redis._ops import Call

    results: list[Any] = [None] * len(ops)
    pending: dict[int, Call] = {}
    for i, op in enumerate(ops):
        try:
            pending[i] = next(op)
        except StopIteration as done:
            results[i] = done.value
    while pending:
        order = list(pending)
        replies = yield Call([cmd for i in order for cmd in pending[i].cmds])
        pos, nxt = 0, {}
        for i in order:
            n = len(pending[i].cmds)
            try:
                nxt[i] = ops[i].send(replies[pos : pos + n])
            except StopIteration as done:
                results[i] = done.value
            pos += n
        pending = nxt
    return results


def _threads(core: RedisCore, filter: dict[str, Any]) -> Generator[Call, Any, list[str]]:
    from langgraph_durable.checkpointers.redis._ops import Call

    run_id = filter.get("run_id")
    # only threads of that run can match (the index delete_for_runs uses)
    by_run = isinstance(run_id, str) and run_id != ""
    if not by_run:
        # the registry, less the threads whose keys expired (dropped there)
        return sorted((yield from core.registry.live_threads()))
    reply = yield Call([("SMEMBERS", core.keys.run(str(run_id)))])
    return sorted({m.decode() for members in reply for m in members})


def list_all_threads(
    core: RedisCore,
    filter: dict[str, Any],
    before: RunnableConfig | None,
    limit: int | None,
) -> ListOp:
    """Checkpoints of every thread matching ``filter``, newest first, up to ``limit``."""
    threads = yield from _threads(core, filter)
    prefixes = [p for p in (index_prefix(k, v) for k, v in filter.items()) if p]
    if len(prefixes) < len(filter):
        yield from _list_checked(core, threads, filter, before, limit)
        return
    before_id = (get_checkpoint_id(before) if before else None) or ""
    if limit is None or limit > GET_BATCH:
        yield from _list_whole(core, threads, prefixes, before_id, limit)
        return
    if len(prefixes) == 0 or (len(prefixes) == 1 and is_indexed(prefixes[0])):
        candidates = yield from _members(core, threads, prefixes, before_id, limit)
    else:
        candidates = yield from _scripted(core, threads, prefixes, before_id, limit)
    yield from _emit(core, candidates, limit)


def _members(
    core: RedisCore, threads: list[str], prefixes: list[str], before_id: str, limit: int | None
) -> Generator[Call, Any, list[tuple[str, str, str]]]:
    """``(cid, thread, ns)`` of each thread's ``limit`` newest matches, from index members.

    No filter: the thread's id-ordered set of all its checkpoints; one
    ``key == value``: that range of its metadata index. Members only, no records.
    """
    p = prefixes[0] if prefixes else ""
    raw = p.encode()
    newest = b"[" + raw + b"\xff" if p else b"+"
    top = b"(" + raw + before_id.encode() if before_id else newest
    bottom = b"[" + raw if p else b"-"
    page = ("LIMIT", 0, limit) if limit is not None else ()
    # no filter: since layout step 6 the root's checkpoints are in z only
    # (\0cid), za holds the subgraph namespaces' (cid\0ns)
    root_top = b"(\x00" + before_id.encode() if before_id else b"[\x00\xff"
    found: list[tuple[str, str, str]] = []
    for chunk in _batches(threads):
        keys = [core.keys.thread(t) for t in chunk]
        # the metadata index is keys[5] (x), the orders z keys[0] and za keys[1]
        if p:
            cmds = [("ZREVRANGEBYLEX", k[5], top, bottom, *page) for k in keys]
        else:
            cmds = []
            for k in keys:
                cmds.append(("ZREVRANGEBYLEX", k[1], top, bottom, *page))
                cmds.append(("ZREVRANGEBYLEX", k[0], root_top, b"[\x00", *page))
        replies = yield from _call(cmds)
        per = 1 if p else 2
        for i, thread_id in enumerate(chunk):
            seen: set[tuple[str, str]] = set()
            for j, reply in enumerate(replies[i * per : (i + 1) * per]):
                for m in reply or ():
                    if j == 0:
                        cid, _, ns = m.decode()[len(p) :].partition("\x00")
                    else:
                        cid, ns = m.decode()[1:], ""
                    if (cid, ns) in seen:
                        continue  # in both orders (a thread of an older layout)
                    seen.add((cid, ns))
                    found.append((cid, thread_id, ns))
            if limit is not None and len(found) > 4 * limit:
                found = heapq.nlargest(limit, found)
    return sorted(found, reverse=True)


def _scripted(
    core: RedisCore, threads: list[str], prefixes: list[str], before_id: str, limit: int | None
) -> Generator[Call, Any, list[tuple[str, str, str]]]:
    """As :func:`_members` for several ``key == value``: the list script checks them."""
    from langgraph_durable.checkpointers.redis._ops import script

    found: list[tuple[str, str, str]] = []
    for chunk in _batches(threads):
        replies = yield from _call(
            [
                script(S.LIST, core.keys.thread(t), "all", "", before_id, limit or 0, *prefixes)
                for t in chunk
            ]
        )
        for thread_id, reply in zip(chunk, replies, strict=True):
            for entry in reply or []:
                ns, cid = (v.decode() if isinstance(v, bytes) else v for v in entry[:2])
                found.append((cid, thread_id, ns))
        if limit is not None and len(found) > limit:
            found = heapq.nlargest(limit, found)
    return sorted(found, reverse=True)


def _emit(core: RedisCore, candidates: list[tuple[str, str, str]], limit: int | None) -> ListOp:
    """Read and emit the candidates in order, a batch per round trip, up to ``limit``."""
    from langgraph_durable.checkpointers.redis._ops import Emit, script

    left = limit
    pos = 0
    while pos < len(candidates) and (left is None or left > 0):
        chunk = candidates[pos : pos + (min(left, GET_BATCH) if left is not None else GET_BATCH)]
        pos += len(chunk)
        replies = yield from _call(
            [script(S.GET, core.keys.thread(t), ns, cid, 0, 0, 0) for cid, t, ns in chunk]
        )
        for (_, thread_id, _), entry in zip(chunk, replies, strict=True):
            if not entry:
                continue  # deleted since its index member was read
            yield Emit(core.tuple_of(thread_id, entry))
            if left is not None:
                left -= 1


def _list_whole(
    core: RedisCore, threads: list[str], prefixes: list[str], before_id: str, limit: int | None
) -> ListOp:
    """Every match (or a large ``limit``): each thread's records and values in batches.

    Values shared by several checkpoints of a thread are read once; the
    matches are merged newest first.
    """
    from langgraph_durable.checkpointers.redis._ops import Emit, script

    best: list[tuple[tuple[str, str, str], CheckpointTuple]] = []
    for chunk in _batches(threads):
        keys = [core.keys.thread(t) for t in chunk]
        replies = yield from _call(
            [script(S.LIST, k, "all", "", before_id, limit or 0, *prefixes) for k in keys]
        )
        entries = [list(r or []) for r in replies]
        yield from together(
            [core._fill_blobs(k, e) for k, e in zip(keys, entries, strict=True) if e]
        )
        for thread_id, found in zip(chunk, entries, strict=True):
            share_chains(found)
            for entry in found:
                tup = core.tuple_of(thread_id, entry)
                ns = tup.config["configurable"].get("checkpoint_ns", "")
                item = ((tup.checkpoint["id"], thread_id, ns), tup)
                if limit is None or len(best) < limit:
                    heapq.heappush(best, item)
                elif item[0] > best[0][0]:
                    heapq.heapreplace(best, item)
    for _, tup in sorted(best, key=lambda w: w[0], reverse=True):
        yield Emit(tup)


def _call(cmds: list[Any]) -> Generator[Call, Any, list[Any]]:
    from langgraph_durable.checkpointers.redis._ops import Call

    replies = yield Call(cmds)
    return list(replies)


def _collect(
    core: RedisCore, thread_id: str, filter: dict[str, Any], before: Any, limit: int | None
) -> Generator[Call, Any, list[CheckpointTuple]]:
    """One thread's listing with its items collected instead of emitted."""
    from langgraph_durable.checkpointers.redis._ops import Emit

    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    gen = core.list_checkpoints(config, filter, before, limit)
    found: list[CheckpointTuple] = []
    reply: Any = None
    while True:
        try:
            step = gen.send(reply)
        except StopIteration:
            return found
        if isinstance(step, Emit):
            found.append(step.value)
            reply = None
        else:
            reply = yield step


def _list_checked(
    core: RedisCore,
    threads: list[str],
    filter: dict[str, Any],
    before: RunnableConfig | None,
    limit: int | None,
) -> ListOp:
    from langgraph_durable.checkpointers.redis._ops import Emit

    best: list[tuple[tuple[str, str, str], int, CheckpointTuple]] = []
    n = 0
    for chunk in _batches(threads):
        results = yield from together([_collect(core, t, filter, before, limit) for t in chunk])
        for found in results:
            for tup in found:
                conf = tup.config["configurable"]
                key = (tup.checkpoint["id"], conf["thread_id"], conf.get("checkpoint_ns", ""))
                n += 1
                item = (key, n, tup)
                if limit is None or len(best) < limit:
                    heapq.heappush(best, item)
                elif key > best[0][0]:
                    heapq.heapreplace(best, item)
    for _, _, tup in sorted(best, key=lambda w: w[0], reverse=True):
        yield Emit(tup)
