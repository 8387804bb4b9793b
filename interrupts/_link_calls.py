# Generated from interrupts/_link_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``decision_link``: a signed URL that lets one decider answer one approval, once.

The links themselves (signing, checking, the flows) are in :mod:`._links`.
"""

from __future__ import annotations

from datetime import timedelta

from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._driver import Env
from langgraph_durable.interrupts._links import (
    DEFAULT_TTL,
    link_args,
    link_flow,
    link_secret,
)
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._types import Saver


def decision_link(
    saver: Saver,
    thread_id: str,
    *,
    decider: Decider | str,
    base_url: str,
    secret: str | bytes | None = None,
    approval_id: str | None = None,
    ttl: timedelta = DEFAULT_TTL,
    clock: Clock | None = None,
) -> str:
    """A URL that lets ``decider`` approve or reject the thread's pending approval once.

    Opening it on the approval service (:func:`~langgraph_durable.interrupts.create_app`
    mounted at ``base_url``) shows the request with approve and reject buttons,
    without a login. The link is bound to this approval (its id and the
    fingerprint of its request), to the decider and to the approval's deadline:
    once the approval is decided (through the link or otherwise), expired,
    escalated or asked again with another request, the link is refused. The
    graph's authorization policy still decides whether ``decider`` may decide.

    Args:
        saver: The checkpoint saver the graph runs on.
        thread_id: The waiting thread.
        decider: Who decides through the link: a user id, or a ``Decider`` with roles.
        base_url: Where the approval service is reachable (``https://ops.example.com``).
        secret: The signing key the service also holds (at least 16 bytes);
            default: ``$LANGGRAPH_DURABLE_LINK_SECRET``.
        approval_id: Which approval, when the thread has several pending.
        ttl: Validity of a link to an approval without a deadline.
        clock: Time source (the link of an approval without deadline expires ``ttl`` later).

    Returns:
        ``{base_url}/link/{thread_id}?token=...``.

    Raises:
        InvalidInput: a parameter is malformed or no secret is configured.
        NoPendingApproval: nothing (with that id) is waiting on the thread.
        AmbiguousApproval: several approvals wait and ``approval_id`` was not given.
        AlreadyDecided: ``approval_id`` names an approval decided before.
    """
    who, approval_id = link_args(thread_id, decider, base_url, approval_id, ttl)
    flow = link_flow(
        thread_id,
        decider=who,
        key=link_secret(secret),
        base_url=base_url,
        approval_id=approval_id,
        ttl=ttl,
        clock=clock,
    )
    return drive(flow, Env(saver))
