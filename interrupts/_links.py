"""Signed decision links: a URL that lets one decider answer one approval, once.

The idea of Step Functions' task tokens: the link carries everything the service
needs to trust it (the thread, the approval's id and fingerprint, who decides,
until when), signed with HMAC-SHA256 under a secret the service shares. Nothing
is stored when a link is made; single use comes from the decision store, whose
compare-and-set makes the approval's decision once: a used link points at an
approval that is decided, and is refused like any second answer.

A link is refused (:class:`LinkRefused`) when its signature does not verify,
when it has expired, when it is opened for another thread or approval than the
one it names, or when the request it was made for has changed; every refusal
of a token that names a thread is written to that thread's audit trail.
The calls that make a link, ``decision_link`` / ``adecision_link``, are in
:mod:`._link_calls_async` (and its generated sync module).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, urlencode

from langgraph_durable.checkpointers import extract_wait
from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._clock import Clock, now_of
from langgraph_durable.interrupts._decision_audit import refusal_entry
from langgraph_durable.interrupts._driver import Flow
from langgraph_durable.interrupts._errors import InterruptsError, InvalidInput
from langgraph_durable.interrupts._inputs import decider_args
from langgraph_durable.interrupts._pending import not_pending_flow, pending_of, pick_pending
from langgraph_durable.interrupts._records import section
from langgraph_durable.interrupts._requests import AppendAudit, GetDecisions, GetState

LINK_SECRET_ENV = "LANGGRAPH_DURABLE_LINK_SECRET"
"""Environment variable read for the signing secret when ``secret=`` is not given."""

LINK_PATH = "/link/"
"""Where the approval service opens decision links (below its mount point)."""

DEFAULT_TTL = timedelta(days=1)
"""How long a link to an approval without a deadline stays valid."""

MIN_SECRET_BYTES = 16
UNVERIFIED_ID = 64
"""Characters of the approval id an altered token claims that its refusal's audit keeps."""
_CONTEXT = b"langgraph-durable decision link v1\x00"


class LinkRefused(InterruptsError, PermissionError):
    """A decision link that cannot be honoured; nothing was recorded.

    Attributes:
        reason: What is wrong with it (signature, expiry, another approval...).
        thread_id: The thread the token names, when it names one.
        approval_id: The approval the token names, when it names one.
        by: The decider the token names, when it names one.
    """

    def __init__(
        self,
        *,
        reason: str,
        thread_id: str | None = None,
        approval_id: str | None = None,
        by: str | None = None,
    ) -> None:
        self.reason = reason
        self.thread_id = thread_id
        self.approval_id = approval_id
        self.by = by
        where = f" (thread {thread_id!r})" if thread_id is not None else ""
        super().__init__(f"decision link refused{where}: {reason}")


@dataclass(frozen=True)
class LinkClaim:
    """What a verified link allows.

    Attributes:
        thread_id: The waiting thread.
        approval_id: The one approval (interrupt id) it may decide.
        fingerprint: The fingerprint of the request the link was made for.
        decider: Who decides through it.
        expires: When it stops being valid (the approval's deadline, UTC).
    """

    thread_id: str
    approval_id: str
    fingerprint: str | None
    decider: Decider
    expires: datetime


def link_secret(secret: str | bytes | None) -> bytes:
    """The signing key: ``secret``, else ``$LANGGRAPH_DURABLE_LINK_SECRET``.

    Raises:
        InvalidInput: no secret, or one shorter than 16 bytes.
    """
    if secret is None:
        secret = os.environ.get(LINK_SECRET_ENV) or None
    if secret is None:
        raise InvalidInput(parameter="secret", reason=f"pass secret= or set ${LINK_SECRET_ENV}")
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if len(key) < MIN_SECRET_BYTES:
        raise InvalidInput(
            parameter="secret", reason=f"must be at least {MIN_SECRET_BYTES} bytes long"
        )
    return key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, body: str) -> bytes:
    return hmac.new(key, _CONTEXT + body.encode(), hashlib.sha256).digest()


def sign_claim(claim: LinkClaim, key: bytes) -> str:
    """The token of ``claim``: its JSON body and HMAC, both base64url."""
    body = {
        "t": claim.thread_id,
        "a": claim.approval_id,
        "f": claim.fingerprint,
        "d": claim.decider.id,
        "r": list(claim.decider.roles),
        "e": int(claim.expires.timestamp()),
    }
    text = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return f"{text}.{_b64(_mac(key, text))}"


def _body(token: str) -> tuple[str, str, dict[str, Any]]:
    text, sep, mac = token.partition(".")
    try:
        body = json.loads(_unb64(text)) if sep else None
    except (ValueError, binascii.Error):
        body = None
    if not isinstance(body, dict):
        raise LinkRefused(reason="the token is malformed")
    return text, mac, body


