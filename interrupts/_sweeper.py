"""The sweeper: applies timeout rules and finishes resumes that a crash left undone."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langgraph.types import Command

from checkpointers import WaitEntry
from interrupts._approve import _env, pending_of, resume_value
from interrupts._clock import Clock, now_of, with_clock
from interrupts._driver import Env, Flow, adrive, drive, op
from interrupts._records import age_at_least, timeout_record, won

log = logging.getLogger("interrupts.sweeper")

DEFAULT_LEASE = timedelta(minutes=5)
SWEPT_KINDS = ("approval", "batch")


def sweep_entry_flow(
    entry: WaitEntry, *, now: datetime, owner: str, lease: timedelta, clock: Clock | None
) -> Flow[bool]:
    """Resolve one claimed wait; ``True`` when this call resumed the thread.

    The claim is released as *done* once the thread is resumed (or found already
    past the wait). It is kept, to expire after the lease, when someone else's
    fresh decision is being resumed by its maker, or when the resume failed, so
    a later sweep retries without spinning.
    """
    thread_id, approval_id = entry.thread_id, entry.interrupt_id
    if entry.info.kind == "batch":
        from interrupts._batch import batch_timeout_flow

        record = yield from batch_timeout_flow(entry, now=now, lease=lease)
    else:
        got = yield op("get_decisions", thread_id=thread_id, keys=[approval_id])
        record = got.get(approval_id)
        if record is None:
            if entry.info.deadline is None or entry.info.deadline > now:
                yield op("release_wait_claim", thread_id=thread_id, interrupt_id=approval_id,
                         owner=owner)
                return False
            mine = timeout_record(entry.value, approval_id, now)
            record = yield op("record_decision", thread_id=thread_id, key=approval_id,
                              decision=mine)
            if not won(record, mine) and not age_at_least(record, now, lease):
                return False  # a human just decided; they are resuming it
        elif not age_at_least(record, now, lease):
            return False
    if record is None:
        return False
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    state = yield op("get_state", config=config)
    if approval_id not in {i.id for i in pending_of(state, entry.info.kind)}:
        yield op("release_wait_claim", thread_id=thread_id, interrupt_id=approval_id,
                 owner=owner, done=True)
        return False
    if entry.info.kind == "batch":
        from interrupts._batch import batch_resume_value

        answer = yield from batch_resume_value(entry, record)
    else:
        answer = resume_value(record, entry.value)
    yield op("invoke", input=Command(resume={approval_id: answer}),
             config=with_clock(config, clock))
    yield op("release_wait_claim", thread_id=thread_id, interrupt_id=approval_id, owner=owner,
             done=True)
    return True


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

    Example:
        ``ApprovalSweeper(graph).run_forever(interval=5)``
    """

    def __init__(
        self,
        graph: Any,
        *,
        clock: Clock | None = None,
        lease: timedelta = DEFAULT_LEASE,
        page_size: int = 100,
        owner: str | None = None,
        kinds: Sequence[str] = SWEPT_KINDS,
    ) -> None:
        self.graph = graph
        self.clock = clock
        self.lease = lease
        self.page_size = page_size
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.kinds = tuple(kinds)
        self._env: Env | None = None
        self._stop = threading.Event()

    @property
    def env(self) -> Env:
        if self._env is None:
            self._env = _env(self.graph)
        return self._env

    def _claim(self, now: datetime) -> Any:
        return op("claim_due_waits", now=now, owner=self.owner, lease=self.lease,
                  limit=self.page_size, kinds=list(self.kinds))

    def _sweep_flow(self) -> Flow[int]:
        resolved = 0
        seen: set[tuple[str, str]] = set()
        while True:
            now = now_of(self.clock)
            entries = yield self._claim(now)
            fresh = [e for e in entries if (e.thread_id, e.interrupt_id) not in seen]
            if not fresh:
                return resolved
            for entry in fresh:
                seen.add((entry.thread_id, entry.interrupt_id))
                try:
                    done = yield from sweep_entry_flow(
                        entry, now=now, owner=self.owner, lease=self.lease, clock=self.clock
                    )
                except Exception:
                    # keep the claim: it expires after the lease and a later sweep retries
                    log.exception("sweeping %s/%s failed", entry.thread_id, entry.interrupt_id)
                    continue
                resolved += int(done)
            if len(entries) < self.page_size:
                return resolved

    def run_once(self) -> int:
        """Resolve every wait due now; return how many threads were resumed."""
        return drive(self._sweep_flow(), self.env)

    async def arun_once(self) -> int:
        """Async twin of :meth:`run_once`."""
        return await adrive(self._sweep_flow(), self.env)

    def run_forever(self, interval: float = 5.0, *, max_runs: int | None = None) -> None:
        """Call :meth:`run_once` every ``interval`` seconds until :meth:`stop`."""
        runs = 0
        while not self._stop.is_set() and (max_runs is None or runs < max_runs):
            started = time.monotonic()
            try:
                self.run_once()
            except Exception:
                log.exception("sweep failed; retrying in %ss", interval)
            runs += 1
            self._stop.wait(max(0.0, interval - (time.monotonic() - started)))

    async def arun_forever(self, interval: float = 5.0, *, max_runs: int | None = None) -> None:
        """Async twin of :meth:`run_forever`."""
        runs = 0
        while not self._stop.is_set() and (max_runs is None or runs < max_runs):
            started = time.monotonic()
            try:
                await self.arun_once()
            except Exception:
                log.exception("sweep failed; retrying in %ss", interval)
            runs += 1
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    def stop(self) -> None:
        """Make :meth:`run_forever` / :meth:`arun_forever` return after the current sweep."""
        self._stop.set()
