"""The sweeper: applies timeout rules and finishes resumes that a crash left undone."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.types import Command

from langgraph_durable.checkpointers import ThreadBusy, WaitEntry
from langgraph_durable.interrupts._approve import _env, resume_config, resume_value
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_audit import (
    timeout_entry,
)
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._pending import pending_of
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._perform_async import adrive
from langgraph_durable.interrupts._records import age_at_least, timeout_record, won
from langgraph_durable.interrupts._requests import (
    ClaimDueWaits,
    GetDecisions,
    GetState,
    Invoke,
    RecordDecision,
    RecordDecisions,
    ReleaseWaitClaim,
    RunAll,
)
from langgraph_durable.interrupts._store import DecisionItem
from langgraph_durable.interrupts._sweeper_loop import sweep_forever
from langgraph_durable.interrupts._sweeper_loop_async import asweep_forever
from langgraph_durable.interrupts._telemetry import (
    approval_attributes,
    current,
    link_request,
    swept_timeout,
    traced_flow,
)
from langgraph_durable.interrupts._types import CompiledGraph

log = logging.getLogger("langgraph_durable.interrupts.sweeper")

DEFAULT_LEASE = timedelta(minutes=5)
SWEPT_KINDS = ("approval", "batch")
DURABILITIES = (None, "sync", "async", "exit")


def sweep_entry_flow(
    entry: WaitEntry,
    *,
    now: datetime,
    owner: str,
    lease: timedelta,
    clock: Clock | None,
    native: bool = False,
    recorded: tuple[dict[str, Any], dict[str, Any] | None] | None = None,
    durability: str | None = None,
) -> Flow[bool]:
    """Resolve one claimed wait; ``True`` when this call resumed the thread.

    ``recorded``: ``(mine, stored)`` when the timeout decision was already
    compare-and-set for this entry with its page (:func:`timeout_items`);
    ``(mine, None)`` when the page's batch failed: ``mine`` is recorded on its
    own (the same decision, which the batch may have stored already).

    ``native``: the claim came from the saver's own index, which drops an entry
    (and its claim) in the same atomic unit as the checkpoint that moves the
    thread past it; so a claimed entry is pending and needs no re-check, and a
    resumed one needs no release. On other savers the state is re-read first
    and the in-process claim is released as done afterwards.

    A claim is kept, to expire after the lease, when someone else's fresh
    decision is being resumed by its maker or when the resume failed, so a
    later sweep retries without spinning.
    """
    thread_id, approval_id = entry.thread_id, entry.interrupt_id
    record = yield from _decision_to_resume_flow(entry, now=now, lease=lease, recorded=recorded)
    if record is None:
        return False
    link_request(current(), entry.value)
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if not native:
        state = yield from GetState(config=config)
        if approval_id not in {i.id for i in pending_of(state, entry.info.kind)}:
            yield from ReleaseWaitClaim(
                thread_id=thread_id,
                interrupt_id=approval_id,
                owner=owner,
                done=True,
            )
            return False
    if entry.info.kind == "batch":
        from langgraph_durable.interrupts._batch_record import batch_resume_value

        answer = yield from batch_resume_value(entry, record)
    else:
        answer = resume_value(record, entry.value)
    yield from Invoke(
        input=Command(resume={approval_id: answer}),
        config=resume_config(config, clock, entry.value),
        durability=durability,
    )
    if not native:
        yield from ReleaseWaitClaim(
            thread_id=thread_id,
            interrupt_id=approval_id,
            owner=owner,
            done=True,
        )
    return True


def _decision_to_resume_flow(
    entry: WaitEntry,
    *,
    now: datetime,
    lease: timedelta,
    recorded: tuple[dict[str, Any], dict[str, Any] | None] | None,
) -> Flow[dict[str, Any] | None]:
    """The decision a sweep resumes the wait with, or ``None`` to leave it be.

    A due wait gets its timeout decision (recorded here unless its page did);
    a decision someone else made is resumed only once it is older than the
    lease (its maker died before resuming it).
    """
    thread_id, approval_id = entry.thread_id, entry.interrupt_id
    if entry.info.kind == "batch":
        from langgraph_durable.interrupts._batch_record import batch_timeout_flow

        record = yield from batch_timeout_flow(entry, now=now, lease=lease)
    elif entry.info.deadline is not None and entry.info.deadline <= now:
        mine, record = (
            recorded
            if recorded is not None
            else (timeout_record(entry.value, approval_id, now), None)
        )
        if record is None:
            audit = timeout_entry(thread_id, mine, entry.info.deadline)
            record = yield from RecordDecision(
                thread_id=thread_id, key=approval_id, decision=mine, audit=audit
            )
        if not won(record, mine) and not age_at_least(record, now, lease):
            return None  # somebody just decided; they are resuming it
        if won(record, mine):
            swept_timeout(entry, record)
    else:
        got = yield from GetDecisions(thread_id=thread_id, keys=[approval_id])
        record = got.get(approval_id)
        if record is None or not age_at_least(record, now, lease):
            return None
    return record


def timeout_items(entries: Sequence[WaitEntry], now: datetime) -> list[DecisionItem]:
    """The timeout decision (and its ``system`` audit entry) of each due approval."""
    items: list[DecisionItem] = []
    for entry in entries:
        mine = timeout_record(entry.value, entry.interrupt_id, now)
        items.append(
            (
                entry.thread_id,
                entry.interrupt_id,
                mine,
                timeout_entry(entry.thread_id, mine, entry.info.deadline),
            )
        )
    return items


def record_timeouts_flow(
    entries: Sequence[WaitEntry], now: datetime
) -> Flow[dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any] | None]]]:
    """Compare-and-set the timeout decisions of a page's due approvals in one operation.

    Returns ``(mine, stored)`` by ``(thread_id, approval_id)``; ``(mine, None)``
    when the batch failed: each entry then records ``mine`` on its own, so an
    item the failed batch did store is still this sweep's to resume.
    """
    due = [
        e
        for e in entries
        if e.info.kind != "batch" and e.info.deadline is not None and e.info.deadline <= now
    ]
    if len(due) < 2:
        return {}
    items = timeout_items(due, now)
    try:
        stored = yield from RecordDecisions(items=items)
    except Exception:
        log.exception("recording %d timeout decisions together failed; one by one", len(items))
        return {(tid, key): (mine, None) for tid, key, mine, _ in items}
    return {(tid, key): (mine, got) for (tid, key, mine, _), got in zip(items, stored, strict=True)}


class ApprovalSweeper:
    """Resolves approvals past their deadline, exactly once across processes.

    Each :meth:`run_once` claims due waits in pages (a claim is a lease: a sweeper
    that dies mid-resume has its claims taken over once the lease expires),
    records the timeout decision with compare-and-set, and resumes the thread.
    It also finishes resumes a crashed ``approve``/``decide`` left undone.

    Args:
        graph: The compiled graph whose threads are swept (with its saver).
        clock: Time source; also handed to the resumed nodes.
        lease: How long a claim protects a wait being resumed. Must exceed the
            longest resume; a shorter lease risks a second resume.
        page_size: How many waits one claim takes.
        owner: Claim owner name; defaults to ``host:pid:random``.
        kinds: Which wait kinds to sweep (``"approval"``, ``"batch"``).
        concurrency: How many threads of one page are resumed at once (threads
            for :meth:`run_once`, tasks for :meth:`arun_once`); resumes wait on
            storage round trips, so a few in flight raise throughput.
        durability: LangGraph's ``durability`` for the resumes (``None``: the
            graph's own, ``"async"`` by default). ``"exit"`` writes a resumed
            run's state once, when it pauses or finishes: about 2 storage round
            trips per resume instead of 5 on our savers, but a sweeper that dies
            mid-run leaves the thread at its approval (the decision stays
            recorded; another sweeper re-runs the steps after it, one lease
            later) and the run holds no run lease while it runs. For short
            graphs after the approval.

    Example:
        ``ApprovalSweeper(graph).run_forever(interval=5)``
    """

    def __init__(
        self,
        graph: CompiledGraph,
        *,
        clock: Clock | None = None,
        lease: timedelta = DEFAULT_LEASE,
        page_size: int = 100,
        owner: str | None = None,
        kinds: Sequence[str] = SWEPT_KINDS,
        concurrency: int = 1,
        durability: str | None = None,
    ) -> None:
        if durability not in DURABILITIES:
            raise ValueError(f"durability must be one of {DURABILITIES}, not {durability!r}")
        self.graph = graph
        self.clock = clock
        self.lease = lease
        self.page_size = page_size
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.kinds = tuple(kinds)
        self.concurrency = max(1, int(concurrency))
        self.durability = durability
        self._env: Env | None = None
        self._stop = threading.Event()

    @property
    def env(self) -> Env:
        if self._env is None:
            self._env = _env(self.graph)
        return self._env

    def _claim(self, now: datetime) -> ClaimDueWaits:
        return ClaimDueWaits(
            now=now,
            owner=self.owner,
            lease=self.lease,
            limit=self.page_size,
            kinds=list(self.kinds),
        )

    def _resolve_flow(
        self,
        entry: WaitEntry,
        now: datetime,
        native: bool,
        recorded: tuple[dict[str, Any], dict[str, Any] | None] | None = None,
    ) -> Flow[bool]:
        try:
            return (
                yield from traced_flow(
                    "approval.resume",
                    sweep_entry_flow(
                        entry,
                        now=now,
                        owner=self.owner,
                        lease=self.lease,
                        clock=self.clock,
                        native=native,
                        recorded=recorded,
                        durability=self.durability,
                    ),
                    approval_attributes(entry.thread_id, entry.interrupt_id, entry.value),
                )
            )
        except ThreadBusy as busy:
            # a run holds the thread (the saver's multitask="reject"): keep the
            # claim, so a sweep after the lease resumes it with the decision
            log.warning(
                "thread %r is busy (a run by %s holds it); resuming %s after the lease",
                entry.thread_id,
                busy.owner,
                entry.interrupt_id,
            )
            return False
        except Exception:
            # keep the claim: it expires after the lease and a later sweep retries
            log.exception("sweeping %s/%s failed", entry.thread_id, entry.interrupt_id)
            return False

    def _sweep_flow(self, native: bool) -> Flow[int]:
        resolved = 0
        seen: set[tuple[str, str]] = set()
        while True:
            now = now_of(self.clock)
            entries = yield from self._claim(now)
            fresh = list(
                {
                    (e.thread_id, e.interrupt_id): e
                    for e in entries
                    if (e.thread_id, e.interrupt_id) not in seen
                }.values()
            )
            if not fresh:
                current().set_attribute("langgraph_durable.resolved", resolved)
                return resolved
            seen.update((e.thread_id, e.interrupt_id) for e in fresh)
            # the page's timeout decisions: one compare-and-set round trip for all
            recorded = yield from record_timeouts_flow(fresh, now)
            flows = [
                self._resolve_flow(e, now, native, recorded.get((e.thread_id, e.interrupt_id)))
                for e in fresh
            ]
            if self.concurrency == 1:
                for flow in flows:
                    resolved += int((yield from flow))
            else:
                done = yield from RunAll(flows=flows, concurrency=self.concurrency)
                resolved += sum(int(d) for d in done)
            # a short page is not the end: concurrent sweepers' claims (row locks,
            # Redis shard entries leaving while paging) can make a page short while
            # due waits remain; only a claim with nothing new ends the sweep

    def run_once(self) -> int:
        """Resolve every wait due now; return how many threads were resumed."""
        flow = traced_flow("sweeper.pass", self._sweep_flow(self.env.backend.claims))
        return drive(flow, self.env)

    async def arun_once(self) -> int:
        """Async twin of :meth:`run_once`."""
        flow = traced_flow("sweeper.pass", self._sweep_flow(self.env.abackend.claims))
        return await adrive(flow, self.env)

    def run_forever(self, interval: float = 5.0, *, max_runs: int | None = None) -> None:
        """Call :meth:`run_once` every ``interval`` seconds until :meth:`stop`."""
        sweep_forever(self, interval, max_runs)

    async def arun_forever(self, interval: float = 5.0, *, max_runs: int | None = None) -> None:
        """Async twin of :meth:`run_forever`."""
        await asweep_forever(self, interval, max_runs)

    def stop(self) -> None:
        """Make :meth:`run_forever` / :meth:`arun_forever` return after the current sweep."""
        self._stop.set()
