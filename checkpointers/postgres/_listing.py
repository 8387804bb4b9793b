"""``list()`` of the PostgreSQL savers: keyset pages, parsed one checkpoint at a time.

A history is read in pages, each one statement (the statement of
``list(limit=N)``, continued after the last row of the previous page), so the
first checkpoint comes after one page, and a caller holds at most one page of
stored rows and the one tuple it is looking at, whatever the thread's length.
Between pages the saver holds nothing: the connection goes back to its pool
(or its lock is released), no cursor stays open and no transaction is begun,
so a caller that stops iterating early leaves nothing behind, and the saver's
other calls run while a listing is under way. Within a page the checkpoints
share their delta chains as every read does (:class:`~._core._Values`).

Pages start small, so the first item comes quickly (with a limit, the first
page asks for the limit, up to :data:`PAGE_FIRST_LIMITED`), and grow, at most
doubling, to as many checkpoints as :data:`PAGE_BYTES` holds at the last
page's stored bytes per checkpoint, so pages of values stored whole
(``deltas=False``, adopted tables) keep to about that size too.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers._errors import InvalidConfigError
from langgraph_durable.checkpointers._ids import check_id
from langgraph_durable.checkpointers.postgres._core import PostgresCore, _contains
from langgraph_durable.checkpointers.postgres._metadata import encode_metadata
from langgraph_durable.checkpointers.postgres._stmt import Op, Rows, Stmt
from langgraph_durable.migrations import SCHEMA_VERSION_KEY

__all__ = [
    "ORDERED_METADATA_KEYS",
    "PAGE_BYTES",
    "PAGE_FIRST",
    "PAGE_FIRST_LIMITED",
    "PAGE_MAX",
    "ListPages",
    "fetch",
]

PAGE_FIRST = 10
"""Checkpoints in the first page of a listing without a limit."""
PAGE_FIRST_LIMITED = 100
"""Checkpoints in the first page at most when a limit is given: ``list(limit=n)``
with ``n`` up to this is one statement."""
PAGE_MAX = 1000
"""Checkpoints in a page at most."""
PAGE_BYTES = 8 << 20
"""Stored bytes (values and writes) a page aims to stay under."""
ORDERED_METADATA_KEYS = ("source", "step")
"""Metadata keys with an index in the listing's order (layout step 15). Across
threads, a filter of only these keys, with scalar values, is answered newest
first from one of them, stopping at the limit; any other filter through the
GIN index, which finds every match before the newest are kept."""

# positions in a list row: the byte arrays (value rows, the checkpoint's
# writes, its pending sends, the writes deltas refer to) and the size of the
# checkpoint row itself
_BLOB_COLUMNS = (10, 14, 18, 28)
_ROW_BYTES = 32


def fetch(stmt: Stmt) -> Op[Any]:
    """The operation that runs one page's statement and returns its rows."""
    rows = yield stmt
    return rows or []


