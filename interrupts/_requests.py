"""The requests of the decision flows: state reads, resumes and the saver's storage.

Each is a frozen dataclass of its call's arguments, typed by its result
(:class:`~langgraph_durable.interrupts._driver.Req`), and performs itself against
an :class:`~langgraph_durable.interrupts._driver.Env` with the sync or the async
methods. A flow writes ``got = yield from GetDecisions(thread_id=t, keys=[k])``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph_durable.checkpointers import WaitEntry
from langgraph_durable.checkpointers.runs import REJECT, held_by_a_live_run, run_policy
from langgraph_durable.interrupts._driver import Env, Flow, Req, adrive, drive
from langgraph_durable.interrupts._store import DecisionItem

Decisions = dict[str, dict[str, Any]]


# -- the thread's state and its runs ----------------------------------------------------
@dataclass(frozen=True)
class GetState(Req[Any]):
    """The thread's state: the graph's ``StateSnapshot``, or the saver's pending interrupts."""

    config: dict[str, Any]

    def run(self, env: Env) -> Any:
        return env.states.get_state(self.config)

    async def arun(self, env: Env) -> Any:
        return await env.states.aget_state(self.config)


@dataclass(frozen=True)
class RecentStates(Req[list[Any]]):
    """The thread's latest ``limit`` states, newest first."""

    config: dict[str, Any]
    limit: int

    def run(self, env: Env) -> list[Any]:
        return list(env.states.get_state_history(self.config, limit=self.limit))

    async def arun(self, env: Env) -> list[Any]:
        return [s async for s in env.states.aget_state_history(self.config, limit=self.limit)]


@dataclass(frozen=True)
class Invoke(Req[Any]):
    """Run the graph on ``input`` (a resume), with LangGraph's ``durability`` if given."""

    input: Any
    config: dict[str, Any]
    durability: str | None = None

    def run(self, env: Env) -> Any:
        if self.durability is None:
            return env.graph.invoke(self.input, self.config)
        return env.graph.invoke(self.input, self.config, durability=self.durability)

    async def arun(self, env: Env) -> Any:
        if self.durability is None:
            return await env.graph.ainvoke(self.input, self.config)
        return await env.graph.ainvoke(self.input, self.config, durability=self.durability)


def _rejecting(env: Env, config: dict[str, Any], name: str) -> tuple[Any, str | None]:
    """The graph's run leases, and the thread if a run of ``config`` rejects when busy."""
    leases = getattr(getattr(env.graph, "checkpointer", None), name, None)
    if leases is None:
        return None, None
    found = run_policy(config, leases.multitask, leases=True)
    if found is None or found[1].strategy != REJECT:
        return leases, None
    return leases, found[0]


@dataclass(frozen=True)
class ThreadBusyNow(Req[bool]):
    """Whether a resume would be turned away now (a saver or run with ``multitask="reject"``)."""

    config: dict[str, Any]

    def run(self, env: Env) -> bool:
        leases, thread_id = _rejecting(env, self.config, "run_leases")
        if thread_id is None:
            return False
        return held_by_a_live_run(leases.store.get_lease(thread_id=thread_id), leases.clock())

    async def arun(self, env: Env) -> bool:
        leases, thread_id = _rejecting(env, self.config, "arun_leases")
        if thread_id is None:
            return False
        record = await leases.store.aget_lease(thread_id=thread_id)
        return held_by_a_live_run(record, leases.clock())


@dataclass(frozen=True)
class RunAll(Req[list[Any]]):
    """Several flows at once (the resumes of a sweeper's page, a batch's items), in order."""

    flows: list[Flow[Any]]
    concurrency: int

    def run(self, env: Env) -> list[Any]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda f: drive(f, env), self.flows))

    async def arun(self, env: Env) -> list[Any]:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(flow: Flow[Any]) -> Any:
            async with gate:
                return await adrive(flow, env)

        return list(await asyncio.gather(*(one(f) for f in self.flows)))


# -- decisions and the audit trail --------------------------------------------------------
@dataclass(frozen=True)
class GetDecisions(Req[Decisions]):
    """The stored decisions of ``keys`` on the thread (the keys without one are absent)."""

    thread_id: str
    keys: Sequence[str]

    def run(self, env: Env) -> Decisions:
        return env.backend.get_decisions(self.thread_id, self.keys)

    async def arun(self, env: Env) -> Decisions:
        return await env.abackend.aget_decisions(self.thread_id, self.keys)


