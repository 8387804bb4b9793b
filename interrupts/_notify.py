"""The one hook through which approvals tell the outside world that someone should look.

A reminder (:func:`~langgraph_durable.interrupts.remind`) is recorded in the
audit trail first; then the process-wide notifier, if one is set, is called
with an :class:`ApprovalEvent`. A notifier that fails is logged and does not
undo the recorded event. Delivery (mail, chat, an outbox table) is the
notifier's job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

log = logging.getLogger("langgraph_durable.interrupts.notify")


@dataclass(frozen=True)
class ApprovalEvent:
    """Something approvers should hear about.

    Attributes:
        kind: ``"reminder"``.
        thread_id: The waiting thread.
        approval_id: The approval (interrupt id; a batch's id).
        by: Who asked for it.
        at: When (UTC).
        approvers: Who is asked now (empty: anyone).
        deadline: The approval's deadline, if any.
        request: The request payload shown (a batch: its items).
        comment: The operator's note.
        extra: Room for later fields.
    """

    kind: str
    thread_id: str
    approval_id: str
    by: str
    at: datetime
    approvers: tuple[str, ...] = ()
    deadline: datetime | None = None
    request: Any = None
    comment: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Notifier = Callable[[ApprovalEvent], None]
"""A notifier: called once per recorded event, in the process that recorded it."""

_lock = threading.Lock()
_notifier: Notifier | None = None


def set_notifier(notifier: Notifier | None) -> Notifier | None:
    """Set the process-wide notifier (``None`` removes it); returns the previous one."""
    global _notifier
    with _lock:
        previous, _notifier = _notifier, notifier
    return previous


def notify(event: ApprovalEvent) -> bool:
    """Hand ``event`` to the notifier; ``True`` when one took it without raising."""
    with _lock:
        notifier = _notifier
    if notifier is None:
        return False
    try:
        notifier(event)
    except Exception:
        log.exception("notifier failed for %s of thread %s", event.kind, event.thread_id)
        return False
    return True
