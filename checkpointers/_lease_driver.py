# Generated from checkpointers/_lease_driver_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""Runs the lease flows of :mod:`._lease_flows`: each typed request on its target.

Written once as async code; the sync driver is generated from it
(``tools/async_to_sync.py``). A target is what a flow's requests go to: a lease
store (the savers' lease store protocol), a saver for :class:`ReadLatest`
(our savers are their own lease store), or the run-lease drivers' own targets
(:class:`RunWithLease`, :class:`Attempt`, :class:`Pause`, :class:`ReleaseEnded`).
"""

from __future__ import annotations

import time
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


def drive(target: Any, flow: Flow[R]) -> R:
    """Run ``flow`` to its end, performing each request on ``target``; its result."""
    result: Any = None
    while True:
        try:
            request = flow.send(result)
        except StopIteration as done:
            value: R = done.value
            return value
        result = perform(target, request)


def perform(target: Any, request: Request) -> Any:
    """Perform one request on ``target``; what the flow is sent back."""
    if isinstance(request, GetLease):
        return target.get_lease(thread_id=request.thread_id)
    if isinstance(request, AcquireLease):
        return target.acquire_lease(
            thread_id=request.thread_id, owner=request.owner, now=request.now, ttl=request.ttl
        )
    if isinstance(request, TakeOverLease):
        return target.take_over_lease(
            thread_id=request.thread_id,
            token=request.token,
            renewed_at=request.renewed_at,
            owner=request.owner,
            now=request.now,
            ttl=request.ttl,
        )
    if isinstance(request, ReleaseLease):
        return target.release_lease(
            thread_id=request.thread_id,
            owner=request.owner,
            now=request.now,
            reason=request.reason,
            error=request.error,
        )
    if isinstance(request, UnparkLease):
        return target.unpark_lease(thread_id=request.thread_id, retry_at=request.retry_at)
    if isinstance(request, ReadLatest):
        config = {"configurable": {"thread_id": request.thread_id, "checkpoint_ns": ""}}
        return target.get_tuple(config)
    if isinstance(request, RunWithLease):
        return target.run_with_lease(
            operation=request.operation, op=request.op, pre=request.pre, post=request.post
        )
    if isinstance(request, Attempt):
        return target.attempt(thread_id=request.thread_id, runtime=request.runtime)
    if isinstance(request, Pause):
        return target.pause(seconds=request.seconds)
    if isinstance(request, ReleaseEnded):
        return target.release_ended(ended=request.ended)
    if isinstance(request, Sleep):
        return time.sleep(request.seconds)
    raise TypeError(f"not a lease flow request: {request!r}")
