"""What the approval service does, transport aside: the library's own calls, checked input.

The JSON API and the console both come here, and here only the library's
operator functions decide (``approve``, ``reject``, ``edit``, ``respond``,
``decide``): the service adds no second decision path. Those calls are sync
(they resume the graph with ``invoke``), so they run in worker threads.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from starlette.concurrency import run_in_threadpool

from langgraph_durable.checkpointers import Outbox, WaitEntry, feature
from langgraph_durable.interrupts._audit_calls import audit_log
from langgraph_durable.interrupts._authz import AuthRequest, Decider, policy_of
from langgraph_durable.interrupts._batch_calls import decide
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_calls import approve, reject
from langgraph_durable.interrupts._driver import Env, Flow
from langgraph_durable.interrupts._edit import edit, respond
from langgraph_durable.interrupts._errors import InterruptsError, InvalidInput
from langgraph_durable.interrupts._inbox import (
    INBOX_KINDS,
    _item,
    batch_items_flow,
)
from langgraph_durable.interrupts._inbox_calls import approval_health, pending_approvals
from langgraph_durable.interrupts._links import (
    LinkClaim,
    LinkRefused,
    check_link_flow,
    link_secret,
    read_token,
)
from langgraph_durable.interrupts._models import ApprovalItem
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._records import section
from langgraph_durable.interrupts._requests import ListWaits
from langgraph_durable.interrupts._store import Backend
from langgraph_durable.interrupts._thread_states import run_health, thread_state
from langgraph_durable.interrupts._timeline import thread_timeline

DECISIONS = ("approve", "reject", "edit", "respond")
INBOX_SCAN = 10_000
"""Waits of each kind an inbox request considers at most: the soonest deadlines (overdue
first), so a page costs a bounded read however many approvals wait."""
DEFAULT_ADMIN_ROLES = ("admin",)
"""Roles whose holders read every thread and audit trail (deciding stays the policy's)."""
FIELDS = frozenset({"decision", "comment", "arguments", "text", "item", "approval_id"})


Reader = Decider | LinkClaim
"""Who reads a thread: a signed-in decider, or a verified decision link."""


class UnknownThread(InterruptsError, LookupError):
    """No checkpoint of this thread is stored.

    Attributes:
        thread_id: The thread asked for.
    """

    def __init__(self, *, thread_id: str, hidden: bool = False) -> None:
        self.thread_id = thread_id
        # to whoever may not read every thread, one answer for both: a thread id
        # says nothing about whether it exists
        what = "is not stored, or not one you may see" if hidden else "is not stored"
        super().__init__(f"thread {thread_id!r} {what}")


@dataclass(frozen=True)
class DecisionRequest:
    """A decision as the API receives it, checked."""

    decision: str
    comment: str | None = None
    arguments: Any = None
    text: str | None = None
    item: str | None = None
    approval_id: str | None = None


def _optional_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidInput(parameter=name, reason=f"must be a string, got {type(value).__name__}")
    return value


def parse_decision(body: Any) -> DecisionRequest:
    """Check a decision body; every mistake names its field.

    Raises:
        InvalidInput: not an object, unknown field, wrong type or missing value.
    """
    if not isinstance(body, dict):
        raise InvalidInput(parameter="body", reason="must be a JSON object")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise InvalidInput(parameter=unknown[0], reason=f"unknown field; expected {sorted(FIELDS)}")
    decision = body.get("decision")
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise InvalidInput(
            parameter="decision", reason=f"must be one of {list(DECISIONS)}, got {decision!r}"
        )
    out = DecisionRequest(
        decision=decision,
        comment=_optional_str(body, "comment"),
        arguments=body.get("arguments"),
        text=_optional_str(body, "text"),
        item=_optional_str(body, "item"),
        approval_id=_optional_str(body, "approval_id"),
    )
    if decision == "edit" and out.arguments is None:
        raise InvalidInput(parameter="arguments", reason='an "edit" decision needs the arguments')
    if decision == "respond" and not out.text:
        raise InvalidInput(parameter="text", reason='a "respond" decision needs the text')
    return out


def encode_cursor(item: ApprovalItem) -> str:
    """An opaque cursor after ``item`` in inbox order."""
    key = [item.deadline.isoformat() if item.deadline else None, item.thread_id, item.approval_id]
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def _first_order(pair: tuple[ApprovalItem, WaitEntry]) -> tuple[bool, str, str, str]:
    return _order(pair[0])


def _order(item: ApprovalItem) -> tuple[bool, str, str, str]:
    deadline = item.deadline.isoformat() if item.deadline else ""
    return (item.deadline is None, deadline, item.thread_id, item.approval_id)


def _after(cursor: str) -> tuple[bool, str, str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        deadline, thread_id, approval_id = json.loads(raw)
    except (ValueError, TypeError):
        raise InvalidInput(parameter="cursor", reason="not a cursor this service made") from None
    # a forged cursor of other types would fail later, comparing with the inbox's keys
    if not (deadline is None or isinstance(deadline, str)) or not all(
        isinstance(v, str) for v in (thread_id, approval_id)
    ):
        raise InvalidInput(parameter="cursor", reason="not a cursor this service made")
    return (deadline is None, deadline or "", thread_id, approval_id)


def jsonable(value: Any) -> Any:
    """``value`` with datetimes, timedeltas and models as JSON types."""
    return json.loads(json.dumps(value, default=_default))


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "total_seconds"):
        return value.total_seconds()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        return {k: getattr(value, k) for k in value.__dataclass_fields__}
    return str(value)


class ServiceOps:
    """The service's operations on one saver and graph.

    Args:
        saver: A sync checkpoint saver (the graph's).
        graph: The compiled graph whose approvals are decided (it is resumed).
        secret: The decision links' signing key, or ``None`` (links are refused).
        clock: Time source (tests).
    """

    def __init__(
        self,
        saver: Any,
        graph: Any,
        *,
        secret: str | bytes | None,
        clock: Clock | None,
        admin_roles: Collection[str] = DEFAULT_ADMIN_ROLES,
    ) -> None:
        self.saver = saver
        self.graph = graph
        self.clock = clock
        self.key = link_secret(secret) if secret is not None else None
        self.admin_roles = frozenset(admin_roles)

    def now(self) -> datetime:
        """The service's current time (UTC)."""
        return now_of(self.clock)

    def _may_decide(self, decider: Decider, item: ApprovalItem) -> bool:
        request = AuthRequest(
            thread_id=item.thread_id,
            approval_id=item.approval_id,
            kind=item.kind,
            request=item.request,
            approvers=tuple(item.approvers),
            escalation_level=item.escalation_level,
        )
        return bool(policy_of(self.graph, None)(decider, request))

    def is_admin(self, reader: Reader) -> bool:
        """Whether ``reader`` holds one of the roles that read every thread."""
        return isinstance(reader, Decider) and not self.admin_roles.isdisjoint(reader.roles)

    def _was_asked(self, decider: Decider, thread_id: str, timeline: list[Any]) -> bool:
        # any approval the thread raised, pending or past, at the level it was asked
        policy = policy_of(self.graph, None)
        for step in timeline:
            for intr in step.interrupts:
                if intr.kind not in INBOX_KINDS:
                    continue
                sec = section(intr.value)
                request = AuthRequest(
                    thread_id=thread_id,
                    approval_id=intr.interrupt_id,
                    kind=intr.kind,
                    request=sec.get("request", sec.get("items")),
                    approvers=tuple(intr.approvers),
                    escalation_level=intr.escalation_level,
                )
                if policy(decider, request):
                    return True
        return False

    def _check_reader(self, reader: Reader, thread_id: str, timeline: list[Any]) -> None:
        """Raise :class:`UnknownThread` unless ``reader`` may read the thread.

        An admin reads every thread; a link, its own thread; anyone else, the
        threads with an approval the graph's policy lets them decide (pending or
        past: a decided one stays readable to those it was asked of) and the
        threads they decided on.
        """
        if self.is_admin(reader):
            return
        if isinstance(reader, LinkClaim):
            if reader.thread_id == thread_id:
                return
        elif self._was_asked(reader, thread_id, timeline) or any(
            e.actor == reader.id and e.outcome == "recorded"
            for e in audit_log(self.saver, thread_id=thread_id)
        ):
            return
        raise UnknownThread(thread_id=thread_id, hidden=True)

    def _timeline(self, reader: Reader, thread_id: str) -> list[Any]:
        try:
            timeline = thread_timeline(self.saver, thread_id)
        except KeyError:
            raise UnknownThread(thread_id=thread_id, hidden=not self.is_admin(reader)) from None
        self._check_reader(reader, thread_id, timeline)
        return timeline

    def _inbox_flow(
        self,
        decider: Decider,
        approver: str | None,
        overdue: bool,
        limit: int,
        after: tuple[bool, str, str, str] | None,
    ) -> Flow[tuple[list[ApprovalItem], str | None]]:
        entries: list[WaitEntry] = []
        for kind in INBOX_KINDS:
            entries += yield from ListWaits(kind=kind, approver=approver, limit=INBOX_SCAN)
        now = self.now()
        kept: list[WaitEntry] = []
        # the waits as the index holds them; a batch's items are read for the page only
        for item, entry in sorted(((_item(e, []), e) for e in entries), key=_first_order):
            if (
                (not overdue or (item.deadline is not None and item.deadline <= now))
                and (after is None or _order(item) > after)
                and self._may_decide(decider, item)
            ):
                kept.append(entry)
                if len(kept) > limit:
                    break
        page = []
        for entry in kept[:limit]:
            batch = (yield from batch_items_flow(entry)) if entry.info.kind == "batch" else []
            page.append(_item(entry, batch))
        more = encode_cursor(page[-1]) if len(kept) > limit else None
        return page, more

    async def inbox(
        self,
        decider: Decider,
        *,
        approver: str | None = None,
        overdue: bool = False,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[ApprovalItem], str | None]:
        """Pending approvals ``decider`` may decide: overdue first, then by deadline.

        At most :data:`INBOX_SCAN` waits of each kind (the soonest deadlines) are
        considered, and only the page's batches have their items read.
        """
        after = _after(cursor) if cursor else None
        flow = self._inbox_flow(decider, approver, overdue, limit, after)
        return await run_in_threadpool(drive, flow, Env(self.saver))

    def _known(self, thread_id: str) -> None:
        """Raise :class:`UnknownThread` when no checkpoint of the thread is stored."""
        if self.saver.get_tuple({"configurable": {"thread_id": thread_id}}) is None:
            raise UnknownThread(thread_id=thread_id)

    def _thread(self, reader: Reader, thread_id: str) -> dict[str, Any]:
        timeline = self._timeline(reader, thread_id)
        state = thread_state(self.saver, thread_id, clock=self.clock)
        pending = pending_approvals(self.saver, thread_id=thread_id)
        decisions = [
            {"approval_id": i.interrupt_id, **(i.decision or {})}
            for e in timeline
            for i in e.interrupts
            if i.decision is not None
        ]
        return {
            "thread_id": thread_id,
            "state": state,
            "pending": pending,
            "decisions": _unique(decisions),
            "timeline": timeline,
        }

    async def thread(self, reader: Reader, thread_id: str) -> dict[str, Any]:
        """State, pending requests (full payload), decisions with comments, timeline.

        Raises:
            UnknownThread: not stored, or not a thread ``reader`` may read.
        """
        return await run_in_threadpool(self._thread, reader, thread_id)

    def _audit(self, reader: Reader, thread_id: str) -> list[Any]:
        if not self.is_admin(reader):
            self._timeline(reader, thread_id)
        entries = audit_log(self.saver, thread_id=thread_id)
        if not entries:
            # an unknown thread is a 404, not an empty trail
            self._known(thread_id)
        return entries

    async def audit(self, reader: Reader, thread_id: str) -> list[Any]:
        """The thread's audit trail, oldest first (who may read it: as :meth:`thread`)."""
        return await run_in_threadpool(self._audit, reader, thread_id)

    def _health(self) -> dict[str, Any]:
        approvals = approval_health(self.saver, clock=self.clock)
        runs = run_health(self.saver, clock=self.clock)
        age = approvals.oldest_overdue_age
        return {
            "waiting": approvals.waiting,
            "overdue": approvals.overdue,
            "oldest_overdue_s": None if age is None else age.total_seconds(),
            "running": runs.running,
            "orphaned": runs.orphaned,
            "parked": runs.parked,
            **self._outbox_counts(),
            "checked_at": approvals.checked_at.isoformat(),
        }

    def _outbox_counts(self) -> dict[str, Any]:
        # notifications waiting for delivery, and parked ones (past their attempts)
        outbox = feature(self.saver, Outbox)
        if outbox is None:
            return {}
        counts = outbox.notification_counts()
        return {"notifications_pending": counts.pending, "notifications_parked": counts.parked}

    async def health(self) -> dict[str, Any]:
        """Approvals waiting and overdue; runs running, orphaned and parked."""
        return await run_in_threadpool(self._health)

    def _decide(self, decider: Decider, thread_id: str, req: DecisionRequest) -> dict[str, Any]:
        config = {"configurable": {"thread_id": thread_id}}
        who: dict[str, Any] = {"by": decider.id, "roles": list(decider.roles), "clock": self.clock}
        pending = pending_approvals(self.saver, thread_id=thread_id)
        if not pending and not req.approval_id:
            self._known(thread_id)
        batch = next((p for p in pending if p.kind == "batch"), None)
        if req.item is not None or (batch is not None and len(pending) == 1):
            return self._decide_item(decider, thread_id, req, batch)
        common: dict[str, Any] = {**who, "approval_id": req.approval_id, "comment": req.comment}
        if req.decision == "approve":
            approve(self.graph, config, **common)
        elif req.decision == "reject":
            reject(self.graph, config, **common)
        elif req.decision == "edit":
            edit(self.graph, config, args=req.arguments, **common)
        else:
            common.pop("comment")
            respond(self.graph, config, text=req.text or "", **common)
        approval_id = req.approval_id or (pending[0].approval_id if len(pending) == 1 else None)
        return self._recorded(thread_id, approval_id)

    def _decide_item(
        self, decider: Decider, thread_id: str, req: DecisionRequest, batch: ApprovalItem | None
    ) -> dict[str, Any]:
        if req.item is None:
            raise InvalidInput(
                parameter="item", reason="the thread waits on a batch: name the item"
            )
        value: Any = req.decision
        if req.decision == "edit":
            value = {"type": "edit", "args": req.arguments}
        elif req.decision == "respond":
            value = {"type": "respond", "message": req.text}
        batch_id = req.approval_id or (batch.approval_id if batch else None)
        result = decide(
            self.graph,
            {"configurable": {"thread_id": thread_id}},
            {req.item: value},
            by=decider.id,
            roles=list(decider.roles),
            comment=req.comment,
            batch_id=batch_id,
            clock=self.clock,
        )
        return {
            "thread_id": thread_id,
            "approval_id": batch_id,
            "item": req.item,
            "recorded": list(result.applied),
            "already_decided": result.already_decided,
            "completed": bool(result.completed),
        }

    def _recorded(self, thread_id: str, approval_id: str | None) -> dict[str, Any]:
        record = None
        if approval_id is not None:
            got = Backend(self.saver).get_decisions(thread_id, [approval_id])
            record = got.get(approval_id)
        return {"thread_id": thread_id, "approval_id": approval_id, "decision": record}

    async def decide(self, decider: Decider, thread_id: str, body: Any) -> dict[str, Any]:
        """Record ``decider``'s decision through the library, which resumes the run."""
        req = parse_decision(body)
        return await run_in_threadpool(self._decide, decider, thread_id, req)

    def _check_link(self, thread_id: str, token: str, action: str) -> LinkClaim:
        if self.key is None:
            raise LinkRefused(reason="this service has no link secret configured")
        if self.saver.get_tuple({"configurable": {"thread_id": thread_id}}) is None:
            # refused as on a stored thread, but nothing is written: an audit entry per
            # request would let anyone without a login store rows for any thread id
            claim = read_token(token, self.key, thread_id=thread_id, now=self.now())
            raise LinkRefused(
                reason="the approval is no longer pending",
                thread_id=thread_id,
                approval_id=claim.approval_id,
                by=claim.decider.id,
            )
        flow = check_link_flow(
            token, self.key, thread_id=thread_id, action=action, clock=self.clock
        )
        return drive(flow, Env(self.saver))

    async def open_link(self, thread_id: str, token: str) -> LinkClaim:
        """Verify a link opened on ``thread_id`` (a refusal is audited)."""
        return await run_in_threadpool(self._check_link, thread_id, token, "open")

    def _link_decide(
        self, thread_id: str, token: str, decision: str, comment: str | None
    ) -> dict[str, Any]:
        if decision not in ("approve", "reject"):
            raise InvalidInput(parameter="decision", reason="a link approves or rejects")
        claim = self._check_link(thread_id, token, decision)
        req = DecisionRequest(decision=decision, comment=comment, approval_id=claim.approval_id)
        return self._decide(claim.decider, thread_id, req)

    async def link_decide(
        self, thread_id: str, token: str, decision: str, comment: str | None
    ) -> dict[str, Any]:
        """Decide through a verified link, as its decider."""
        return await run_in_threadpool(self._link_decide, thread_id, token, decision, comment)


def _unique(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for d in decisions:
        if d["approval_id"] not in seen:
            seen.add(d["approval_id"])
            out.append(d)
    return out