class ListPages:
    """The pages of one ``list()`` call: the next statement, and the tuples of its rows.

    I/O-free: a shell alternates :meth:`next_statement` (run it with
    :func:`fetch`) and :meth:`tuples` until :meth:`next_statement` returns
    None. Arguments are checked when this is built, before any statement.

    Args:
        core: The saver.
        config: ``list()``'s ``config`` (thread, namespace, checkpoint id; any may be absent).
        filter: Metadata that the listed checkpoints' metadata contains.
        before: Only checkpoints with an id below this config's ``checkpoint_id``.
        limit: At most this many tuples.
    """

    def __init__(
        self,
        core: PostgresCore,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> None:
        self._core = core
        self._filter = filter
        predicates: list[str] = []
        params: dict[str, Any] = {}
        conf = (config or {}).get("configurable") or {}
        for key in ("thread_id", "checkpoint_ns", "checkpoint_id"):
            value = conf.get(key)
            # an empty checkpoint id (or a None) means "any", as in LangGraph's savers
            if value is not None and (key != "checkpoint_id" or value):
                params[key] = check_id(key, value)
                predicates.append(key)
        # a filter jsonb cannot hold exactly is checked again after loading, and
        # so is one on schema_version: rows of earlier releases hold the saver's
        # own key in their jsonb, which reads leave out
        self._exact_check = False
        if filter:
            json_filter, exact_filter = encode_metadata(filter)
            # within one thread its primary key is the index to read, in order
            if (
                "thread_id" not in params
                and isinstance(json_filter, dict)
                and _ordered(json_filter)
            ):
                for key in ORDERED_METADATA_KEYS:
                    if key in json_filter:
                        params[f"meta_{key}"] = Jsonb(json_filter[key])
                        predicates.append(f"meta_{key}")
            else:
                params["filter"] = Jsonb(json_filter)
                predicates.append("filter")
            self._exact_check = exact_filter is not None or SCHEMA_VERSION_KEY in filter
        before_id = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        if before_id:
            params["before"] = check_id("checkpoint_id", before_id)
            predicates.append("before")
        self._params = params
        self._predicates = tuple(predicates)
        self._left = _check_limit(limit)
        # a caller who names a limit wants that many: one statement for it
        self._size = (
            PAGE_FIRST if self._left is None else max(1, min(self._left, PAGE_FIRST_LIMITED))
        )
        self._asked = 0
        self._after: tuple[str, str, str] | None = None
        self._done = self._left is not None and self._left <= 0

    def next_statement(self) -> Stmt | None:
        """The statement of the next page, or None once the listing is complete."""
        if self._done:
            return None
        size = self._size if self._left is None else min(self._size, self._left)
        params = dict(self._params, limit=size)
        predicates = self._predicates
        if self._after is not None:
            params["after_id"], params["after_thread"], params["after_ns"] = self._after
            predicates = (*predicates, "after")
        self._asked = size
        return Stmt(self._core.queries.list_query(predicates, True), params, fetch=True)

    def tuples(self, rows: Rows) -> Iterator[CheckpointTuple]:
        """The tuples of a page's ``rows``, parsed one at a time as they are taken.

        Takes ownership of ``rows``: each row is dropped once parsed, so a
        page's decoded values are not all alive at once.
        """
        self._plan_next(rows)
        core, filter, exact_check = self._core, self._filter, self._exact_check
        values = core._values(rows)
        rows.reverse()
        while rows:
            row = rows.pop()
            tup = core._parse_tuple(row, values)
            # rows with exact metadata (row[6]) may have matched on their lossy copy
            if (
                filter
                and (exact_check or row[6] is not None)
                and not _contains(tup.metadata, filter)
            ):
                continue
            yield tup
            if self._left is not None:
                self._left -= 1
                if self._left <= 0:
                    self._done = True
                    return

    def _plan_next(self, rows: Rows) -> None:
        """Where the next page starts and how many checkpoints it asks for."""
        if len(rows) < self._asked:
            self._done = True
            return
        last = rows[-1]
        self._after = (last[2], last[0], last[1])
        used = sum(row[_ROW_BYTES] or 0 for row in rows) + sum(
            len(b) for row in rows for col in _BLOB_COLUMNS if row[col] for b in row[col] if b
        )
        # as many as fit the budget at this page's bytes per checkpoint, at
        # most twice as many as this page
        fit = PAGE_BYTES * len(rows) // max(used, 1)
        self._size = max(1, min(fit, 2 * self._size, PAGE_MAX))


def _ordered(json_filter: dict[str, Any]) -> bool:
    """Whether ``metadata @> json_filter`` is the same as equalities on ordered keys.

    A scalar contains only itself, so for a scalar the containment of a key
    is its equality, which the indexes of :data:`ORDERED_METADATA_KEYS` answer
    in order (the GIN index cannot).
    """
    return bool(json_filter) and all(
        key in ORDERED_METADATA_KEYS and (value is None or isinstance(value, str | int | float))
        for key, value in json_filter.items()
    )


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    try:
        return operator.index(limit)
    except TypeError:
        raise InvalidConfigError(
            field="limit", reason=f"must be an int or None, got {limit!r}"
        ) from None
