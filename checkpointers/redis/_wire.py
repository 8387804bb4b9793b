"""The savers' hot path on the wire: RESP on connections held out of redis-py's pool.

A graph run is round trips (an invoke of the benchmark graph is 10), and the
client's cost of one through redis-py is mostly its machinery: the pool's
locks, condition, timeout contexts and observability hooks on every checkout
and release, a per-argument encoder in Python, a timeout task per send and
per reply. The lanes take connections from the client's own pool (connected,
authenticated and ``SELECT``-ed by redis-py: TLS, unix sockets, credential
providers all stay redis-py's) and drive them directly: a batch is packed in
C (``hiredis.pack_command``) and its replies parsed by a hiredis reader.

* :class:`AsyncLane` shares one connection among the calls of the event
  loop: what they queue in one turn of the loop goes out in one write, and a
  reader task hands the replies back in order (20 concurrent graph runs make
  a fraction of the socket writes and reads they would make one by one).
* :class:`Lane` keeps a few connections checked out, one per call at a
  time (threads).

Only commands whose raw replies are what the core parses go this way
(:data:`DIRECT`): no redis-py reply callback is skipped that matters. A
connection that met an error is disconnected and handed back to the pool,
and the calls waiting on it fail with ``ConnectionError``/``TimeoutError``,
which the shells retry on a fresh one. Push messages (RESP3) are skipped.
The connections stay in the pool's books as in use, so closing the client
closes them too.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections import deque
from typing import Any

import hiredis
from redis import exceptions as rx
from redis._parsers.base import BaseParser

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
        packed: bytes = hiredis.pack_command(cmds[0])  # hiredis is untyped
        return packed
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
    plain: Any = client
    if getattr(plain, "single_connection_client", False) or plain.connection is not None:
        return None
    return plain.connection_pool


def keep_for(pool: Any) -> int:
    """How many idle connections a lane keeps out of ``pool`` (a quarter, up to 16)."""
    return max(0, min(16, int(getattr(pool, "max_connections", 64)) // 4))


class AsyncLane:
    """Direct execution on one connection of a ``redis.asyncio`` client's pool, shared.

    Calls of every task on the loop share the connection: a call queues its
    packed commands and a future; what was queued in one turn of the event
    loop goes out in one write, and a reader task hands replies to the
    futures in order (replies of a cancelled call are read and dropped, so
    the connection stays in step). Each call's commands stay together, each
    script is atomic on its own: sharing a connection changes no outcome.
    Any error on the connection (closed, a protocol error, no reply for as
    long as the connection's ``socket_timeout`` while calls wait: one timer
    per connection, not one per call) fails every call waiting on it with
    ``ConnectionError`` / ``TimeoutError`` (the shells retry) and hands it back
    to the pool; the next call opens another.
    """

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self._mux: _Mux | None = None
        self._opening: asyncio.Future[_Mux] | None = None

    async def execute(self, cmds: list[Cmd]) -> list[Any]:
        """Send ``cmds`` together; their replies in order (errors as exceptions)."""
        if not cmds:  # nothing to send: no reply would ever answer it
            return []
        mux = self._mux
        if mux is None or mux.dead or mux.loop is not asyncio.get_running_loop():
            mux = await self._open()
        return await mux.send(pack(cmds), len(cmds))

    async def _open(self) -> _Mux:
        loop = asyncio.get_running_loop()
        opening = self._opening
        while opening is not None and opening.get_loop() is loop and not opening.done():
            try:
                return await asyncio.shield(opening)
            except _OpenerCancelled:
                # the others waiting were not cancelled: one of them opens it now
                opening = self._opening
                mux = self._mux
                if mux is not None and not mux.dead and mux.loop is loop:
                    return mux  # that one already did
        self._opening = opening = loop.create_future()
        try:
            conn = await self.pool.get_connection()
        except BaseException as exc:
            cancelled = isinstance(exc, asyncio.CancelledError)
            opening.set_exception(_OpenerCancelled() if cancelled else exc)
            opening.exception()  # retrieved: waiters, if any, get it too
            self._opening = None
            raise
        self._mux = mux = _Mux(self.pool, conn, loop)
        opening.set_result(mux)
        self._opening = None
        return mux


class _OpenerCancelled(rx.ConnectionError):
    """The call opening a lane's connection was cancelled (its waiters open it again)."""


class _Mux:
    """One connection shared by the calls of an :class:`AsyncLane` (see there)."""

    def __init__(self, pool: Any, conn: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.pool = pool
        self.conn = conn
        self.loop = loop
        self.timeout = conn.socket_timeout
        self.dead = False
        self.reader = new_reader()
        self.waiting: deque[tuple[int, list[Any], asyncio.Future[list[Any]]]] = deque()
        self.out: list[bytes] = []
        self.answered = 0  # calls answered so far (the watchdog's measure of progress)
        self.watched = -1  # ``answered`` when the watchdog last looked; -1: not watching
        self.timed_out = False
        self.task = loop.create_task(self._read(), name="redis-saver-reader")

    def send(self, data: bytes, n: int) -> asyncio.Future[list[Any]]:
        fut = self.loop.create_future()
        if self.dead:  # died after the caller got it: nothing would answer (the shell retries)
            fut.set_exception(rx.ConnectionError(CLOSED))
            return fut
        self.waiting.append((n, [], fut))
        if self.watched < 0 and self.timeout:
            self.watched = self.answered
            self.loop.call_later(self.timeout, self._watch)
        if not self.out:
            self.loop.call_soon(self._flush)
        self.out.append(data)
        return fut

    def _flush(self) -> None:
        data = b"".join(self.out)
        self.out.clear()
        if not self.dead:
            self.conn._writer.write(data)

    def _watch(self) -> None:
        if not self.waiting or self.dead:
            self.watched = -1
        elif self.answered == self.watched:  # calls waited a whole timeout for nothing
            self.timed_out = True
            self.kill()
        else:
            self.watched = self.answered
            self.loop.call_later(self.timeout, self._watch)

    def kill(self) -> None:
        """Close the connection: the reader fails every waiting call and hands it back."""
        if not self.dead:
            self.dead = True
            writer = self.conn._writer
            if writer is not None:
                writer.close()

    async def _read(self) -> None:
        stream, reader, waiting = self.conn._reader, self.reader, self.waiting
        try:
            while True:
                chunk = await stream.read(READ_SIZE)
                if not chunk:
                    raise rx.ConnectionError(CLOSED)
                reader.feed(chunk)
                while waiting:
                    n, replies, fut = waiting[0]
                    if not take(reader, replies, n):
                        break
                    waiting.popleft()
                    self.answered += 1
                    if not fut.done():
                        fut.set_result(replies)
                if not waiting and take(reader, [], 1):
                    raise rx.InvalidResponse("a reply nobody asked for")
        except BaseException as exc:
            self.dead = True
            if self.timed_out:
                error: rx.RedisError = rx.TimeoutError("Timeout reading from socket")
            elif isinstance(exc, rx.RedisError):
                error = exc
            else:
                error = rx.ConnectionError(f"Error while reading from Redis: {exc!r}")
            while waiting:
                fut = waiting.popleft()[2]
                if not fut.done():
                    fut.set_exception(error)
            self.out.clear()
            if isinstance(exc, asyncio.CancelledError):  # the loop is shutting down
                writer = self.conn._writer
                if writer is not None:
                    writer.close()
                raise
            try:
                await self.conn.disconnect(nowait=True)
            finally:
                await self.pool.release(self.conn)


class Lane:
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
