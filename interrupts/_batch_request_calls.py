# Generated from interrupts/_batch_request_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``request_batch_approval``: ask for a decision on each item; call inside a node.

The batch state machine it drives is
:func:`~langgraph_durable.interrupts._batch_node.batch_flow`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any, Literal

from langgraph_durable.interrupts._authz import (
    thread_of_run,
)
from langgraph_durable.interrupts._batch_models import BatchDecision
from langgraph_durable.interrupts._batch_node import (
    batch_flow,
    batch_node_env,
    checked_batch_ask,
)
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._perform import drive
from langgraph_durable.interrupts._shapes import (
    DEFAULT_ALLOWED,
    UiShape,
)


def request_batch_approval(
    items: Sequence[Any],
    *,
    key: Callable[[Any], Any],
    timeout: timedelta | float | None = None,
    on_timeout: Literal["reject", "approve"] = "reject",
    approvers: str | Iterable[str] = (),
    on_stale: Literal["reask", "raise"] = "reask",
    clock: Clock | None = None,
    forbid: str | Iterable[str] = (),
    allowed_decisions: Sequence[str] = DEFAULT_ALLOWED,
    action: str | None = None,
    description: str | None = None,
    ui: UiShape = "hitl",
) -> BatchDecision:
    """Ask for a decision on each item; call inside a node.

    Await the async form in ``async def`` nodes.

    The interrupt lists one HITL action request per open item (its ``args`` are the
    item, with its ``key``), so a ``Command(resume=...)`` with one decision per item,
    in order, answers it (or ``True``/``False`` for all); ``decide()`` decides any
    subset from outside.

    Args:
        items: JSON-able items shown to the approvers.
        key: Item -> its unique key (converted to ``str``).
        timeout: When the open items get ``on_timeout``: a ``timedelta`` or a number
            of seconds, positive and at most 100 years; ``None`` waits forever.
        on_timeout: ``"reject"`` or ``"approve"``, applied by the sweeper to open items.
        approvers: Routing labels or user ids; a string is one approver.
        on_stale: An item whose payload changed after it was decided is asked again
            (``"reask"``) or raises ``StaleApproval`` (``"raise"``).
        clock: Time source (defaults to the run's clock).
        forbid: Separation of duties: ``["requester"]`` refuses decisions by whoever
            started the run (``config["configurable"]["requested_by"]``, which the run
            must then set).
        allowed_decisions: What each item may be answered with (``"approve"``,
            ``"reject"``, ``"edit"``, ``"respond"``).
        action: The action name shown for each item (default ``"approve_item"``).
        description: Text shown with each item.
        ui: ``"hitl"`` or ``"human_interrupt"`` (see ``request_approval``).

    Returns:
        The :class:`BatchDecision` once every item is decided.

    Raises:
        InvalidInput: an argument is wrong (names it; nothing is asked), or
            ``forbid=["requester"]`` on a run that did not say who requested it.
    """
    ask = checked_batch_ask(
        items,
        key,
        timeout=timeout,
        on_timeout=on_timeout,
        approvers=approvers,
        on_stale=on_stale,
        clock=clock,
        forbid=forbid,
        allowed_decisions=allowed_decisions,
        action=action,
        description=description,
        ui=ui,
    )
    return drive(batch_flow(ask, thread_of_run(), "request_batch_approval"), batch_node_env())
