"""Validation of the identifiers a saver stores (thread id, namespace...)."""

from __future__ import annotations

from typing import Any

from langgraph_durable.checkpointers._errors import InvalidConfigError

MAX_ID_LENGTH = 16_384


def check_id(field: str, value: Any) -> str:
    """Return ``value`` if it can be stored as an identifier, else raise.

    Identifiers are stored verbatim (quotes, ``%``, ``*``, non-ASCII are fine);
    NUL cannot be stored by PostgreSQL ``text`` and lone surrogates cannot be
    encoded as UTF-8, so both are refused with an error naming the field.

    Raises:
        InvalidConfigError: the value is not a string, is too long, or holds
            a character no backend can store.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        got = type(value).__name__
        raise InvalidConfigError(field=field, reason=f"expected a string, got {got}")
    if "\x00" in value:
        raise InvalidConfigError(field=field, reason="contains a NUL character (\\u0000)")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidConfigError(field=field, reason=f"longer than {MAX_ID_LENGTH} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidConfigError(field=field, reason=f"not valid UTF-8 ({exc.reason})") from None
    return value
