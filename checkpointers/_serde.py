"""Safe-by-default serialization shared by every saver."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_durable.checkpointers._errors import UnreadableValueError, UnstorableValueError
from langgraph_durable.checkpointers._fast_messages import fast_ext_hook
from langgraph_durable.checkpointers._otel_calls import note_bytes
from langgraph_durable.checkpointers._readable import unreadable_types

_MAX_DEPTH = 64
_PAIR, _NIL = b"\x92", b"\xc0"  # msgpack: an array of two; nil
_OPT = ormsgpack.OPT_NON_STR_KEYS
_BLOCKED_KINDS = ("msgpack_blocked", "msgpack_method_blocked")
# the blocked-type events of the decode running in this thread / task
_blocked: ContextVar[list[str] | None] = ContextVar("lgd_blocked_types", default=None)


class BlockedTypeError(ValueError):
    """Stored data names a type or call outside the serializer's allowlist.

    LangGraph's strict msgpack does not build such an object (no code runs) but
    returns its raw arguments instead, which would hand a node a value of the
    wrong type without a word. The savers refuse the read instead (their
    ``CorruptCheckpointError`` wraps this), naming what was blocked.
    """


def _on_serde_event(event: Any) -> None:
    sink = _blocked.get()
    if sink is not None and event.get("kind") in _BLOCKED_KINDS:
        name = ".".join(str(event.get(k)) for k in ("module", "name", "method") if event.get(k))
        sink.append(name)


register_serde_event_listener(_on_serde_event)


def default_serde() -> SerializerProtocol:
    """Return the serializer the savers use when none is given.

    No pickle fallback, and strict msgpack: only LangGraph's safe types and
    the types a compiled graph adds through ``with_allowlist`` are rebuilt.
    """
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)


def dumps_exact(
    serde: SerializerProtocol,
    value: Any,
    *,
    field: str,
    channel: str | None = None,
    extends: Any = None,
) -> tuple[str, bytes]:
    """``serde.dumps_typed(value)``, refusing values it would not store exactly.

    LangGraph's msgpack encoding replaces a lone surrogate in a string by
    ``"?"`` without a word, and raises a bare ``TypeError`` for a surrogate in
    a dict key or an integer beyond 64 bits. The savers encode through here so
    such a value is refused with :class:`UnstorableValueError` naming ``field``
    instead. The surrogate scan only runs when the output
    holds a ``?`` byte. A value holding a type that the serializer's
    allowlist would refuse on read is refused too, so nothing is stored that
    cannot be read back (:mod:`langgraph_durable.checkpointers._readable`;
    ``extends``: the channel's previous chain state, whose items need no new
    check).

    Raises:
        UnreadableValueError: a read would refuse a type the value holds.
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
    refused = unreadable_types(serde, type_, data, extends=extends)
    if refused:
        raise UnreadableValueError(field=field, channel=channel, types=refused)
    note_bytes(len(data))
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


def loads_exact(
    serde: SerializerProtocol, type_: str, data: bytes, *, rebuilt: bool = False
) -> Any:
    """``serde.loads_typed((type_, data))``, refusing data that names a blocked type.

    ``rebuilt``: the bytes were rebuilt from a delta chain, whose checksum
    covers the items but not the list's header; the decode then also checks
    that the value ends where the bytes do.

    Raises:
        BlockedTypeError: a msgpack ext type outside the allowlist (an
            ``os.system`` or ``subprocess.Popen`` payload, or an application
            type the saver was not allowlisted for), or a JSON ``lc: 2``
            constructor envelope the serializer would not revive.
    """
    token = _blocked.set([])
    try:
        if type_ == "msgpack" and _plain_jsonplus(serde):
            # the serializer's own decode, with plain messages built cheaply
            # (checkpointers/_fast_messages.py); its hook does everything else
            # JsonPlusSerializer sets _unpack_ext_hook in __init__ without declaring it
            hook = fast_ext_hook(serde._unpack_ext_hook)  # type: ignore[attr-defined]
            if rebuilt:
                # decoded as [value, nil]: the value must end exactly where its
                # bytes do (ormsgpack ignores trailing bytes, so a damaged
                # container header, outside the chain's checksum, would read
                # back a prefix of the list)
                pair = ormsgpack.unpackb(_PAIR + data + _NIL, ext_hook=hook, option=_OPT)
                if type(pair) is not list or len(pair) != 2 or pair[1] is not None:
                    raise ValueError("the rebuilt value does not end where its bytes end")
                value = pair[0]
            else:
                value = ormsgpack.unpackb(data, ext_hook=hook, option=_OPT)
        else:
            value = serde.loads_typed((type_, data))
        blocked = _blocked.get()
    finally:
        _blocked.reset(token)
    if blocked:
        raise BlockedTypeError(
            f"refused to rebuild {', '.join(sorted(set(blocked)))}: not in the msgpack "
            "allowlist (for your own types: saver.with_allowlist([(module, name)]))"
        )
    if type_ == "json" and _has_envelope(value, 0):
        raise BlockedTypeError("refused a JSON constructor envelope outside the allowlist")
    return value


def _plain_jsonplus(serde: SerializerProtocol) -> bool:
    """LangGraph's own serializer: not a subclass, no custom ext hook, no wrapped loads.

    A ``loads_typed`` replaced on the instance (metrics, auditing) must keep
    seeing every read, so such a serializer is not bypassed.
    """
    return (
        type(serde) is JsonPlusSerializer
        and "loads_typed" not in vars(serde)
        and not getattr(serde, "_custom_unpack_ext_hook", True)
        and callable(getattr(serde, "_unpack_ext_hook", None))
    )


def _has_envelope(value: Any, depth: int) -> bool:
    """Whether an ``lc: 2`` constructor envelope survived revival (it was refused)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        if value.get("lc") == 2 and value.get("type") == "constructor":
            return True
        return any(_has_envelope(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_envelope(v, depth + 1) for v in value)
    return False
