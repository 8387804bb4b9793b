"""What a recovery pass reports, and the I/O-free decisions it makes on the way.

Shared by the pass itself (:mod:`._recovery_pass_async`, with its generated sync
module) and :class:`~langgraph_durable.interrupts._recovery.RecoveryWorker`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_durable.checkpointers.runs import (
    RECOVERED_KEY,
    RECOVERIES_KEY,
    AsyncRunLeases,
    LeaseRecord,
    RunLeases,
)
from langgraph_durable.interrupts._authz import REQUESTED_BY_KEY

log = logging.getLogger("langgraph_durable.interrupts.recovery")

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current UTC time: the default clock of recovery."""
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class ParkedThread:
    """A poison thread the worker gave up on.

    Attributes:
        thread_id: The thread.
        recoveries: How many recoveries it had in a row before it was parked.
        last_error: The last error a run of it raised, if one was recorded.
    """

    thread_id: str
    recoveries: int
    last_error: str | None


@dataclass
class RecoveryPass:
    """What one :meth:`RecoveryWorker.run_once` pass did.

    Attributes:
        found: Orphaned threads seen.
        recovered: Threads this worker claimed and resumed (the run ended, paused
            or finished, without killing this process).
        failed: ``(thread_id, error)`` of recovered runs that raised.
        parked: Threads parked in this pass.
        lost: Threads another worker claimed first.
        closed: Threads whose lease expired but whose latest checkpoint shows
            them finished or waiting at an interrupt or at one of the graph's
            static breakpoints (the run died after its end, or another run
            finished the thread): released, not resumed.
    """

    found: int = 0
    recovered: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    parked: list[ParkedThread] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)


def recovery_config(thread_id: str, recoveries: int, latest: Any = None) -> RunnableConfig:
    """The config a recovered run is resumed with: its metadata says it was recovered.

    The requester the dead run was started with (kept in the metadata of its
    latest checkpoint, ``latest``) is carried over, so the recovered run's next
    approval request still knows whom ``forbid=["requester"]`` refuses.
    """
    configurable: dict[str, Any] = {"thread_id": thread_id}
    who = (getattr(latest, "metadata", None) or {}).get(REQUESTED_BY_KEY)
    if who is not None:
        configurable[REQUESTED_BY_KEY] = who
    return {
        "configurable": configurable,
        "metadata": {RECOVERED_KEY: True, RECOVERIES_KEY: recoveries},
    }


def leases_of(graph: Any, wanted: type[RunLeases] | type[AsyncRunLeases]) -> Any:
    """The run leases of ``graph``'s saver, of the kind ``wanted`` (sync or async).

    Raises:
        TypeError: the graph's checkpointer holds no run leases of that kind.
    """
    saver = getattr(graph, "checkpointer", None)
    asynchronous = wanted is AsyncRunLeases
    leases = getattr(saver, "arun_leases" if asynchronous else "run_leases", None)
    if not isinstance(leases, wanted):
        raise TypeError(
            f"the graph's checkpointer {type(saver).__name__} holds no run leases "
            f"(expected a langgraph-durable {'async ' if asynchronous else ''}saver with "
            "leases on)"
        )
    return leases


def has_breakpoints(graph: Any) -> bool:
    """Whether ``graph`` was compiled with static breakpoints."""
    return bool(getattr(graph, "interrupt_before_nodes", None)) or bool(
        getattr(graph, "interrupt_after_nodes", None)
    )


def waits_at_breakpoint(graph: Any, state: Any, parent: Any = None) -> bool:
    """Whether a thread whose latest state is ``state`` waits at a static breakpoint of ``graph``.

    ``interrupt_before``: a node next to run is one of them; ``interrupt_after``:
    a node of the step that wrote the checkpoint (the next nodes of ``parent``,
    the state before it) is one, and a step is left to run. A checkpoint that
    tasks already ran from (their writes are stored) was resumed past its
    breakpoint, by someone who said go: not waiting. A breakpoint passed per
    call (``invoke(..., interrupt_before=...)``) is not the graph's, and only
    the lease, released as the run paused, tells of it.
    """
    if not state.next or any(t.result is not None or t.error for t in state.tasks):
        return False
    if _among(state.next, graph.interrupt_before_nodes):
        return True
    return parent is not None and _among(parent.next, graph.interrupt_after_nodes)


def _among(nodes: Any, breakpoints: Any) -> bool:
    if breakpoints == "*":
        return bool(nodes)
    return any(node in (breakpoints or ()) for node in nodes)


def note_closed(report: RecoveryPass, thread_id: str, end: str, closed: bool) -> None:
    if closed:
        report.closed.append(thread_id)
        log.info(
            "thread %r ended (%s) before its run's process died; released, not resumed",
            thread_id,
            end,
        )
    else:
        report.lost.append(thread_id)


def park_reason(record: LeaseRecord) -> str:
    return f"died {record.attempts} times after recovery"


def parked_thread(parked: LeaseRecord) -> ParkedThread:
    """What the report says of a thread just parked (and the warning it logs)."""
    log.warning(
        "parked poison thread %r after %d recoveries; last error: %s",
        parked.thread_id,
        parked.attempts,
        parked.last_error,
    )
    return ParkedThread(parked.thread_id, parked.attempts, parked.last_error)
