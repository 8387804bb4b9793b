"""Runs the lease flows of :mod:`._lease_flows`: each typed request on its target.

Written once as async code; the sync driver is generated from it
(``tools/async_to_sync.py``). A target is what a flow's requests go to: a lease
store (the savers' lease store protocol), a saver for :class:`ReadLatest`
(our savers are their own lease store), or the run-lease drivers' own targets
(:class:`RunWithLease`, :class:`Attempt`, :class:`Pause`, :class:`ReleaseEnded`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_durable.checkpointers._lease_flows import (
    AcquireLease,
    Attempt,
    Flow,
    GetLease,
    Pause,
    R,
    ReadLatest,
    ReleaseEnded,
    ReleaseLease,
    Request,
    RunWithLease,
    Sleep,
    TakeOverLease,
    UnparkLease,
)


async def adrive(target: Any, flow: Flow[R]) -> R:
    """Run ``flow`` to its end, performing each request on ``target``; its result."""
    result: Any = None
    while True:
        try:
            request = flow.send(result)
        except StopIteration as done:
            value: R = done.value
            return value
        result = await aperform(target, request)


async def aperform(target: Any, request: Request) -> Any:
    """Perform one request on ``target``; what the flow is sent back."""
    if isinstance(request, GetLease):
        return await target.aget_lease(thread_id=request.thread_id)
    if isinstance(request, AcquireLease):
        return await target.aacquire_lease(
            thread_id=request.thread_id, owner=request.owner, now=request.now, ttl=request.ttl
        )
    if isinstance(request, TakeOverLease):
        return await target.atake_over_lease(
            thread_id=request.thread_id,
            token=request.token,
            renewed_at=request.renewed_at,
            owner=request.owner,
            now=request.now,
            ttl=request.ttl,
        )
    if isinstance(request, ReleaseLease):
        return await target.arelease_lease(
            thread_id=request.thread_id,
            owner=request.owner,
            now=request.now,
            reason=request.reason,
            error=request.error,
        )
    if isinstance(request, UnparkLease):
        return await target.aunpark_lease(thread_id=request.thread_id, retry_at=request.retry_at)
    if isinstance(request, ReadLatest):
        config = {"configurable": {"thread_id": request.thread_id, "checkpoint_ns": ""}}
        return await target.aget_tuple(config)
    if isinstance(request, RunWithLease):
        return await target.arun_with_lease(
            operation=request.operation, op=request.op, pre=request.pre, post=request.post
        )
    if isinstance(request, Attempt):
        return await target.aattempt(thread_id=request.thread_id, runtime=request.runtime)
    if isinstance(request, Pause):
        return await target.apause(seconds=request.seconds)
    if isinstance(request, ReleaseEnded):
        return await target.arelease_ended(ended=request.ended)
    if isinstance(request, Sleep):
        return await asyncio.sleep(request.seconds)
    raise TypeError(f"not a lease flow request: {request!r}")
