"""The hash chain over a thread's audit entries, and its verification (no I/O).

Each entry a saver appends carries a *link*::

    link(n) = SHA-256(link(n - 1) || digest(entry n))

where ``digest`` is the SHA-256 of the entry's canonical bytes (Postgres: the
columns, see :func:`langgraph_durable.checkpointers.postgres._audit.row_digest`;
Redis: the entry's JSON exactly as stored) and ``link(0)`` is :data:`GENESIS`.
The link is computed where the entry is appended, atomically with it (the
Postgres function holds the thread's head row locked, the Redis script runs
alone), so two concurrent appends cannot fork the chain. Every thread also has
a *head*: the position and link of its newest entry, so entries removed from
the end are missed too, and the *base* the chain starts from: nothing, or what
a purge removed (its last position and link), so a purge leaves the entries
after it verifiable and records how many entries it took.

This is what Certificate Transparency logs do for their entries: changing,
removing or inserting an entry breaks every link after it. A writer that can
rewrite the whole chain and its head (the owner of the Postgres schema, any
Redis client without an ACL) can forge a consistent one; keep the head that
:func:`check_chain` reports somewhere else to detect that too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

GENESIS = bytes(32)
"""The link before a thread's first entry."""

Problem = Literal["altered", "missing", "forged"]


def chain_link(prev: bytes, digest: bytes) -> bytes:
    """The link of an entry whose digest is ``digest``, after the link ``prev``."""
    return hashlib.sha256(prev + digest).digest()


@dataclass(frozen=True)
class ChainHead:
    """A thread's chain head, as its saver stores it.

    Attributes:
        position: The newest chained entry's position (1, 2, ...; the base's if none).
        link: That entry's link.
        base_position: The chain starts after this position (0, or the last purged one).
        base_link: The link it starts from (:data:`GENESIS`, or the last purged one).
        legacy: Entries before the chain, counted but not hashed (Redis streams
            written before layout step 7); the chain's positions follow them.
        purged: How many entries purges removed in all.
        purged_at: When the last purge ran.
    """

    position: int
    link: bytes
    base_position: int = 0
    base_link: bytes = GENESIS
    legacy: int = 0
    purged: int = 0
    purged_at: datetime | None = None


@dataclass(frozen=True)
class ChainedEntry:
    """What verification needs of one stored entry, in storage order.

    Attributes:
        seq: The entry's ``seq`` (as :func:`~langgraph_durable.interrupts.audit_log` shows it).
        position: Its chain position, ``None`` if it carries none.
        link: Its stored link, ``None`` if it carries none.
        digest: The SHA-256 of its canonical bytes, computed from what is stored now.
    """

    seq: int
    position: int | None
    link: bytes | None
    digest: bytes


@dataclass(frozen=True)
class AuditBreak:
    """The first broken link of a thread's audit chain.

    Attributes:
        seq: The entry where the chain breaks (``None`` if no entry is left to name).
        position: The chain position expected or found there.
        problem: ``altered`` (an entry, or the one before it, changed after it was
            written), ``missing`` (entries were removed), ``forged`` (an entry the
            library's append did not write: no link, or a position it never gave).
        detail: One sentence for a human.
    """

    seq: int | None
    position: int | None
    problem: Problem
    detail: str


@dataclass(frozen=True)
class AuditVerification:
    """What :func:`~langgraph_durable.interrupts.verify_audit` found.

    Attributes:
        thread_id: The thread.
        intact: Whether every link holds, up to the head.
        entries: How many stored entries were checked.
        head_position: The head's position (0: nothing was ever chained).
        head_link: The head's link, hex (keep it elsewhere to detect a rewrite
            of the whole chain later).
        legacy: Entries from before the chain (counted, not hashed).
        purged: Entries removed by purges (the chain resumes after them).
        purged_at: When the last purge ran.
        broken: The first broken link, when not intact.
    """

    thread_id: str
    intact: bool
    entries: int
    head_position: int
    head_link: str
    legacy: int = 0
    purged: int = 0
    purged_at: datetime | None = None
    broken: AuditBreak | None = None

    def summary(self) -> str:
        """One line: intact with the head, or the first broken link."""
        if self.broken is not None:
            b = self.broken
            where = f"seq {b.seq}" if b.seq is not None else "the end"
            return (
                f"audit chain of thread {self.thread_id!r} is broken at {where}: "
                f"{b.problem}: {b.detail}"
            )
        extra = []
        if self.legacy:
            extra.append(f"{self.legacy} older entries counted, not hashed")
        if self.purged:
            extra.append(f"{self.purged} purged")
        more = f" ({'; '.join(extra)})" if extra else ""
        return (
            f"audit chain of thread {self.thread_id!r} is intact: {self.entries} "
            f"entr{'y' if self.entries == 1 else 'ies'}, "
            f"head {self.head_position} {self.head_link[:16]}{more}"
        )


