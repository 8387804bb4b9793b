"""Retention runs: :func:`aapply_retention` deletes or prunes the idle threads of a saver.

Written once as async code; the sync :func:`apply_retention` is generated from
it (``tools/async_to_sync.py``). The policy, the report and the statements of
one batch are in :mod:`._retention_core`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError, StorageRefusedError
from langgraph_durable.checkpointers.postgres._retention_core import (
    BATCH_ATTEMPTS,
    RETRIED_CODES,
    RETRY_PAUSE,
    RetentionPolicy,
    RetentionReport,
    retention_batch,
)
from langgraph_durable.checkpointers.postgres._saver_async import AsyncPostgresSaver


async def aapply_retention(
    saver: AsyncPostgresSaver,
    policy: RetentionPolicy,
    *,
    dry_run: bool = False,
    max_batches: int | None = None,
    after: Any = None,
) -> RetentionReport:
    """Delete (or prune) the threads of ``saver`` idle longer than ``policy.older_than``.

    Works through the idle threads oldest first, ``policy.batch_size`` per
    transaction; each batch locks only its own threads' activity rows, so runs
    of other threads go on meanwhile, and a thread written to while its batch
    runs is skipped. Threads that wait at an interrupt, or that a run lease
    holds, are never touched (see :class:`RetentionPolicy`).

    Args:
        saver: An ``AsyncPostgresSaver`` whose ``setup()`` has run.
        policy: Which threads go and how.
        dry_run: Only report what would be deleted or pruned; changes nothing
            and locks nothing.
        max_batches: Stop after this many batches (``None``: until every idle
            thread was seen); ``report.cursor`` tells where to go on.
        after: A previous report's ``cursor``: start after it.

    Returns:
        What was deleted, pruned and kept.

    Raises:
        InvalidConfigError: ``saver``, ``policy`` or ``max_batches`` is not
            what is expected (nothing is changed).
    """
    if not isinstance(saver, AsyncPostgresSaver):
        raise InvalidConfigError(
            field="saver",
            reason=f"expected an AsyncPostgresSaver, got {type(saver).__name__}"
            " (Redis savers expire idle threads with ttl=)",
        )
    if not isinstance(policy, RetentionPolicy):
        raise InvalidConfigError(
            field="policy", reason=f"expected a RetentionPolicy, got {policy!r}"
        )
    if max_batches is not None and (
        isinstance(max_batches, bool) or not isinstance(max_batches, int) or max_batches < 1
    ):
        raise InvalidConfigError(
            field="max_batches", reason=f"expected None or an int >= 1, got {max_batches!r}"
        )
    if not isinstance(dry_run, bool):
        raise InvalidConfigError(field="dry_run", reason=f"expected True or False, got {dry_run!r}")
    report = RetentionReport(dry_run=dry_run)
    cursor = after
    while max_batches is None or report.batches < max_batches:
        cursor = await _batch_async(saver, policy, cursor, report)
        if cursor is None:
            break
    report.cursor = cursor
    return report


async def _batch_async(
    saver: AsyncPostgresSaver, policy: RetentionPolicy, cursor: Any, report: RetentionReport
) -> Any:
    """One batch, run again if PostgreSQL chose it as a deadlock's or conflict's victim.

    A run that writes to an idle thread while its batch deletes it can wait on
    the batch while the batch waits on it; PostgreSQL then rolls one of the two
    back. When that is the batch, nothing of it was done: running it again
    skips the thread, which the write has just marked active. The pause before
    each new attempt lets the write commit first: an attempt started at once
    can take the thread's mark before the write does and meet it again.
    """
    for attempt in range(BATCH_ATTEMPTS):
        try:
            return await saver._runner.run(
                "retention", retention_batch(saver.core, policy, cursor, report)
            )
        except StorageRefusedError as exc:
            if exc.code not in RETRIED_CODES or attempt == BATCH_ATTEMPTS - 1:
                raise
        await asyncio.sleep(RETRY_PAUSE * 2**attempt)
    raise AssertionError("unreachable")
