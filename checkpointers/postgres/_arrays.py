"""Array parameters of the hot statements, dumped without psycopg's type inference.

psycopg dumps a plain ``list`` parameter by inspecting it at every call: it
looks for an element to learn the element type, picks a dumper for it, and
dumps each element through that dumper, all in Python. The put and
put_writes statements send a dozen arrays each (most of them empty or of one
element), and that inspection was a quarter of the savers' own client CPU on a
graph run. A list wrapped in one of the classes here says its element type;
its dumper writes PostgreSQL's binary array format directly.

The dumpers are registered in psycopg's global adapters for these classes
only (no other type is affected). On a connection whose adapters do not have
them (one made with adapters of its own), psycopg dumps the wrapper as the
``list`` it is: the same values, the slower way.
"""

from __future__ import annotations

import struct
from typing import Any

from psycopg import adapters, pq
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Dumper

# ndim, has-nulls flag, element type, then per dimension its length and lower bound
_HEAD = struct.Struct("!iiIii")
_EMPTY = struct.Struct("!iiI")
_LEN = struct.Struct("!i")
_INT4 = struct.Struct("!ii")
_NULL = _LEN.pack(-1)


class TextArray(list[str | None]):
    """A ``text[]`` parameter (``None`` elements are NULL)."""

    __slots__ = ()


class ByteaArray(list[bytes | None]):
    """A ``bytea[]`` parameter (``None`` elements are NULL)."""

    __slots__ = ()


class IntArray(list[int]):
    """An ``int4[]`` parameter."""

    __slots__ = ()


class _ArrayDumper(Dumper):
    format = pq.Format.BINARY
    element_oid = 0

    def __init__(self, cls: type, context: AdaptContext | None = None) -> None:
        super().__init__(cls, context)
        conn = self.connection
        encoding = conn.info.encoding if conn is not None else "utf-8"
        # psycopg sends text of an SQL_ASCII database as UTF-8 too
        self._encoding = "utf-8" if encoding == "ascii" else encoding

    def element(self, item: Any) -> bytes:
        raise NotImplementedError

    def dump(self, obj: Any) -> Buffer | None:
        if not obj:
            return _EMPTY.pack(0, 0, self.element_oid)
        parts = [b""]
        nulls = 0
        for item in obj:
            if item is None:
                parts.append(_NULL)
                nulls = 1
            else:
                data = self.element(item)
                parts.append(_LEN.pack(len(data)))
                parts.append(data)
        parts[0] = _HEAD.pack(1, nulls, self.element_oid, len(obj), 1)
        return b"".join(parts)


class _TextArrayDumper(_ArrayDumper):
    oid = 1009  # text[]
    element_oid = 25

    def element(self, item: Any) -> bytes:
        # the server refuses a NUL in text, as it does psycopg's own dump
        data: bytes = item.encode(self._encoding)
        return data


class _ByteaArrayDumper(_ArrayDumper):
    oid = 1001  # bytea[]
    element_oid = 17

    def element(self, item: Any) -> bytes:
        return item if type(item) is bytes else bytes(item)


class _IntArrayDumper(_ArrayDumper):
    oid = 1007  # int4[]
    element_oid = 23

    def dump(self, obj: Any) -> Buffer | None:
        if not obj:
            return _EMPTY.pack(0, 0, self.element_oid)
        # every element is 4 bytes: its length and value, packed together
        body = b"".join([_INT4.pack(4, int(i)) for i in obj])
        return _HEAD.pack(1, 0, self.element_oid, len(obj), 1) + body


adapters.register_dumper(TextArray, _TextArrayDumper)
adapters.register_dumper(ByteaArray, _ByteaArrayDumper)
adapters.register_dumper(IntArray, _IntArrayDumper)