def check_chain(
    thread_id: str, head: ChainHead | None, entries: Sequence[ChainedEntry]
) -> AuditVerification:
    """Walk ``entries`` (storage order, read in one snapshot with ``head``) along the chain.

    Args:
        thread_id: The thread (for the report).
        head: The thread's stored head, ``None`` if it has none.
        entries: Its stored entries, oldest first.

    Returns:
        The report; ``broken`` names the first link that does not hold.
    """
    if head is None:
        head = ChainHead(position=0, link=GENESIS)
        if entries:
            first = entries[0]
            return _report(
                thread_id,
                head,
                entries,
                AuditBreak(
                    first.seq,
                    first.position,
                    "forged",
                    "the thread has entries but no chain head: they were not appended "
                    "by the library",
                ),
            )
    return _report(thread_id, head, entries, _walk(head, entries))


def _walk(head: ChainHead, entries: Sequence[ChainedEntry]) -> AuditBreak | None:
    # the entries from before the chain are the unlinked ones it starts with
    older = 0
    while older < min(head.legacy, len(entries)) and entries[older].link is None:
        older += 1
    if older < head.legacy:
        return _older_gone(head, entries[older] if older < len(entries) else None, older)
    return _links(head, entries[older:])


def _older_gone(head: ChainHead, after: ChainedEntry | None, found: int) -> AuditBreak:
    """Fewer entries from before the chain than the head counts: which break that is."""
    if after is not None and after.position is not None and after.position <= head.base_position:
        return AuditBreak(
            after.seq,
            after.position,
            "forged",
            f"the head counts {head.legacy} entries from before the chain, but this "
            "one carries a link: the chain head was replaced",
        )
    gone = head.legacy - found
    return AuditBreak(
        after.seq if after is not None else None,
        None,
        "missing",
        f"{gone} of the {head.legacy} entries from before the chain {'are' if gone > 1 else 'is'} "
        "gone",
    )


def _links(head: ChainHead, entries: Sequence[ChainedEntry]) -> AuditBreak | None:
    """The first link of ``entries`` (all after the older ones) that does not hold."""
    prev_pos, prev_link = head.base_position, head.base_link
    prev_seq: int | None = None
    for e in entries:
        if e.position is None or e.link is None:
            return AuditBreak(
                e.seq, None, "forged", "the entry carries no link: the library did not append it"
            )
        if e.position <= prev_pos or e.position > head.position:
            return AuditBreak(
                e.seq,
                e.position,
                "forged",
                f"position {e.position} was never given by the library here "
                f"(after {prev_pos}, head {head.position})",
            )
        if e.position > prev_pos + 1:
            gap = _span(prev_pos + 1, e.position - 1)
            verb = "are" if e.position - prev_pos > 2 else "is"
            return AuditBreak(
                e.seq, prev_pos + 1, "missing", f"{gap} before this entry {verb} gone"
            )
        if chain_link(prev_link, e.digest) != e.link:
            return AuditBreak(
                e.seq,
                e.position,
                "altered",
                "the entry does not match its link: it, or the entry before it, "
                "was changed after it was written",
            )
        prev_pos, prev_link, prev_seq = e.position, e.link, e.seq
    if prev_pos < head.position:
        gap = _span(prev_pos + 1, head.position)
        verb = "are" if head.position - prev_pos > 1 else "is"
        return AuditBreak(
            prev_seq,
            prev_pos + 1,
            "missing",
            f"{gap} after the last stored entry {verb} gone (the head counts {head.position})",
        )
    if prev_link != head.link:
        return AuditBreak(
            prev_seq, prev_pos, "altered", "the head's link differs from the newest entry's"
        )
    return None


def _span(first: int, last: int) -> str:
    return f"position {first}" if first == last else f"positions {first}-{last}"


def _report(
    thread_id: str,
    head: ChainHead,
    entries: Sequence[ChainedEntry],
    broken: AuditBreak | None,
) -> AuditVerification:
    return AuditVerification(
        thread_id=thread_id,
        intact=broken is None,
        entries=len(entries),
        head_position=head.position,
        head_link=head.link.hex(),
        legacy=head.legacy,
        purged=head.purged,
        purged_at=head.purged_at,
        broken=broken,
    )


__all__ = [
    "GENESIS",
    "AuditBreak",
    "AuditVerification",
    "ChainHead",
    "ChainedEntry",
    "chain_link",
    "check_chain",
]
