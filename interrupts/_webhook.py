"""Webhook delivery of outbox events: the message, its signature, backoff, the POST.

A delivery is one ``POST`` of a JSON body with three headers:

* ``X-Durable-Event-Id``: the event's stable id (a receiver de-duplicates by it:
  delivery is at least once);
* ``X-Durable-Timestamp``: seconds since the epoch when the request was signed;
* ``X-Durable-Signature``: ``v1=`` and the hex HMAC-SHA256, keyed by the
  webhook's secret, of ``<timestamp>.<body>`` (the raw body bytes).

:func:`verify_signature` is the receiver's check. The body is Slack-compatible
(``text`` and ``blocks``, so a Slack incoming webhook shows it as it is) and
carries the event itself under ``event`` for programs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from langgraph_durable.checkpointers import OutboxEvent

EVENT_ID_HEADER = "X-Durable-Event-Id"
TIMESTAMP_HEADER = "X-Durable-Timestamp"
SIGNATURE_HEADER = "X-Durable-Signature"
SIGNATURE_VERSION = "v1"


@dataclass(frozen=True)
class WebhookTarget:
    """One webhook: where events are POSTed and the secret that signs them.

    Attributes:
        url: An ``http://`` or ``https://`` URL.
        secret: The HMAC key; ``None`` sends unsigned requests.
        timeout: Seconds a POST may take before it counts as failed.
        include_event: Send the event itself under ``event`` beside the Slack
            fields; ``False`` sends ``text`` and ``blocks`` only.
    """

    url: str
    secret: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    include_event: bool = True

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"webhook url must start with http:// or https://: {self.url!r}")
        if self.timeout <= 0:
            raise ValueError(f"webhook timeout must be positive, got {self.timeout!r}")


@dataclass(frozen=True)
class DeliveryRetry:
    """How often and how soon a failed delivery is tried again.

    Attempt ``n`` (1-based) that fails is retried after
    ``min(max_delay, base_delay * 2 ** (n - 1))`` scaled by a random factor in
    ``[1 - jitter, 1]``, so workers that failed together do not retry together.
    After ``max_attempts`` failed attempts the event is parked. The defaults
    keep trying for about one to two hours (2 s doubling to 10 minutes, 20
    attempts) before an event is parked.
    """

    max_attempts: int = 20
    base_delay: timedelta = timedelta(seconds=2)
    max_delay: timedelta = timedelta(minutes=10)
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts!r}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be within [0, 1], got {self.jitter!r}")
        if self.base_delay <= timedelta(0) or self.max_delay < self.base_delay:
            raise ValueError("base_delay must be positive and max_delay at least base_delay")

    def delay(self, attempt: int, rng: random.Random | None = None) -> timedelta:
        """The wait after failed attempt ``attempt`` (1-based)."""
        exp: timedelta = min(self.max_delay, self.base_delay * (1 << min(max(attempt - 1, 0), 40)))
        factor = 1 - self.jitter * (rng or random).random()
        return exp * factor


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Durable-Signature`` value of ``body`` signed at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


def verify_signature(
    secret: str,
    *,
    body: bytes,
    timestamp: str | int,
    signature_header: str,
    tolerance: timedelta | None = timedelta(minutes=5),
    now: float | None = None,
) -> bool:
    """Whether a received request was signed by a sender holding ``secret``.

    Args:
        secret: The webhook's secret.
        body: The request body exactly as received (bytes, before any parsing).
        timestamp: The ``X-Durable-Timestamp`` header.
        signature_header: The ``X-Durable-Signature`` header.
        tolerance: How old (or how far ahead) a timestamp may be; ``None``
            accepts any age (then only the event id guards against replays).
        now: Seconds since the epoch (default: the current time).

    Returns:
        ``True`` iff the signature matches (compared in constant time) and the
        timestamp is within ``tolerance``.
    """
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    if tolerance is not None:
        current = time.time() if now is None else now
        if abs(current - ts) > tolerance.total_seconds():
            return False
    expected = signature(secret, ts, body)
    return any(hmac.compare_digest(expected, part.strip()) for part in signature_header.split(","))


_TITLES = {
    "requested": "Approval requested",
    "escalated": "Approval escalated",
    "expiring": "Approval about to expire",
    "timed_out": "Approval timed out",
    "decided": "Approval decided",
    "reminded": "Reminder: approval waiting",
}


def _decision_words(decision: dict[str, Any]) -> str:
    if decision.get("type") == "batch_complete":
        return "batch complete"
    kind = decision.get("decision") or decision.get("kind")
    words = str(kind) if kind else ("approved" if decision.get("approved") else "rejected")
    by = decision.get("by")
    rule = decision.get("rule")
    comment = decision.get("comment")
    return (
        words
        + (f" by {by}" if by else "")
        + (f" ({rule})" if rule else "")
        + (f": {comment}" if comment else "")
    )


def describe(event: OutboxEvent) -> str:
    """One line saying what happened, for the message's ``text``."""
    p = event.payload
    head = f"{_TITLES.get(event.kind, event.kind)}: thread {event.thread_id}"
    parts: list[str] = []
    if event.kind in ("requested", "escalated", "expiring"):
        who = ", ".join(p.get("approvers") or []) or "anyone"
        parts.append(f"for {who}")
        if p.get("escalation_level"):
            parts.append(f"level {p['escalation_level']}")
        if p.get("deadline"):
            parts.append(f"deadline {p['deadline']}")
    elif event.kind in ("decided", "timed_out"):
        parts.append(_decision_words(p.get("decision") or {}))
    elif event.kind == "reminded":
        parts.append(str(p.get("reason") or "reminded"))
    return head + (" - " + "; ".join(parts) if parts else "")


