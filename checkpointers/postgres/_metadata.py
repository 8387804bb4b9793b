"""Checkpoint metadata as jsonb, exactly.

``jsonb`` cannot hold ``\\u0000``, lone surrogates, NaN/Infinity or non-JSON
values. The ``metadata`` column keeps a lossy JSON copy (used by
``list(filter=...)`` and by langgraph-checkpoint-postgres); when the copy
differs from the original, ``metadata_exact`` keeps the serializer's encoding
and reads use it.
"""

from __future__ import annotations

import math
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_durable.checkpointers._errors import UnstorableValueError
from langgraph_durable.checkpointers._serde import dumps_exact, loads_exact
from langgraph_durable.migrations import SCHEMA_VERSION_KEY


def _clean_str(value: str) -> tuple[str, bool]:
    if "\x00" in value:
        value = value.replace("\x00", "")
        ok = False
    else:
        ok = True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8"), False
    return value, ok


def float_survives_jsonb(value: float) -> bool:
    """Whether jsonb gives ``value`` back as the same float.

    jsonb prints numbers without an exponent, so ``1e+16`` comes back as the
    integer ``10000000000000000``; NaN and infinities are not JSON at all.
    """
    return math.isfinite(value) and not (value.is_integer() and "e" in repr(value))


MAX_DEPTH = 255
"""The deepest nesting of dicts and lists metadata may have: what the serializer
(msgpack) stores, so both backends refuse the same values."""


def to_json(value: Any, field: str = "metadata") -> tuple[Any, bool]:
    """Return ``(json_value, exact)``: a jsonb-storable copy and whether it is lossless.

    Tuples become lists and count as exact: that is what LangGraph itself
    expects of JSON metadata (``counters_since_delta_snapshot``).

    Raises:
        UnstorableValueError: ``value`` nests deeper than :data:`MAX_DEPTH`
            (named ``field``).
    """
    return _to_json(value, field, 0)


def _to_json(value: Any, field: str, depth: int) -> tuple[Any, bool]:
    kind = type(value)
    if value is None or kind is bool or kind is int:
        return value, True
    if kind is str:
        return _clean_str(value)
    if kind is float:
        if not math.isfinite(value):
            return None, False
        return value, float_survives_jsonb(value)
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_DEPTH:
        # refused by name here, not by a RecursionError deep in json or msgpack
        raise UnstorableValueError(
            field=field, reason=f"dicts and lists nested deeper than {MAX_DEPTH} levels"
        )
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        exact = True
        for k, v in value.items():
            if type(k) is str:
                key, key_ok = _clean_str(k)
            else:
                key, key_ok = str(k), False
            out[key], v_ok = _to_json(v, field, depth + 1)
            exact = exact and key_ok and v_ok
        return out, exact
    if isinstance(value, (list, tuple)):
        items = [_to_json(v, field, depth + 1) for v in value]
        return [v for v, _ in items], all(ok for _, ok in items)
    # a bool/int/str/float subclass, or any other object: a readable stand-in
    if isinstance(value, (bool, int, float, str)):
        plain = kind.__mro__[1](value) if kind is not bool else bool(value)
        return _to_json(plain, field, depth)[0], False
    return str(value), False


def encode_metadata(
    metadata: dict[str, Any], serde: SerializerProtocol | None = None
) -> tuple[dict[str, Any], bytes | None]:
    """``(jsonb copy, exact encoding or None)``.

    Without ``serde`` (a list filter), the second item is ``b""`` when the copy
    is lossy, so the caller knows to re-check matches exactly. Metadata with a
    ``schema_version`` key of the caller's is always stored in its exact
    encoding, marked (``CALLER_KEY``): reads then keep that key, which rows of
    earlier releases held for the saver's own version (reads leave that out).
    """
    json_md, exact = to_json(metadata, "metadata" if serde is not None else "filter")
    own_key = serde is not None and SCHEMA_VERSION_KEY in metadata
    if exact and not own_key:
        return json_md, None
    if serde is None:
        return json_md, b""
    type_, blob = dumps_exact(serde, metadata, field="metadata")
    mark = CALLER_KEY if own_key else b""
    return json_md, mark + type_.encode("ascii") + b":" + blob


CALLER_KEY = b"k:"
"""Prefix of an exact encoding whose metadata holds a ``schema_version`` key of the caller's."""


def decode_metadata(serde: SerializerProtocol, data: bytes) -> tuple[Any, bool]:
    """Inverse of the exact encoding of :func:`encode_metadata`.

    Returns the metadata and whether its ``schema_version`` key is the caller's.
    """
    data = bytes(data)
    caller_key = data.startswith(CALLER_KEY)
    if caller_key:
        data = data[len(CALLER_KEY) :]
    type_, _, blob = data.partition(b":")
    return loads_exact(serde, type_.decode("ascii"), blob), caller_key


def _without_own_version(metadata: Any, schema_version: Any) -> Any:
    """A row's metadata without the ``schema_version`` key an earlier release put there.

    Rows of earlier releases hold the schema version twice, in their column and
    as ``metadata["schema_version"]`` (written over any value of the caller's);
    the key is left out where it equals the column. A row whose caller wrote a
    key of that name keeps it: such metadata is stored in its exact encoding
    with a mark (:func:`encode_metadata`), which skips this.
    """
    own = metadata.get(SCHEMA_VERSION_KEY) if isinstance(metadata, dict) else None
    if type(own) is int and own == int(schema_version or 0):
        return {k: v for k, v in metadata.items() if k != SCHEMA_VERSION_KEY}
    return metadata
