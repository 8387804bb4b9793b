"""Delivers the outbox's events to webhooks, at least once.

Written once as async code; the sync dispatcher is generated from it
(``tools/async_to_sync.py``).

A pass (:meth:`AsyncNotificationDispatcher.arun_once`) first adds an
``expiring`` event for each wait whose deadline is near (under an id derived
from the wait, so a restart adds none twice), then claims due events with a
lease and POSTs each to every webhook. An event every webhook accepted is
marked delivered; otherwise it is retried after a bounded exponential backoff
with jitter (and the pass's other events are left, unsent and uncounted, for
the next pass: a webhook that is down stalls a pass by one timeout, not one
per event), and parked once its attempts are spent (it stays in the outbox,
counted in the worker's health line, until ``notifications --retry-parked``).
A worker that dies between the POST and the mark leaves its claim to expire:
the next pass sends the event again, with the same id.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph_durable.checkpointers import (
    AsyncOutbox,
    AsyncWaitIndex,
    OutboxEvent,
    event_id,
    feature,
)
from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._errors import InterruptsError
from langgraph_durable.interrupts._link_calls_async import adecision_link
from langgraph_durable.interrupts._links import link_secret
from langgraph_durable.interrupts._types import Saver
from langgraph_durable.interrupts._webhook import (
    DecisionLinks,
    DeliveryFailed,
    DeliveryRetry,
    WebhookTarget,
    encode,
    headers_for,
    post,
)

log = logging.getLogger("langgraph_durable.interrupts.notifications")

WAIT_KINDS = ("approval", "batch")
EXPIRING_SCAN = 500
"""Waits read per kind and pass when looking for deadlines that are near."""
ANNOUNCED_KEPT = 100_000
"""Expiring ids a dispatcher remembers before it starts over."""

PENDING_KINDS = ("requested", "escalated", "expiring", "reminded")
"""Events about an approval still waiting: their messages may carry a decision link."""


@dataclass(frozen=True)
class DispatchPass:
    """What one pass did.

    Attributes:
        announced: ``expiring`` events added.
        delivered: Events every webhook accepted.
        retried: Events that failed and will be tried again.
        parked: Events that failed their last attempt.
        held: Claimed events left for the next pass, unsent and uncounted,
            because an earlier delivery of this pass failed.
    """

    announced: int = 0
    delivered: int = 0
    retried: int = 0
    parked: int = 0
    held: int = 0


class AsyncNotificationDispatcher:
    """Claims outbox events and POSTs them to webhooks (asyncio).

    Args:
        saver: One of our savers (it implements the outbox protocol).
        targets: The webhooks; every event goes to each of them.
        retry: Attempts and backoff (default :class:`DeliveryRetry`).
        lease: How long a claim lasts; a worker that dies holding one leaves
            it to expire, then another worker sends the event again.
        batch: Events claimed per pass.
        expiring_within: Announce waits whose deadline is at most this far
            off (``None``: no ``expiring`` events).
        links: Put a signed decision link in the messages of pending
            approvals (``None``: no links).
        owner: This worker's name in claims (default: host, pid and a nonce).

    Raises:
        TypeError: ``saver`` has no outbox.
        ValueError: no webhook, or a lease or batch that is not positive.
        InvalidInput: ``links`` without a secret (none given, none in the environment).
    """

    def __init__(
        self,
        saver: Saver,
        targets: Sequence[WebhookTarget],
        *,
        retry: DeliveryRetry | None = None,
        lease: timedelta = timedelta(seconds=60),
        batch: int = 50,
        expiring_within: timedelta | None = None,
        links: DecisionLinks | None = None,
        owner: str | None = None,
    ) -> None:
        outbox = feature(saver, AsyncOutbox)
        if outbox is None:
            raise TypeError(
                f"{type(saver).__name__} has no notification outbox: use one of the "
                "langgraph_durable savers (PostgreSQL or Redis)"
            )
        if not targets:
            raise ValueError("targets: give at least one webhook")
        if lease <= timedelta(0):
            raise ValueError(f"lease must be positive, got {lease!r}")
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch!r}")
        self.saver: Any = saver
        self.outbox: AsyncOutbox = outbox
        # a saver with an outbox has the wait index too (the expiring scan)
        self.waits: Any = feature(saver, AsyncWaitIndex)
        self.targets = tuple(targets)
        self.retry = retry or DeliveryRetry()
        self.lease = lease
        self.batch = batch
        self.expiring_within = expiring_within
        self.links = links
        self._link_key = None if links is None else link_secret(links.secret)
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._rng = random.Random()
        # expiring events this dispatcher added: not offered to the outbox again
        self._announced: set[str] = set()

    async def arun_once(self) -> DispatchPass:
        """Announce expiring waits, then deliver the due events once each."""
        now = datetime.now(timezone.utc)
        announced = await self._aannounce_expiring(now)
        events = await self.outbox.aclaim_notifications(
            now=now, owner=self.owner, lease=self.lease, limit=self.batch
        )
        outcomes: list[str] = []
        # past half the lease, the rest are left for the next pass: a slow webhook
        # never lets a claim run out while this worker still means to send it
        until = time.monotonic() + self.lease.total_seconds() / 2
        for event in events:
            if "retried" in outcomes or "parked" in outcomes or time.monotonic() > until:
                # a webhook is failing (or slow): the rest wait for the next pass,
                # uncounted, so one pass waits out at most one failing POST
                await self.outbox.arelease_notification(
                    event_id=event.event_id, thread_id=event.thread_id, owner=self.owner
                )
                outcomes.append("held")
            else:
                outcomes.append(await self._adeliver(event))
        return DispatchPass(
            announced=announced,
            delivered=outcomes.count("delivered"),
            retried=outcomes.count("retried"),
            parked=outcomes.count("parked"),
            held=outcomes.count("held"),
        )

    async def _aannounce_expiring(self, now: datetime) -> int:
        if self.expiring_within is None:
            return 0
        horizon = now + self.expiring_within
        events: list[OutboxEvent] = []
        for kind in WAIT_KINDS:
            # oldest deadline first: the near ones come right after the overdue
            for entry in await self.waits.alist_waits(kind=kind, limit=EXPIRING_SCAN):
                deadline = entry.info.deadline
                if deadline is None or deadline > horizon:
                    break
                if deadline <= now:
                    continue  # the sweeper's timeout announces it
                event = expiring_event(entry)
                if event.event_id not in self._announced:
                    events.append(event)
        if not events:
            return 0
        added: int = await self.outbox.aadd_notifications(events)
        if len(self._announced) > ANNOUNCED_KEPT:
            self._announced.clear()  # the outbox's ids still keep each event once
        self._announced.update(e.event_id for e in events)
        return added

    async def _alink(self, event: OutboxEvent) -> str | None:
        if self.links is None or event.kind not in PENDING_KINDS:
            return None
        decider = Decider(id=self.links.decider, roles=self.links.roles)
        try:
            return await adecision_link(
                self.saver,
                event.thread_id,
                decider=decider,
                base_url=self.links.base_url,
                secret=self._link_key,
                approval_id=event.approval_id,
            )
        except InterruptsError as exc:
            # decided, escalated or gone since: the message goes without a link
            log.info("no decision link for %s: %s", event.event_id, exc)
            return None

    async def _adeliver(self, event: OutboxEvent) -> str:
        link = await self._alink(event)
        bodies = {flag: encode(event, link, include_event=flag) for flag in (True, False)}
        failures: list[str] = []
        for target in self.targets:
            body = bodies[target.include_event]
            headers = headers_for(target, event, body)
            try:
                await asyncio.to_thread(post, target, body, headers)  # async-only
                # sync-only: post(target, body, headers)
            except DeliveryFailed as exc:
                failures.append(str(exc))
        if not failures:
            await self.outbox.asettle_notification(
                event_id=event.event_id, thread_id=event.thread_id, owner=self.owner, delivered=True
            )
            return "delivered"
        error = "; ".join(failures)
        if event.attempts >= self.retry.max_attempts:
            log.error(
                "notification %s parked after %d attempts: %s",
                event.event_id,
                event.attempts,
                error,
            )
            retry_at = None
        else:
            retry_at = datetime.now(timezone.utc) + self.retry.delay(event.attempts, self._rng)
            log.warning(
                "notification %s attempt %d failed (%s); retry at %s",
                event.event_id,
                event.attempts,
                error,
                retry_at.isoformat(timespec="seconds"),
            )
        await self.outbox.asettle_notification(
            event_id=event.event_id,
            thread_id=event.thread_id,
            owner=self.owner,
            delivered=False,
            error=error[:2000],
            retry_at=retry_at,
        )
        return "parked" if retry_at is None else "retried"


def expiring_event(entry: Any) -> OutboxEvent:
    """The ``expiring`` event of a wait index entry (one id per approval)."""
    info = entry.info
    return OutboxEvent(
        event_id=event_id("expiring", entry.thread_id, entry.interrupt_id),
        kind="expiring",
        thread_id=entry.thread_id,
        approval_id=entry.interrupt_id,
        payload={
            "wait_kind": info.kind,
            "deadline": None if info.deadline is None else info.deadline.isoformat(),
            "approvers": list(info.approvers),
            "escalation_level": info.escalation_level,
            "checkpoint_ns": entry.checkpoint_ns,
        },
    )
