# Generated from interrupts/_recovery_pass_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""One recovery pass, written once: find orphaned runs, park poison threads, resume the rest.

The sync module (:mod:`._recovery_pass`) is generated from this one by
``tools/async_to_sync.py``; :class:`~langgraph_durable.interrupts._recovery.RecoveryWorker`
runs whichever fits its graph's saver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph_durable.checkpointers.runs import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_INTERRUPTED,
    LeaseRecord,
    LeaseTarget,
    RunLeases,
    clip_error,
    close_as,
    close_if_ended,
    drive,
)
from langgraph_durable.interrupts._recovery_report import (
    RecoveryPass,
    has_breakpoints,
    leases_of,
    log,
    note_closed,
    park_reason,
    parked_thread,
    recovery_config,
    waits_at_breakpoint,
)
from langgraph_durable.interrupts._telemetry import count, recovery_attributes, traced
from langgraph_durable.interrupts._types import saver_of

if TYPE_CHECKING:
    from langgraph_durable.interrupts._recovery import RecoveryWorker


def recover_orphans(worker: RecoveryWorker) -> RecoveryPass:
    """One pass of ``worker`` (see :meth:`RecoveryWorker.run_once`)."""
    leases: RunLeases = leases_of(worker.graph, RunLeases)
    store = leases.store
    # close_if_ended reads the thread's latest checkpoint from the saver
    target = LeaseTarget(saver_of(worker.graph), store)
    report = RecoveryPass()
    for record in store.find_expired_leases(now=worker.clock(), limit=worker.batch):
        report.found += 1
        ttl = leases.settings.lease
        end, closed = drive(target, close_if_ended(record, leases.owner, worker.clock(), ttl))
        if end is None and _waits_at_breakpoint(worker, record.thread_id):
            end = ENDED_INTERRUPTED
            closed = drive(target, close_as(record, leases.owner, worker.clock(), ttl, end))
        if end is not None:
            note_closed(report, record.thread_id, end, closed)
            continue
        if record.attempts >= worker.max_recoveries:
            parked = store.park_lease(
                thread_id=record.thread_id,
                token=record.token,
                now=worker.clock(),
                reason=park_reason(record),
            )
            if parked is not None:
                worker.parked_total += 1
                report.parked.append(parked_thread(parked))
            continue
        claimed = store.claim_expired_lease(
            thread_id=record.thread_id,
            token=record.token,
            owner=leases.owner,
            now=worker.clock(),
            ttl=ttl,
        )
        if claimed is None:
            report.lost.append(record.thread_id)
            continue
        leases.adopt(claimed)
        _resume(worker, leases, claimed, report)
    return report


def _resume(
    worker: RecoveryWorker, leases: RunLeases, claimed: LeaseRecord, report: RecoveryPass
) -> None:
    thread_id = claimed.thread_id
    graph = worker.graph
    latest = saver_of(graph).get_tuple({"configurable": {"thread_id": thread_id}})
    config = recovery_config(thread_id, claimed.recoveries, latest)
    log.info("recovering thread %r (recovery %d)", thread_id, claimed.recoveries)
    with traced("recovery.resume", recovery_attributes(claimed)) as span:
        try:
            graph.invoke(None, config)
        except Exception as exc:
            error = clip_error(exc) or ""
            leases.release(thread_id, ENDED_ERROR, error)
            report.failed.append((thread_id, error))
            span.set_attribute("langgraph_durable.outcome", "failed")
            return
        span.set_attribute("langgraph_durable.outcome", "resumed")
    count("langgraph_durable.recoveries")
    if leases.holds(thread_id):
        # the run wrote nothing after the claim (it had nothing left to do)
        state = graph.get_state({"configurable": {"thread_id": thread_id}})
        leases.release(thread_id, ENDED_INTERRUPTED if state.next else ENDED_FINISHED)
    worker.recovered_total += 1
    report.recovered.append(thread_id)


def _waits_at_breakpoint(worker: RecoveryWorker, thread_id: str) -> bool:
    """Whether the thread waits at one of the graph's static breakpoints (see
    :func:`waits_at_breakpoint`): its run's process died after the pause,
    before the lease was released."""
    graph = worker.graph
    if not has_breakpoints(graph):
        return False
    state = graph.get_state({"configurable": {"thread_id": thread_id}})
    parent = None
    if graph.interrupt_after_nodes and state.next and state.parent_config:
        parent = graph.get_state(state.parent_config)
    return waits_at_breakpoint(graph, state, parent)
