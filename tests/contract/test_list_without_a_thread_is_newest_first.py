"""``list(None, filter=..., limit=...)`` lists across threads newest first.

Checkpoints are written round-robin over more threads than one batch of the
Redis listing serves, so the newest ones interleave threads; every backend
must return exactly the newest ``limit`` matches in descending id order,
with ``before``, a ``run_id`` filter, and a filter value no index holds.
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

THREADS = 70
ROUNDS = 3


async def _fill(saver: Any, marker: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Round-robin puts; returns (checkpoint id, thread id, metadata) in write order."""
    parents: dict[str, Any] = {}
    written = []
    for r in range(ROUNDS):
        for t in range(THREADS):
            tid = f"{marker}-{t:03d}"
            config = parents.get(tid) or {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
            md = {
                "marker": marker,
                "step": r,
                "parity": "even" if t % 2 == 0 else "odd",
                "run_id": f"{marker}-run-{t % 5}",
                "shape": {"t": t % 3},
            }
            cp = empty_checkpoint()
            parents[tid] = await saver.aput(config, cp, md, {})
            written.append((cp["id"], tid, md))
    return written


async def _listed(saver: Any, **kwargs: Any) -> list[tuple[str, str]]:
    return [
        (t.checkpoint["id"], t.config["configurable"]["thread_id"])
        async for t in saver.alist(None, **kwargs)
    ]


def _expect(written: list[Any], pred: Any, limit: int | None = None) -> list[tuple[str, str]]:
    got = sorted(((c, t) for c, t, md in written if pred(c, md)), reverse=True)
    return got[:limit] if limit is not None else got


async def test_newest_first_across_threads(saver: Any) -> None:
    marker = f"m{uuid.uuid4().hex[:8]}"
    written = await _fill(saver, marker)
    mine = {"marker": marker}
    assert await _listed(saver, filter=mine, limit=7) == _expect(written, lambda c, md: True, 7)
    assert await _listed(saver, filter=mine) == _expect(written, lambda c, md: True)
    even = {"marker": marker, "parity": "even"}
    assert await _listed(saver, filter=even, limit=50) == _expect(
        written, lambda c, md: md["parity"] == "even", 50
    )
    cut = written[len(written) // 2][0]
    before = {"configurable": {"checkpoint_id": cut}}
    assert await _listed(saver, filter=mine, before=before, limit=5) == _expect(
        written, lambda c, md: c < cut, 5
    )
    run = {"run_id": f"{marker}-run-2"}
    assert await _listed(saver, filter=run, limit=4) == _expect(
        written, lambda c, md: md["run_id"] == run["run_id"], 4
    )
    # a dict value: answered by checking decoded metadata, same order
    shaped = {"marker": marker, "shape": {"t": 1}}
    assert await _listed(saver, filter=shaped, limit=6) == _expect(
        written, lambda c, md: md["shape"] == {"t": 1}, 6
    )
    # the listed tuples are whole: metadata and config as written
    (newest,) = [t async for t in saver.alist(None, filter=mine, limit=1)]
    _, tid, md = max(written)
    assert newest.config["configurable"]["thread_id"] == tid
    assert {k: newest.metadata[k] for k in md} == md
