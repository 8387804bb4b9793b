"""A real HTTP webhook receiver the notification tests start (stdlib ``http.server``).

It records every request (headers and raw body), answers 200 unless told to
fail the first ``fail_first`` requests (500), to ``hold`` requests until
released or to answer each ``delay`` seconds late, and de-duplicates what it
got by the event id header, as a real receiver would.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langgraph_durable.interrupts import EVENT_ID_HEADER, verify_signature


@dataclass
class Received:
    """One request as it arrived."""

    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(self.body)["event"]
        return event


@dataclass
class Receiver:
    """A webhook endpoint on 127.0.0.1; ``start()`` binds it (again, after ``stop()``)."""

    port: int = 0
    fail_first: int = 0
    hold: bool = False
    delay: float = 0.0
    redirect: tuple[int, str] | None = None
    """Answer every POST with this status and ``Location`` (a receiver sending it on)."""
    requests: list[Received] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    """Paths of GET requests (what a client following a redirect of a POST sends)."""
    _server: ThreadingHTTPServer | None = None
    _released: threading.Event = field(default_factory=threading.Event)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._arrived:
                    receiver.requests.append(Received(dict(self.headers.items()), body))
                    n = len(receiver.requests)
                    receiver._arrived.notify_all()
                if receiver.hold:
                    receiver._released.wait(60)
                time.sleep(receiver.delay)
                status = 500 if n <= receiver.fail_first else 200
                try:
                    if receiver.redirect is not None:
                        status = receiver.redirect[0]
                    self.send_response(status)
                    if receiver.redirect is not None:
                        self.send_header("Location", receiver.redirect[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender is gone (the test killed it)

            def do_GET(self) -> None:
                receiver.gets.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def release(self) -> None:
        self.hold = False
        self._released.set()

    def wait_for(self, n: int, timeout: float = 30.0) -> None:
        """Block until ``n`` requests arrived (fails the test after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.requests)} of {n} requests arrived"
                self._arrived.wait(left)

    def unique(self) -> dict[str, Received]:
        """The requests by event id (the first of each), as a de-duplicating receiver keeps."""
        out: dict[str, Received] = {}
        for r in self.requests:
            out.setdefault(r.headers[EVENT_ID_HEADER], r)
        return out

    def all_signed(self, secret: str) -> bool:
        """Whether every request's signature verifies with ``secret``."""
        return all(
            verify_signature(
                secret,
                body=r.body,
                timestamp=r.headers["X-Durable-Timestamp"],
                signature_header=r.headers["X-Durable-Signature"],
            )
            for r in self.requests
        )
