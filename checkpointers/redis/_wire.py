"""The savers' hot path on the wire: RESP on connections held out of redis-py's pool.

A graph run is round trips (an invoke of the benchmark graph is 10), and the
client's cost of one through redis-py is mostly its machinery: the pool's
locks, condition, timeout contexts and observability hooks on every checkout
and release, a per-argument encoder in Python, a timeout task per send and
per reply. A :class:`AsyncLane` / :class:`SyncLane` keeps a few connections
checked out of the client's own pool (connected, authenticated, ``SELECT``-ed
by redis-py: TLS, unix sockets, credential providers all stay redis-py's) and
drives them directly: a batch is packed in C (``hiredis.pack_command``),
written once, and its replies parsed by one hiredis reader per connection.

Only commands whose raw replies are what the core parses go this way
(:data:`DIRECT`): no redis-py reply callback is skipped that matters.
A connection that met any error, or a cancellation mid-call, is disconnected
and handed back to the pool (its replies may be half read); a dropped
connection also drops the idle ones (a restarted server closed them all), so
the shells' retry gets a fresh connection. Push messages (RESP3) are skipped.
The connections stay in the pool's books as in use, so closing the client
closes them too; a lane holds at most ``keep`` idle ones.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import Any

import hiredis
from redis import exceptions as rx
from redis._parsers.base import BaseParser

if sys.version_info >= (3, 11):
    from asyncio import timeout as _timeout
else:  # pragma: no cover - redis-py depends on async-timeout there
    from async_timeout import timeout as _timeout

Cmd = tuple[Any, ...]
DIRECT = frozenset(
    {"EVALSHA", "EVAL", "ZADD", "ZREM", "SADD", "SREM", "PEXPIRE", "HMGET", "GET", "INCR"}
)
"""Commands a lane sends (their raw replies are what the core parses; no callback needed)."""
READ_SIZE = 65536
CLOSED = "Connection closed by server."
_PENDING = object()
_PUSH = getattr(hiredis, "PushNotification", None)


def pack(cmds: list[Cmd]) -> bytes:
    """One RESP buffer for a batch of commands (str, bytes, int and float arguments)."""
    if len(cmds) == 1:
        return hiredis.pack_command(cmds[0])  # type: ignore[no-any-return]
    return b"".join([hiredis.pack_command(c) for c in cmds])


def new_reader() -> Any:
    """A reply parser whose error replies are redis-py's exception objects (not raised)."""
    return hiredis.Reader(
        protocolError=rx.InvalidResponse,
        replyError=BaseParser.parse_error,
        notEnoughData=_PENDING,
    )


def take(reader: Any, replies: list[Any], n: int) -> bool:
    """Move parsed replies into ``replies`` until it holds ``n``; ``False``: need data.

    Error replies stay in the list as exceptions (the shells decide), except a
    connection-level one (``LOADING`` and the like), which is raised.
    """
    while len(replies) < n:
        reply = reader.gets()
        if reply is _PENDING:
            return False
        if _PUSH is not None and isinstance(reply, _PUSH):
            continue  # an out-of-band message, not a reply
        if isinstance(reply, rx.ConnectionError):
            raise reply
        replies.append(reply)
    return True


def direct_pool(client: Any, kind: type) -> Any:
    """The pool a lane can use: a plain ``kind`` client that pools its connections."""
    if not isinstance(client, kind):
        return None
    if getattr(client, "single_connection_client", False) or client.connection is not None:
        return None
    return client.connection_pool


def keep_for(pool: Any) -> int:
    """How many idle connections a lane keeps out of ``pool`` (a quarter, up to 16)."""
    return max(0, min(16, int(getattr(pool, "max_connections", 64)) // 4))


class AsyncLane:
    """Direct execution on connections of a ``redis.asyncio`` client's pool."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.keep = keep_for(pool)
        self.idle: list[tuple[Any, Any]] = []

    async def execute(self, cmds: list[Cmd]) -> list[Any]:
        """Send ``cmds`` in one write; their replies in order (errors as exceptions)."""
        data = pack(cmds)
        conn, reader = await self._checkout()
        replies: list[Any] = []
        try:
            stream = conn._reader
            conn._writer.write(data)
            n = len(cmds)
            timeout = conn.socket_timeout
            async with _timeout(timeout if timeout else None):
                while not take(reader, replies, n):
                    chunk = await stream.read(READ_SIZE)
                    if not chunk:
                        raise rx.ConnectionError(CLOSED)
                    reader.feed(chunk)
        except BaseException as exc:
            await self._discard(conn, dropped=isinstance(exc, (rx.ConnectionError, OSError)))
            if isinstance(exc, asyncio.TimeoutError):
                raise rx.TimeoutError("Timeout reading from socket") from exc
            if isinstance(exc, OSError):
                raise rx.ConnectionError(f"Error while talking to Redis: {exc}") from exc
            raise
        if len(self.idle) < self.keep:
            self.idle.append((conn, reader))
        else:
            await self.pool.release(conn)
        return replies

    async def _checkout(self) -> tuple[Any, Any]:
        while self.idle:
            conn, reader = self.idle.pop()
            stream = conn._reader
            if stream is not None and not stream.at_eof() and stream.exception() is None:
                return conn, reader
            await self._discard(conn, dropped=False)
        conn = await self.pool.get_connection()
        return conn, new_reader()

    async def _discard(self, conn: Any, *, dropped: bool) -> None:
        stale = [c for c, _ in self.idle] if dropped else []
        if dropped:
            self.idle.clear()
        for c in (conn, *stale):
            try:
                await c.disconnect(nowait=True)
            finally:
                await self.pool.release(c)


class SyncLane:
    """Direct execution on connections of a ``redis.Redis`` client's pool (thread-safe)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.keep = keep_for(pool)
        self.idle: list[tuple[Any, Any]] = []  # list.pop/append are atomic

    def execute(self, cmds: list[Cmd]) -> list[Any]:
        """Send ``cmds`` in one write; their replies in order (errors as exceptions)."""
        data = pack(cmds)
        conn, reader = self._checkout()
        replies: list[Any] = []
        try:
            sock = conn._sock
            sock.sendall(data)
            n = len(cmds)
            while not take(reader, replies, n):
                chunk = sock.recv(READ_SIZE)
                if not chunk:
                    raise rx.ConnectionError(CLOSED)
                reader.feed(chunk)
        except BaseException as exc:
            self._discard(conn, dropped=isinstance(exc, (rx.ConnectionError, OSError)))
            if isinstance(exc, socket.timeout):
                raise rx.TimeoutError("Timeout reading from socket") from exc
            if isinstance(exc, OSError):
                raise rx.ConnectionError(f"Error while talking to Redis: {exc}") from exc
            raise
        if len(self.idle) < self.keep:
            self.idle.append((conn, reader))
        else:
            self.pool.release(conn)
        return replies

    def _checkout(self) -> tuple[Any, Any]:
        while True:
            try:
                conn, reader = self.idle.pop()
            except IndexError:
                break
            if conn._sock is not None and getattr(conn, "pid", None) in (None, os.getpid()):
                return conn, reader
            self._discard(conn, dropped=False)
        conn = self.pool.get_connection()
        return conn, new_reader()

    def _discard(self, conn: Any, *, dropped: bool) -> None:
        stale: list[Any] = []
        if dropped:
            while True:
                try:
                    stale.append(self.idle.pop()[0])
                except IndexError:
                    break
        for c in (conn, *stale):
            try:
                c.disconnect()
            finally:
                self.pool.release(c)

