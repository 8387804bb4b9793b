"""Safe-by-default serialization shared by every saver."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from checkpointers._errors import UnstorableValueError

_MAX_DEPTH = 64


def default_serde() -> SerializerProtocol:
    """Return the serializer the savers use when none is given.

    No pickle fallback, and strict msgpack: only LangGraph's safe types and
    the types a compiled graph adds through ``with_allowlist`` are rebuilt.
    """
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)


def dumps_exact(serde: SerializerProtocol, value: Any, *, field: str) -> tuple[str, bytes]:
    """``serde.dumps_typed(value)``, refusing values it would not store exactly.

    LangGraph's msgpack encoding replaces a lone surrogate in a string by
    ``"?"`` without a word, and raises a bare ``TypeError`` for a surrogate in
    a dict key or an integer beyond 64 bits. The savers encode through here so
    such a value is refused with :class:`UnstorableValueError` naming ``field``
    instead. The surrogate scan only runs when the output holds a ``?`` byte.

    Raises:
        UnstorableValueError: the value cannot be stored exactly.
    """
    try:
        type_, data = serde.dumps_typed(value)
    except (TypeError, OverflowError, UnicodeError) as exc:
        raise UnstorableValueError(field=field, reason=f"cannot be serialized: {exc}") from exc
    if b"?" in data and _has_lone_surrogate(value, 0):
        raise UnstorableValueError(
            field=field,
            reason="holds a string with a lone surrogate, which would be stored as '?'",
        )
    return type_, data


def _has_lone_surrogate(value: Any, depth: int) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if depth > _MAX_DEPTH or isinstance(value, (bytes, bytearray, int, float)) or value is None:
        return False
    if isinstance(value, dict):
        return any(
            _has_lone_surrogate(k, depth + 1) or _has_lone_surrogate(v, depth + 1)
            for k, v in value.items()
        )
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_lone_surrogate(v, depth + 1) for v in value)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return _has_lone_surrogate(fields, depth + 1)
    return False