def mrkdwn(text: str) -> str:
    """``text`` as Slack shows it literally: ``&``, ``<`` and ``>`` escaped.

    Unescaped, a thread id or a comment someone typed would be Slack markup: a
    link labelled as anything (``<https://...|Approve>``) or ``<!channel>``.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def message(event: OutboxEvent, link: str | None = None) -> dict[str, Any]:
    """The Slack-compatible JSON body of ``event`` (``text``, ``blocks``, ``event``).

    ``text`` and ``blocks`` show what people typed as text (:func:`mrkdwn`);
    ``event`` carries the values exactly as recorded, for programs.
    """
    text = mrkdwn(describe(event))
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": mrkdwn(f"approval `{event.approval_id}` - event `{event.event_id}`"),
                }
            ],
        },
    ]
    if link:
        text += f"\n<{link}|Open the approval>"
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open the approval"},
                        "url": link,
                    }
                ],
            }
        )
    return {
        "text": text,
        "blocks": blocks,
        "event": {
            "id": event.event_id,
            "kind": event.kind,
            "thread_id": event.thread_id,
            "approval_id": event.approval_id,
            "created_at": None if event.created_at is None else event.created_at.isoformat(),
            "link": link,
            **event.payload,
        },
    }


@dataclass(frozen=True)
class DecisionLinks:
    """Signed decision links in the messages of pending approvals.

    The messages of ``requested``, ``escalated``, ``expiring`` and ``reminded``
    events carry a :func:`~langgraph_durable.interrupts.decision_link` to the
    approval, made when the event is sent (an approval decided by then gets
    no link). Whoever can read the message can use the link once, as
    ``decider``: send links only to channels the decider's people read.

    Attributes:
        base_url: Where the approval service is reachable.
        decider: The user id the links decide as.
        roles: The decider's roles (the graph's policy checks them).
        secret: The service's signing key (default ``$LANGGRAPH_DURABLE_LINK_SECRET``).
    """

    base_url: str
    decider: str
    roles: tuple[str, ...] = ()
    secret: str | None = field(default=None, repr=False)


class DeliveryFailed(Exception):
    """A POST that did not get a 2xx answer (the reason says what happened)."""


def encode(event: OutboxEvent, link: str | None = None, *, include_event: bool = True) -> bytes:
    """The body bytes of ``event`` (compact JSON, UTF-8)."""
    body = message(event, link)
    if not include_event:
        body.pop("event")
    return json.dumps(body, separators=(",", ":"), default=str).encode()


def headers_for(target: WebhookTarget, event: OutboxEvent, body: bytes) -> dict[str, str]:
    """The request headers, signed with ``target``'s secret if it has one."""
    ts = int(time.time())
    out = {
        "Content-Type": "application/json",
        "User-Agent": "langgraph-durable-notifier",
        EVENT_ID_HEADER: event.event_id,
        TIMESTAMP_HEADER: str(ts),
    }
    if target.secret:
        out[SIGNATURE_HEADER] = signature(target.secret, ts, body)
    return out


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # a POST followed is a GET without the body, to wherever the answer points
    # (an address inside the network included): the event did not arrive
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def post(target: WebhookTarget, body: bytes, headers: dict[str, str]) -> None:
    """POST ``body``; raises :class:`DeliveryFailed` unless the answer is 2xx.

    A redirect is not followed: it is a failed delivery, retried like any other.
    """
    request = urllib.request.Request(target.url, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=target.timeout) as answer:
            status = answer.status
    except urllib.error.HTTPError as exc:
        moved = " (redirects are not followed)" if 300 <= exc.code < 400 else ""
        raise DeliveryFailed(f"{target.url} answered {exc.code}{moved}") from None
    except (OSError, ValueError) as exc:
        raise DeliveryFailed(f"{target.url}: {exc}") from None
    if not 200 <= status < 300:
        raise DeliveryFailed(f"{target.url} answered {status}")


