# Generated from interrupts/_audit_calls_async.py by tools/async_to_sync.py:
# edit the source, then run the script.
"""``audit_log`` / ``purge_audit`` / ``verify_audit``: read, purge and check a thread's trail.

What the trail holds and who writes it: :mod:`~langgraph_durable.interrupts._audit`.
"""

from __future__ import annotations

from langgraph_durable.checkpointers import (
    AuditVerification,
    VerifiableAudit,
    feature,
)
from langgraph_durable.interrupts._audit import AuditEntry, audit_entries
from langgraph_durable.interrupts._errors import AuditNotVerifiable
from langgraph_durable.interrupts._store import Backend
from langgraph_durable.interrupts._types import Saver


def audit_log(saver: Saver, *, thread_id: str) -> list[AuditEntry]:
    """The thread's audit trail, oldest first.

    Args:
        saver: Any LangGraph saver (our savers read their own storage; others
            the in-process log of this process).
        thread_id: The thread.

    Returns:
        The entries in order (Pydantic models).
    """
    return audit_entries(Backend(saver).read_audit(str(thread_id)))


def purge_audit(saver: Saver, *, thread_id: str) -> int:
    """Retention: delete the thread *and* its audit trail; return how many entries went.

    ``delete_thread`` keeps the audit trail (an audit outlives what it audits);
    this is the one call that removes it. On Postgres the thread and its
    entries go in one transaction, through the one delete the table's
    triggers allow. Our savers keep the thread's chain head, so entries
    appended later still verify (:func:`verify_audit` reports what was purged).
    """
    return Backend(saver).purge_audit(str(thread_id))


def verify_audit(saver: Saver, thread_id: str) -> AuditVerification:
    """Check the thread's audit trail against its hash chain.

    Our savers chain each entry to the one before it when they append it, and
    keep the thread's newest link (its head). This reads the entries and the
    head in one snapshot and recomputes every link.

    Args:
        saver: One of our Postgres or Redis savers.
        thread_id: The thread.

    Returns:
        The report: ``intact``, how many entries, the head (keep it to detect a
        later rewrite of the whole chain), what purges removed, and ``broken``:
        the first broken link (its ``seq``, and whether an entry was
        ``altered``, is ``missing`` or was ``forged``).

    Raises:
        AuditNotVerifiable: The saver keeps no chain (``InMemorySaver`` and
            other savers: their log is the in-process one).
    """
    audit = feature(saver, VerifiableAudit)
    if audit is None:
        raise AuditNotVerifiable(saver_type=type(saver).__name__)
    return audit.verify_audit(thread_id=str(thread_id))
