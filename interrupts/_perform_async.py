"""Performs the requests of the decision flows: each typed request on an :class:`Env`.

The requests (:mod:`._requests`, and the node's own in :mod:`._resume`) are data;
what each one does is written once, in the async module, and the sync module
is generated from it (``tools/async_to_sync.py``). :func:`aperform` dispatches
on the request's type; :func:`adrive` runs a flow to its end, sending each
request's result back into it (or throwing its error there).

Two requests differ beyond the renames: :class:`RunAll` runs its flows as tasks
in the async module and in threads in the sync one, and :class:`IoReady` is
true for an async flow while a sync flow asks whether it would block an async
saver's loop.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig

from langgraph_durable.checkpointers.runs import REJECT, held_by_a_live_run, run_policy
from langgraph_durable.interrupts._audit import ask

# sync-only: from langgraph_durable.interrupts._driver import in_threads
from langgraph_durable.interrupts._driver import Env, Flow, Req
from langgraph_durable.interrupts._requests import (
    AppendAudit,
    ClaimDueWaits,
    CountDecisions,
    GetDecisions,
    GetState,
    Invoke,
    ListWaits,
    RecentStates,
    RecordDecision,
    RecordDecisions,
    ReleaseWaitClaim,
    RunAll,
    ThreadBusyNow,
    WaitCounts,
)

# sync-only: from langgraph_durable.interrupts._resume import sync_io_ready
from langgraph_durable.interrupts._resume import Ask, GetTuple, IoReady
from langgraph_durable.interrupts._telemetry import traced_ask

T = TypeVar("T")


async def adrive(flow: Flow[T], env: Env) -> T:
    """Run ``flow`` to its end, each request performed on ``env``; what it returns."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            request = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            result: T = stop.value  # what the flow returned
            return result
        try:
            send, error = await aperform(request, env), None
        except Exception as exc:
            send, error = None, exc


async def aperform(request: Req[T], env: Env) -> T:
    """Perform one request on ``env``; its result."""
    result: T = await _flow_request(request, env)
    return result


async def _flow_request(request: Req[Any], env: Env) -> Any:
    """A request about the thread, the graph or the node; the others go to the saver."""
    match request:
        case GetState():
            return await env.states.aget_state(request.config)
        case RecentStates():
            history = env.states.aget_state_history(request.config, limit=request.limit)
            return [s async for s in history]
        case Invoke(durability=None):
            return await env.graph.ainvoke(request.input, request.config)
        case Invoke():
            return await env.graph.ainvoke(
                request.input, request.config, durability=request.durability
            )
        case ThreadBusyNow():
            leases, thread_id = _rejecting(env, request.config, "arun_leases")
            if thread_id is None:
                return False
            record = await leases.store.aget_lease(thread_id=thread_id)
            return held_by_a_live_run(record, leases.clock())
        case RunAll(flows=flows, concurrency=concurrency):
            return await _gathered(flows, concurrency, env)  # async-only
            # sync-only: return in_threads(lambda f: drive(f, env), flows, concurrency)
        case IoReady():
            return True  # async-only
            # sync-only: return sync_io_ready(env)
        case Ask():
            return traced_ask(ask, request.value, request.audit)
        case GetTuple():
            return await env.saver.aget_tuple(cast(RunnableConfig, request.config))
    return await _stored(request, env)


async def _stored(request: Req[Any], env: Env) -> Any:
    """A request to the saver's storage: decisions, the audit trail, the wait index."""
    backend = env.abackend
    match request:
        case GetDecisions():
            return await backend.aget_decisions(request.thread_id, request.keys)
        case CountDecisions():
            return await backend.acount_decisions(request.thread_id, request.keys)
        case RecordDecision():
            return await backend.arecord_decision(
                request.thread_id, request.key, request.decision, request.audit
            )
        case RecordDecisions():
            return await backend.arecord_decisions(request.items)
        case AppendAudit():
            await backend.aappend_audit(request.entries)
            return None
        case ListWaits():
            return await backend.alist_waits(
                kind=request.kind,
                approver=request.approver,
                thread_id=request.thread_id,
                limit=request.limit,
            )
        case WaitCounts():
            return await backend.await_counts(now=request.now, kinds=request.kinds)
        case ClaimDueWaits():
            return await backend.aclaim_due_waits(
                now=request.now,
                owner=request.owner,
                lease=request.lease,
                limit=request.limit,
                kinds=request.kinds,
            )
        case ReleaseWaitClaim():
            await backend.arelease_wait_claim(
                thread_id=request.thread_id,
                interrupt_id=request.interrupt_id,
                owner=request.owner,
                done=request.done,
            )
            return None
    raise TypeError(f"no way to perform {type(request).__name__}")


def _rejecting(env: Env, config: dict[str, Any], name: str) -> tuple[Any, str | None]:
    """The graph's run leases, and the thread if a run of ``config`` rejects when busy."""
    leases = getattr(getattr(env.graph, "checkpointer", None), name, None)
    if leases is None:
        return None, None
    found = run_policy(config, leases.multitask, leases=True)
    if found is None or found[1].strategy != REJECT:
        return leases, None
    return leases, found[0]


async def _gathered(flows: list[Flow[Any]], limit: int, env: Env) -> list[Any]:  # async-only
    """The flows as tasks, ``limit`` at a time; their results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(flow: Flow[Any]) -> Any:
        async with gate:
            return await adrive(flow, env)

    return list(await asyncio.gather(*(one(f) for f in flows)))