@dataclass(frozen=True)
class NotifyConfig:
    """What ``langgraph-durable worker`` delivers notifications with.

    Attributes:
        targets: The webhooks (every event goes to each).
        retry: The retry policy.
        expiring_within: Announce waits whose deadline is this near (``None``: never).
        links: Decision links in the messages, or ``None``.
    """

    targets: tuple[WebhookTarget, ...] = ()
    retry: DeliveryRetry = field(default_factory=DeliveryRetry)
    expiring_within: timedelta | None = None
    links: DecisionLinks | None = None


def load_notify_config(path: str | Path) -> NotifyConfig:
    """Read a notifications config file (JSON).

    Shape: ``{"webhooks": [{"url": ..., "secret": ..., "timeout": 10, "include_event": true}],
    "max_attempts": 20, "base_delay": 2, "max_delay": 600, "expiring_within": 900,
    "links": {"base_url": ..., "decider": ..., "roles": [...], "secret": ...}}``
    (durations in seconds; everything but ``webhooks`` optional).

    Raises:
        ValueError: the file is not such JSON, naming the file and what is wrong.
    """
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"notifications config {path}: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("webhooks"), list):
        raise ValueError(f"notifications config {path}: expected an object with a 'webhooks' list")
    try:
        targets = tuple(
            WebhookTarget(
                url=str(w["url"]),
                secret=w.get("secret"),
                timeout=float(w.get("timeout", 10)),
                include_event=bool(w.get("include_event", True)),
            )
            for w in raw["webhooks"]
        )
        defaults = DeliveryRetry()
        retry = DeliveryRetry(
            max_attempts=int(raw.get("max_attempts", defaults.max_attempts)),
            base_delay=timedelta(
                seconds=float(raw.get("base_delay", defaults.base_delay.total_seconds()))
            ),
            max_delay=timedelta(
                seconds=float(raw.get("max_delay", defaults.max_delay.total_seconds()))
            ),
        )
        within = raw.get("expiring_within")
        links = raw.get("links")
        return NotifyConfig(
            targets=targets,
            retry=retry,
            expiring_within=None if within is None else timedelta(seconds=float(within)),
            links=None
            if links is None
            else DecisionLinks(
                base_url=str(links["base_url"]),
                decider=str(links["decider"]),
                roles=tuple(str(r) for r in links.get("roles") or ()),
                secret=links.get("secret"),
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"notifications config {path}: {exc}") from None
