"""Recovery of orphaned runs: threads whose run lease expired while running.

A run whose process died (a deploy, an OOM kill, a lost pod) leaves its thread
neither finished nor waiting: its lease record still says ``running`` but
nobody renews it. :class:`RecoveryWorker` finds such threads through the
saver's index of running leases, claims each with compare-and-set (so exactly
one worker recovers it), and resumes it from its last checkpoint with
``invoke(None, config)``. A thread whose recovered runs keep dying is parked
after ``max_recoveries`` and reported with its last recorded error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from langgraph_durable.checkpointers._lease_driver import drive
from langgraph_durable.checkpointers._lease_driver_async import adrive
from langgraph_durable.checkpointers._lease_flows import close_as, close_if_ended, unpark
from langgraph_durable.checkpointers._leases import (
    ENDED_ERROR,
    ENDED_FINISHED,
    ENDED_INTERRUPTED,
    RECOVERED_KEY,
    RECOVERIES_KEY,
    LeaseRecord,
    clip_error,
)
from langgraph_durable.checkpointers._run_leases import AsyncRunLeases, RunLeases
from langgraph_durable.interrupts._authz import REQUESTED_BY_KEY
from langgraph_durable.interrupts._errors import NotParked

log = logging.getLogger("langgraph_durable.interrupts.recovery")

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
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


def recovery_config(thread_id: str, recoveries: int, latest: Any = None) -> dict[str, Any]:
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


def _leases_of(graph: Any, *, asynchronous: bool) -> Any:
    saver = getattr(graph, "checkpointer", None)
    name = "arun_leases" if asynchronous else "run_leases"
    leases = getattr(saver, name, None)
    wanted = AsyncRunLeases if asynchronous else RunLeases
    if not isinstance(leases, wanted):
        raise TypeError(
            f"the graph's checkpointer {type(saver).__name__} holds no run leases "
            f"(expected a langgraph-durable {'async ' if asynchronous else ''}saver with "
            "leases on)"
        )
    return leases


class RecoveryWorker:
    """Finds runs whose process died and resumes them from their last checkpoint.

    Args:
        graph: The compiled graph, with one of our savers (leases on) as checkpointer.
        max_recoveries: Consecutive recoveries (each dying again) after which a
            thread is parked instead of resumed.
        clock: Returns the current UTC time (injectable for tests).
        batch: How many orphaned threads one pass looks at.

    Example:
        >>> worker = RecoveryWorker(graph, max_recoveries=3)  # doctest: +SKIP
        >>> report = worker.run_once()  # doctest: +SKIP
    """

    def __init__(
        self, graph: Any, *, max_recoveries: int = 3, clock: Clock | None = None, batch: int = 100
    ) -> None:
        if max_recoveries < 0:
            raise ValueError("max_recoveries must be >= 0")
        self.graph = graph
        self.max_recoveries = max_recoveries
        self.clock: Clock = clock or _utc_now
        self.batch = batch
        self.recovered_total = 0
        self.parked_total = 0

    # -- sync --

    def run_once(self) -> RecoveryPass:
        """One pass: park poison threads, claim and resume the other orphans.

        A thread whose latest checkpoint shows it finished or waiting at an
        interrupt, or waiting at one of the graph's static breakpoints, is never
        resumed: its lease is released (``closed``).
        """
        leases: RunLeases = _leases_of(self.graph, asynchronous=False)
        store = leases.store
        report = RecoveryPass()
        for record in store.find_expired_leases(now=self.clock(), limit=self.batch):
            report.found += 1
            end, closed = drive(
                store, close_if_ended(record, leases.owner, self.clock(), leases.settings.lease)
            )
            if end is None and self._waits_at_breakpoint(record.thread_id):
                end = ENDED_INTERRUPTED
                closed = drive(
                    store, close_as(record, leases.owner, self.clock(), leases.settings.lease, end)
                )
            if end is not None:
                _note_closed(report, record.thread_id, end, closed)
                continue
            if record.attempts >= self.max_recoveries:
                parked = store.park_lease(
                    thread_id=record.thread_id,
                    token=record.token,
                    now=self.clock(),
                    reason=_park_reason(record),
                )
                if parked is not None:
                    self._note_parked(report, parked)
                continue
            claimed = store.claim_expired_lease(
                thread_id=record.thread_id,
                token=record.token,
                owner=leases.owner,
                now=self.clock(),
                ttl=leases.settings.lease,
            )
            if claimed is None:
                report.lost.append(record.thread_id)
                continue
            leases.adopt(claimed)
            self._resume(leases, claimed, report)
        return report

    def _resume(self, leases: RunLeases, claimed: LeaseRecord, report: RecoveryPass) -> None:
        thread_id = claimed.thread_id
        latest = self.graph.checkpointer.get_tuple({"configurable": {"thread_id": thread_id}})
        config = recovery_config(thread_id, claimed.recoveries, latest)
        log.info("recovering thread %r (recovery %d)", thread_id, claimed.recoveries)
        try:
            self.graph.invoke(None, config)
        except Exception as exc:
            error = clip_error(exc) or ""
            leases.release(thread_id, ENDED_ERROR, error)
            report.failed.append((thread_id, error))
            return
        if leases.holds(thread_id):
            # the run wrote nothing after the claim (it had nothing left to do)
            state = self.graph.get_state({"configurable": {"thread_id": thread_id}})
            leases.release(thread_id, ENDED_INTERRUPTED if state.next else ENDED_FINISHED)
        self.recovered_total += 1
        report.recovered.append(thread_id)

    def _waits_at_breakpoint(self, thread_id: str) -> bool:
        """Whether the thread waits at one of the graph's static breakpoints (see
        :func:`waits_at_breakpoint`): its run's process died after the pause,
        before the lease was released."""
        if not has_breakpoints(self.graph):
            return False
        state = self.graph.get_state({"configurable": {"thread_id": thread_id}})
        parent = None
        if self.graph.interrupt_after_nodes and state.next and state.parent_config:
            parent = self.graph.get_state(state.parent_config)
        return waits_at_breakpoint(self.graph, state, parent)

    # -- async --

    async def _await_at_breakpoint(self, thread_id: str) -> bool:
        """The async twin of :meth:`_waits_at_breakpoint`."""
        if not has_breakpoints(self.graph):
            return False
        state = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
        parent = None
        if self.graph.interrupt_after_nodes and state.next and state.parent_config:
            parent = await self.graph.aget_state(state.parent_config)
        return waits_at_breakpoint(self.graph, state, parent)

    async def arun_once(self) -> RecoveryPass:
        """The async twin of :meth:`run_once` (for graphs with an async saver)."""
        leases: AsyncRunLeases = _leases_of(self.graph, asynchronous=True)
        store = leases.store
        report = RecoveryPass()
        for record in await store.afind_expired_leases(now=self.clock(), limit=self.batch):
            report.found += 1
            end, closed = await adrive(
                store, close_if_ended(record, leases.owner, self.clock(), leases.settings.lease)
            )
            if end is None and await self._await_at_breakpoint(record.thread_id):
                end = ENDED_INTERRUPTED
                closed = await adrive(
                    store, close_as(record, leases.owner, self.clock(), leases.settings.lease, end)
                )
            if end is not None:
                _note_closed(report, record.thread_id, end, closed)
                continue
            if record.attempts >= self.max_recoveries:
                parked = await store.apark_lease(
                    thread_id=record.thread_id,
                    token=record.token,
                    now=self.clock(),
                    reason=_park_reason(record),
                )
                if parked is not None:
                    self._note_parked(report, parked)
                continue
            claimed = await store.aclaim_expired_lease(
                thread_id=record.thread_id,
                token=record.token,
                owner=leases.owner,
                now=self.clock(),
                ttl=leases.settings.lease,
            )
            if claimed is None:
                report.lost.append(record.thread_id)
                continue
            leases.adopt(claimed)
            await self._aresume(leases, claimed, report)
        return report

    async def _aresume(
        self, leases: AsyncRunLeases, claimed: LeaseRecord, report: RecoveryPass
    ) -> None:
        thread_id = claimed.thread_id
        latest = await self.graph.checkpointer.aget_tuple(
            {"configurable": {"thread_id": thread_id}}
        )
        config = recovery_config(thread_id, claimed.recoveries, latest)
        try:
            await self.graph.ainvoke(None, config)
        except Exception as exc:
            error = clip_error(exc) or ""
            await leases.release(thread_id, ENDED_ERROR, error)
            report.failed.append((thread_id, error))
            return
        if leases.holds(thread_id):
            state = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
            await leases.release(thread_id, ENDED_INTERRUPTED if state.next else ENDED_FINISHED)
        self.recovered_total += 1
        report.recovered.append(thread_id)

    def _note_parked(self, report: RecoveryPass, parked: LeaseRecord) -> None:
        self.parked_total += 1
        report.parked.append(ParkedThread(parked.thread_id, parked.attempts, parked.last_error))
        log.warning(
            "parked poison thread %r after %d recoveries; last error: %s",
            parked.thread_id,
            parked.attempts,
            parked.last_error,
        )


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


def _note_closed(report: RecoveryPass, thread_id: str, end: str, closed: bool) -> None:
    if closed:
        report.closed.append(thread_id)
        log.info(
            "thread %r ended (%s) before its run's process died; released, not resumed",
            thread_id,
            end,
        )
    else:
        report.lost.append(thread_id)


def _park_reason(record: LeaseRecord) -> str:
    return f"died {record.attempts} times after recovery"


def unpark_thread(saver: Any, thread_id: str, *, clock: Clock | None = None) -> str:
    """Give a parked (poison) thread another chance (operator action; sync savers).

    If the thread's latest checkpoint shows it finished or waiting at an
    interrupt, it is only released (nothing is left to run). Otherwise it is
    put back as an orphan whose lease expired now, with its count of
    recoveries in a row reset: the next :meth:`RecoveryWorker.run_once` (for
    example the ``worker`` command) resumes it, and parks it again only after
    another ``max_recoveries`` deaths. ``langgraph-durable unpark THREAD`` calls this.

    Args:
        saver: One of our savers (the lease store).
        thread_id: The parked thread.
        clock: Returns the current UTC time (injectable for tests).

    Returns:
        ``"queued"`` (the next recovery pass resumes it) or ``"released"``.

    Raises:
        NotParked: the thread is not parked (its state is named); nothing changed.
    """
    outcome, _ = drive(saver, unpark(thread_id, (clock or _utc_now)()))
    if outcome is None:
        from langgraph_durable.interrupts._thread_states import thread_state

        raise NotParked(thread_id=thread_id, state=thread_state(saver, thread_id).state)
    log.info("unparked thread %r (%s)", thread_id, outcome)
    return outcome


async def aunpark_thread(saver: Any, thread_id: str, *, clock: Clock | None = None) -> str:
    """The async twin of :func:`unpark_thread` (for our async savers).

    Raises:
        NotParked: the thread is not parked (named by its lease record's state,
            or ``unknown`` without one); nothing changed.
    """
    outcome, record = await adrive(saver, unpark(thread_id, (clock or _utc_now)()))
    if outcome is None:
        raise NotParked(
            thread_id=thread_id, state="unknown" if record is None else str(record.state)
        )
    log.info("unparked thread %r (%s)", thread_id, outcome)
    return outcome
