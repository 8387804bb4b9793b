"""A TCP proxy in front of a real Redis that cuts its connections at a chosen point.

A dropped connection made deterministic, instead of a socket timeout racing
the server (a put that finishes within the timeout never drops):

* ``"request"``: of what a client sends on a connection, at most ``cut_after``
  bytes reach the server, then both sides are closed. The server holds part
  of a command and never runs it.
* ``"reply"``: everything the client sends reaches the server, but the reply
  to the first command that ends past byte ``cut_after`` of the connection
  closes both sides instead of being passed on. The server ran that command
  (it replies only after running it); the client never hears so. Replies to
  the commands before it (the small ones a pipeline starts with) pass, so the
  cut always falls on the big command, however fast the server answers them.

Connections that send less than ``cut_after`` bytes (a handshake, a small
command) pass untouched in both modes.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

from redis.connection import parse_url

CHUNK = 65536


@dataclass
class _Link:
    client: socket.socket
    server: socket.socket
    sent: int = 0  # bytes the client sent on this connection
    closed: threading.Event = field(default_factory=threading.Event)
    # "reply" mode: where each command the client sent ends (a byte offset of the
    # connection), the bytes of a command or reply not yet complete, replies seen
    ends: list[int] = field(default_factory=list)
    command: bytearray = field(default_factory=bytearray)
    reply: bytearray = field(default_factory=bytearray)
    replies: int = 0

    def close(self) -> None:
        self.closed.set()
        for s in (self.client, self.server):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


class CuttingProxy:
    """Listen on 127.0.0.1, forward to the Redis at ``upstream`` (a redis:// or unix:// URL).

    Attributes:
        mode: ``"request"`` or ``"reply"`` (see the module).
        cut_after: Bytes a connection may send before it is cut.
        cuts: How many connections were cut so far.
    """

    def __init__(self, upstream: str, *, mode: str, cut_after: int) -> None:
        if mode not in ("request", "reply"):
            raise ValueError(f"mode must be 'request' or 'reply', got {mode!r}")
        self.mode = mode
        self.cut_after = cut_after
        self.cuts = 0
        self._target = parse_url(upstream)
        self._lock = threading.Lock()
        self._links: list[_Link] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        """A redis:// URL that reaches the upstream server (same database) through the proxy."""
        return f"redis://127.0.0.1:{self.port}/{self._target.get('db', 0)}"

    def _connect_upstream(self) -> socket.socket:
        path = self._target.get("path")
        if path:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        return socket.create_connection(
            (self._target.get("host", "127.0.0.1"), self._target.get("port", 6379))
        )

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            link = _Link(client, self._connect_upstream())
            with self._lock:
                self._links.append(link)
            threading.Thread(target=self._upstream, args=(link,), daemon=True).start()
            threading.Thread(target=self._downstream, args=(link,), daemon=True).start()

    def _cut(self, link: _Link) -> None:
        with self._lock:
            if not link.closed.is_set():
                self.cuts += 1
        link.close()

    def _upstream(self, link: _Link) -> None:
        """Client -> server."""
        while not link.closed.is_set():
            data = _recv(link.client)
            if not data:
                link.close()
                return
            if self.mode == "request" and link.sent + len(data) > self.cut_after:
                _send(link.server, data[: self.cut_after - link.sent])
                self._cut(link)
                return
            link.sent += len(data)
            if self.mode == "reply":
                _commands_ended(link, data)
            if not _send(link.server, data):
                link.close()
                return

    def _downstream(self, link: _Link) -> None:
        """Server -> client."""
        while not link.closed.is_set():
            data = _recv(link.server)
            if not data:
                link.close()
                return
            if self.mode == "reply":
                passed, cut = self._replies_to_pass(link, data)
                if cut:
                    _send(link.client, passed)
                    self._cut(link)
                    return
                data = passed
            if not _send(link.client, data):
                link.close()
                return

    def _replies_to_pass(self, link: _Link, data: bytes) -> tuple[bytes, bool]:
        """The complete replies in ``data`` to pass on, and whether to cut after them."""
        link.reply += data
        passed = 0
        while (end := _resp_end(link.reply, passed)) is not None:
            # the client's command was parsed before it was forwarded: its end is known
            if link.ends[link.replies] > self.cut_after:
                return bytes(link.reply[:passed]), True
            link.replies += 1
            passed = end
        out = bytes(link.reply[:passed])
        del link.reply[:passed]
        return out, False

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._listener.close()
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close()


def _recv(s: socket.socket) -> bytes:
    try:
        return s.recv(CHUNK)
    except OSError:
        return b""


def _send(s: socket.socket, data: Any) -> bool:
    try:
        s.sendall(data)
        return True
    except OSError:
        return False


def _commands_ended(link: _Link, data: bytes) -> None:
    """Record the connection offset at which each command completed in ``data`` ends."""
    link.command += data
    start = link.sent - len(link.command)  # the offset of link.command[0]
    pos = 0
    while (end := _resp_end(link.command, pos)) is not None:
        link.ends.append(start + end)
        pos = end
    del link.command[:pos]


def _resp_end(buf: bytearray, pos: int) -> int | None:
    """Where the RESP value starting at ``pos`` ends, or None if ``buf`` does not hold all of it."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    kind, head, pos = buf[pos : pos + 1], buf[pos + 1 : nl], nl + 2
    if kind in (b"+", b"-", b":", b"_", b",", b"#", b"("):
        return pos
    n = int(head)
    if kind in (b"$", b"!", b"="):
        end = pos + n + 2
        return pos if n < 0 else (end if len(buf) >= end else None)
    if kind == b"%":
        n *= 2
    if kind in (b"*", b"~", b">", b"%"):
        for _ in range(max(n, 0)):
            nxt = _resp_end(buf, pos)
            if nxt is None:
                return None
            pos = nxt
        return pos
    raise ValueError(f"not a RESP value: {bytes(buf[pos - 2 : pos + 20])!r}")