def _claim(body: dict[str, Any]) -> LinkClaim:
    try:
        return LinkClaim(
            thread_id=str(body["t"]),
            approval_id=str(body["a"]),
            fingerprint=None if body.get("f") is None else str(body["f"]),
            decider=Decider(id=str(body["d"]), roles=tuple(str(r) for r in body.get("r") or ())),
            expires=datetime.fromtimestamp(int(body["e"]), tz=timezone.utc),
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        raise LinkRefused(reason="the token is malformed") from None


def read_token(token: str, key: bytes, *, thread_id: str, now: datetime) -> LinkClaim:
    """Verify ``token`` for ``thread_id`` at ``now``; pure (no I/O, nothing audited).

    Raises:
        LinkRefused: malformed, altered (signature), for another thread, or expired.
            It names the thread, approval and decider the token claims when it
            could be decoded, so the refusal can be audited there.
    """
    text, mac, body = _body(token)
    claim = _claim(body)
    named = {"thread_id": claim.thread_id, "approval_id": claim.approval_id}
    try:
        valid = hmac.compare_digest(_unb64(mac), _mac(key, text))
    except (ValueError, binascii.Error):
        valid = False
    if not valid:
        raise LinkRefused(reason="the signature does not verify (altered)", **named)
    named["by"] = claim.decider.id
    if claim.thread_id != thread_id:
        raise LinkRefused(reason=f"the link is for another thread ({claim.thread_id!r})", **named)
    if now >= claim.expires:
        raise LinkRefused(reason=f"the link expired at {claim.expires.isoformat()}", **named)
    return claim


def _deadline(intr: Any, now: datetime, ttl: timedelta) -> datetime:
    info = extract_wait(intr)
    if info is not None and info.deadline is not None:
        return info.deadline
    return now + ttl


def link_flow(
    thread_id: str,
    *,
    decider: Decider,
    key: bytes,
    base_url: str,
    approval_id: str | None,
    ttl: timedelta,
    clock: Clock | None,
) -> Flow[str]:
    """Find the pending approval and build its signed link."""
    state = yield from GetState(config={"configurable": {"thread_id": thread_id}})
    intr = pick_pending(thread_id, pending_of(state, "approval"), approval_id)
    if intr is None:
        assert approval_id is not None
        yield from not_pending_flow(thread_id, approval_id)
        raise AssertionError("unreachable")
    now = now_of(clock)
    claim = LinkClaim(
        thread_id=thread_id,
        approval_id=intr.id,
        fingerprint=section(intr.value).get("fingerprint"),
        decider=decider,
        expires=_deadline(intr, now, ttl),
    )
    query = urlencode({"token": sign_claim(claim, key)})
    return f"{base_url.rstrip('/')}{LINK_PATH}{quote(thread_id, safe='')}?{query}"


def link_args(
    thread_id: Any,
    decider: Any,
    base_url: Any,
    approval_id: Any,
    ttl: Any,
) -> tuple[Decider, str | None]:
    """The checked decider and approval id of a new link (``InvalidInput`` names a bad one)."""
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidInput(parameter="thread_id", reason="must be a non-empty string")
    if isinstance(decider, str):
        decider = Decider(id=decider)
    if not isinstance(decider, Decider):
        raise InvalidInput(parameter="decider", reason="must be a user id or a Decider")
    by, _, roles, approval_id = decider_args(
        by=decider.id,
        comment=None,
        roles=decider.roles,
        approval_id=approval_id,
        id_parameter="approval_id",
    )
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise InvalidInput(parameter="base_url", reason="must be an http:// or https:// URL")
    if not isinstance(ttl, timedelta) or ttl <= timedelta(0):
        raise InvalidInput(parameter="ttl", reason="must be a positive timedelta")
    return Decider(id=by, roles=tuple(roles)), approval_id


def check_link_flow(
    token: str,
    key: bytes,
    *,
    thread_id: str,
    action: str,
    clock: Clock | None,
) -> Flow[LinkClaim]:
    """Verify a link opened for ``thread_id``; a refusal naming a thread is audited there.

    Beyond :func:`read_token`: the approval it names must still be pending with
    the request it was made for (a used link names a decided approval).
    """
    now = now_of(clock)
    try:
        claim = read_token(token, key, thread_id=thread_id, now=now)
        state = yield from GetState(config={"configurable": {"thread_id": thread_id}})
        pending = {i.id: i for i in pending_of(state, "approval")}
        intr = pending.get(claim.approval_id)
        if intr is None:
            got = yield from GetDecisions(thread_id=thread_id, keys=[claim.approval_id])
            done = got.get(claim.approval_id)
            why = "the approval is no longer pending"
            if done is not None:
                why = f"already decided by {done.get('by')} at {done.get('at')}"
            raise LinkRefused(
                reason=why, thread_id=thread_id, approval_id=claim.approval_id, by=claim.decider.id
            )
        if section(intr.value).get("fingerprint") != claim.fingerprint:
            raise LinkRefused(
                reason="the request changed since the link was made",
                thread_id=thread_id,
                approval_id=claim.approval_id,
                by=claim.decider.id,
            )
    except LinkRefused as refused:
        # audited where it was opened, naming what the token claims: an altered or
        # foreign token is an attempt on this thread
        if refused.approval_id is not None:
            # an unverified token's claims are anyone's text: kept short
            claimed = refused.approval_id if refused.by else refused.approval_id[:UNVERIFIED_ID]
            entry = refusal_entry(
                thread_id,
                claimed,
                by=refused.by or "unknown (unverified link)",
                action=action,
                at=now,
                fingerprint=None,
                outcome="link_refused",
                reason=refused.reason,
            )
            yield from AppendAudit(entries=[entry])
        raise
    return claim
