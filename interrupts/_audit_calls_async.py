"""``aaudit_log`` / ``apurge_audit`` / ``averify_audit``: read, purge and check a thread's trail.

What the trail holds and who writes it: :mod:`~langgraph_durable.interrupts._audit`.
"""

from __future__ import annotations

from langgraph_durable.checkpointers import (
    AsyncVerifiableAudit,
    AuditVerification,
    VerifiableAudit,
    feature,
)
from langgraph_durable.interrupts._audit import AuditEntry, audit_entries
from langgraph_durable.interrupts._errors import AuditNotVerifiable
from langgraph_durable.interrupts._store_async import AsyncBackend
from langgraph_durable.interrupts._store_view import in_thread  # async-only
from langgraph_durable.interrupts._types import Saver


async def aaudit_log(saver: Saver, *, thread_id: str) -> list[AuditEntry]:
    """The thread's audit trail, oldest first.

    Args:
        saver: Any LangGraph saver (our savers read their own storage; others
            the in-process log of this process).
        thread_id: The thread.

    Returns:
        The entries in order (Pydantic models).
    """
    return audit_entries(await AsyncBackend(saver).aread_audit(str(thread_id)))


async def apurge_audit(saver: Saver, *, thread_id: str) -> int:
    """Retention: delete the thread *and* its audit trail; return how many entries went.

    ``adelete_thread`` keeps the audit trail (an audit outlives what it audits);
    this is the one call that removes it. On Postgres the thread and its
    entries go in one transaction, through the one delete the table's
    triggers allow. Our savers keep the thread's chain head, so entries
    appended later still verify (:func:`averify_audit` reports what was purged).
    """
    return await AsyncBackend(saver).apurge_audit(str(thread_id))


async def averify_audit(saver: Saver, thread_id: str) -> AuditVerification:
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
    audit = feature(saver, AsyncVerifiableAudit)
    audit = in_thread(audit, feature(saver, VerifiableAudit))  # async-only
    if audit is None:
        raise AuditNotVerifiable(saver_type=type(saver).__name__)
    return await audit.averify_audit(thread_id=str(thread_id))