@dataclass(frozen=True)
class CountDecisions(Req[int]):
    """How many of ``keys`` have a stored decision on the thread."""

    thread_id: str
    keys: Sequence[str]

    def run(self, env: Env) -> int:
        return env.backend.count_decisions(self.thread_id, self.keys)

    async def arun(self, env: Env) -> int:
        return await env.abackend.acount_decisions(self.thread_id, self.keys)


@dataclass(frozen=True)
class RecordDecision(Req[dict[str, Any]]):
    """Compare-and-set ``decision`` (with its ``audit`` entry); the stored one."""

    thread_id: str
    key: str
    decision: dict[str, Any]
    audit: dict[str, Any] | None = None

    def run(self, env: Env) -> dict[str, Any]:
        return env.backend.record_decision(self.thread_id, self.key, self.decision, self.audit)

    async def arun(self, env: Env) -> dict[str, Any]:
        return await env.abackend.arecord_decision(
            self.thread_id, self.key, self.decision, self.audit
        )


@dataclass(frozen=True)
class RecordDecisions(Req[list[dict[str, Any]]]):
    """Compare-and-set several decisions together; the stored ones, in order."""

    items: Sequence[DecisionItem]

    def run(self, env: Env) -> list[dict[str, Any]]:
        return env.backend.record_decisions(self.items)

    async def arun(self, env: Env) -> list[dict[str, Any]]:
        return await env.abackend.arecord_decisions(self.items)


@dataclass(frozen=True)
class AppendAudit(Req[None]):
    """Append entries to the audit trail."""

    entries: Sequence[dict[str, Any]]

    def run(self, env: Env) -> None:
        env.backend.append_audit(self.entries)

    async def arun(self, env: Env) -> None:
        await env.abackend.aappend_audit(self.entries)


# -- the wait index and its claims --------------------------------------------------------
@dataclass(frozen=True)
class ListWaits(Req[list[WaitEntry]]):
    """Pending waits matching the filters, oldest deadline first."""

    kind: str | None = None
    approver: str | None = None
    thread_id: str | None = None
    limit: int | None = None

    def _filters(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "approver": self.approver,
            "thread_id": self.thread_id,
            "limit": self.limit,
        }

    def run(self, env: Env) -> list[WaitEntry]:
        return env.backend.list_waits(**self._filters())

    async def arun(self, env: Env) -> list[WaitEntry]:
        return await env.abackend.alist_waits(**self._filters())


@dataclass(frozen=True)
class WaitCounts(Req[tuple[int, int, "datetime | None"]]):
    """How many waits are pending, how many overdue, and the oldest one's deadline."""

    now: datetime
    kinds: Sequence[str] | None = None

    def run(self, env: Env) -> tuple[int, int, datetime | None]:
        return env.backend.wait_counts(now=self.now, kinds=self.kinds)

    async def arun(self, env: Env) -> tuple[int, int, datetime | None]:
        return await env.abackend.await_counts(now=self.now, kinds=self.kinds)


@dataclass(frozen=True)
class ClaimDueWaits(Req[list[WaitEntry]]):
    """Claim up to ``limit`` waits due at ``now`` for ``owner``, for ``lease``."""

    now: datetime
    owner: str
    lease: timedelta
    limit: int
    kinds: Sequence[str] | None = None

    def run(self, env: Env) -> list[WaitEntry]:
        return env.backend.claim_due_waits(
            now=self.now, owner=self.owner, lease=self.lease, limit=self.limit, kinds=self.kinds
        )

    async def arun(self, env: Env) -> list[WaitEntry]:
        return await env.abackend.aclaim_due_waits(
            now=self.now, owner=self.owner, lease=self.lease, limit=self.limit, kinds=self.kinds
        )


@dataclass(frozen=True)
class ReleaseWaitClaim(Req[None]):
    """Release ``owner``'s claim of a wait (``done``: the wait is resolved)."""

    thread_id: str
    interrupt_id: str
    owner: str
    done: bool = False

    def run(self, env: Env) -> None:
        env.backend.release_wait_claim(
            thread_id=self.thread_id,
            interrupt_id=self.interrupt_id,
            owner=self.owner,
            done=self.done,
        )

    async def arun(self, env: Env) -> None:
        await env.abackend.arelease_wait_claim(
            thread_id=self.thread_id,
            interrupt_id=self.interrupt_id,
            owner=self.owner,
            done=self.done,
        )
