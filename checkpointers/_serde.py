"""Safe-by-default serialization shared by every saver."""

from __future__ import annotations

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


def default_serde() -> SerializerProtocol:
    """Return the serializer the savers use when none is given.

    No pickle fallback, and strict msgpack: only LangGraph's safe types and
    the types a compiled graph adds through ``with_allowlist`` are rebuilt.
    """
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)
