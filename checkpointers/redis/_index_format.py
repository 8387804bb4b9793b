"""The field separator and the members of the metadata filter index (no I/O).

A checkpoint's metadata is indexed as one sorted-set member per scalar key,
``<json key>\\0<canonical value>\\0<cid>\\0<ns>``: the put script adds them and a
filtered list walks the members of each filter's prefix.
"""

from __future__ import annotations

import json
import math
from typing import Any

from langgraph_durable.migrations import SCHEMA_VERSION_KEY

SEP = "\x00"
MAX_INDEXED = 512
"""Longest canonical metadata value kept in the filter index (longer ones are
filtered in Python)."""


def canonical(value: Any) -> str | None:
    """JSON text of a scalar metadata value for the index, or ``None`` if not indexed.

    ``1`` and ``1.0`` share a text (they are equal filters); ``True`` and ``1``
    do not (as in PostgreSQL's jsonb).
    """
    if value is None or isinstance(value, bool):
        text = json.dumps(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        return None
    return text if len(text) <= MAX_INDEXED else None


def index_prefix(key: str, value: Any) -> str | None:
    """The metadata-index member prefix for ``key == value``, or ``None``.

    ``schema_version`` is not indexed since layout step 5 (the saver then wrote
    its own version there on every checkpoint: one sorted-set entry each,
    ~0.15x the payload of a growing thread); a list filtering on it checks the
    metadata instead, as for any key the index does not answer.
    """
    if key == SCHEMA_VERSION_KEY:
        return None
    text = canonical(value)
    if text is None:
        return None
    prefix = json.dumps(key, ensure_ascii=False) + SEP + text + SEP
    try:
        prefix.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate cannot be sent to Redis; no stored metadata holds one
        # (puts refuse them), so the Python-side match answers it (no match)
        return None
    return prefix


STEP_PREFIX = json.dumps("step") + SEP
"""Prefix of the ``step`` index members: kept in the refs, left out of the metadata index."""


def is_indexed(prefix: str) -> bool:
    """Whether the metadata index (``x``) holds members with ``prefix``.

    Since layout step 6 it leaves out ``step``: unique per checkpoint, an
    entry each (~0.16x the payload of a growing thread) for a rare filter;
    the list script checks a step filter against the checkpoint's refs,
    which keep every prefix.
    """
    return not prefix.startswith(STEP_PREFIX)
