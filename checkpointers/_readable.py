"""Write-time check: would a read rebuild every type in these bytes? (no I/O)

The savers read with a strict msgpack allowlist: a stored type outside it is
refused on read (``CorruptCheckpointError``), which an application meets when
it resumes a thread, hours after the write. So every value is checked when it
is written: :func:`unreadable_types` lists the types in its encoding that the
serializer's allowlist would refuse, and the saver refuses the write instead
(:class:`~langgraph_durable.checkpointers.UnreadableValueError`).

The check decodes without building anything: LangGraph's msgpack stores an
object as an ext value holding ``(module, name, args...)``, and the hook below
only reads those names. Bytes with no ext header at all (plain data) skip the
decode; an object seen before with nothing refused in it (the same message
stored again on the next step) is not decoded again; and a growing list whose
previous version this serializer checked (its chain state, ``extends``) has
only its new items checked.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = ["mark_readable", "unreadable_types"]

_OPT = ormsgpack.OPT_NON_STR_KEYS
# LangGraph's ext codes (langgraph.checkpoint.serde.jsonplus): objects rebuilt
# from (module, name, ...) and checked against the allowlist; a method call
# checked against the safe methods; containers of other values
_BY_NAME = frozenset((0, 1, 2, 4, 5))
_METHOD = 3
_CONTAINERS = frozenset((6, 7))
# msgpack ext headers (fixext 1-16, ext 8/16/32): bytes without any hold no
# object to check (the scan may also hit a string's or a number's bytes: then
# the decode below answers)
_EXT_HEADER = re.compile(rb"[\xc7-\xc9\xd4-\xd8]")
# at most 1024 payloads of up to 8 KiB each per serializer (8 MiB)
_CACHE_SIZE = 1024
_MAX_CACHED = 8 * 1024
# chain states (delta Links) whose whole value a serializer checked
_VERIFIED_SIZE = 4096
_ARRAYS = (0xDC, 0xDD)


class _Checker:
    """The allowlist of one serializer, and the payloads known to read back under it."""

    def __init__(self, allowed: Any) -> None:
        self.allowed = allowed
        # payloads of objects that hold nothing refused (a thread's messages,
        # encoded again on every step); cleared when full
        self.clean: set[bytes] = set()
        # id -> the Link itself (held, so the id stays its own while listed)
        self.verified: dict[int, Any] = {}

    def allows(self, module: Any, name: Any) -> bool:
        key = (module, name)
        if key in lg_msgpack.SAFE_MSGPACK_TYPES or self.allowed is True:
            return True
        return bool(self.allowed) and key in self.allowed

    def check(self, data: bytes) -> list[str]:
        found: list[str] = []
        clean = self.clean

        def hook(code: int, payload: bytes) -> None:
            if code in _CONTAINERS:
                ormsgpack.unpackb(payload, ext_hook=hook, option=_OPT)
                return
            if (code not in _BY_NAME and code != _METHOD) or payload in clean:
                return
            before = len(found)
            fields = ormsgpack.unpackb(payload, ext_hook=hook, option=_OPT)
            if isinstance(fields, (list, tuple)) and len(fields) >= 2:
                module, name = fields[0], fields[1]
                if code == _METHOD:
                    method = fields[3] if len(fields) > 3 else None
                    if (module, name, method) not in lg_msgpack.SAFE_MSGPACK_METHODS:
                        found.append(f"{module}.{name}.{method}")
                elif not self.allows(module, name):
                    found.append(f"{module}.{name}")
            if len(found) == before and len(payload) <= _MAX_CACHED:
                if len(clean) >= _CACHE_SIZE:
                    clean.clear()
                clean.add(payload)

        ormsgpack.unpackb(data, ext_hook=hook, option=_OPT)
        return found


def _checker(serde: SerializerProtocol) -> _Checker | None:
    """The checker of LangGraph's own serializer (``None`` for any other: not checked)."""
    if type(serde) is not JsonPlusSerializer or "loads_typed" in vars(serde):
        return None
    if getattr(serde, "_custom_unpack_ext_hook", True):
        return None
    allowed = getattr(serde, "_allowed_msgpack_modules", None)
    checker = _checkers.get(serde)
    if checker is None or checker.allowed is not allowed:
        # one per serializer (with_allowlist clones get their own)
        checker = _checkers[serde] = _Checker(allowed)
    return checker


_checkers: weakref.WeakKeyDictionary[SerializerProtocol, _Checker] = weakref.WeakKeyDictionary()


def unreadable_types(
    serde: SerializerProtocol, type_: str, data: bytes, *, extends: Any = None
) -> tuple[str, ...]:
    """The types in ``serde``'s encoding ``(type_, data)`` that a read would refuse.

    Empty when the value reads back. Checked for LangGraph's
    ``JsonPlusSerializer`` (the savers' default, and what LangGraph's strict
    mode installs); another serializer decides for itself on read.
    ``extends``: the chain state (a delta ``Link``) of the channel's previous
    version; if this serializer checked it (:func:`mark_readable`) and ``data``
    only appends items to it, only those items are checked.
    """
    if type_ != "msgpack" or not _EXT_HEADER.search(data):
        return ()
    checker = _checker(serde)
    if checker is None:
        return ()
    tail = _appended(checker, data, extends)
    return tuple(dict.fromkeys(checker.check(data if tail is None else tail)))


def mark_readable(serde: SerializerProtocol, link: Any) -> None:
    """Record that ``serde`` checked the whole value of chain state ``link``."""
    checker = _checker(serde) if link is not None else None
    if checker is None:
        return
    if len(checker.verified) >= _VERIFIED_SIZE:
        checker.verified.clear()
    checker.verified[id(link)] = link


def _appended(checker: _Checker, data: bytes, prev: Any) -> bytes | None:
    """The items ``data`` (an array) appends to ``prev``'s checked array, as an array."""
    link = checker.verified.get(id(prev)) if prev is not None else None
    if link is None or link is not prev:
        return None
    head: bytes = link.header
    body: bytes = link.body
    if not head or not data or not _is_array(head[0]) or not _is_array(data[0]):
        return None
    h = 1 if data[0] <= 0x9F else (3 if data[0] == 0xDC else 5)
    if len(data) < h + len(body) or not data.startswith(body, h):
        return None
    added = _count(data[:h]) - _count(head)
    if added < 0:
        return None
    return b"\xdd" + added.to_bytes(4, "big") + data[h + len(body) :]


def _is_array(b: int) -> bool:
    return 0x90 <= b <= 0x9F or b in _ARRAYS


def _count(header: bytes) -> int:
    if header[0] <= 0x9F:
        return header[0] & 0x0F
    return int.from_bytes(header[1:], "big")
