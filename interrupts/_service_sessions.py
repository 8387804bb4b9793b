"""Console sessions and the gate every request passes: credential, limit, session.

A console sign-in gets an opaque random session id (the cookie) that maps, in
this process only, to the identity and to the credential it signed in with.
The credential never leaves the server; it is checked again by the
``authenticate`` hook on every use, so a token removed from the tokens file
ends the sessions it opened at their next request. A session ends after
``idle`` seconds unused, ``lifetime`` seconds after sign-in, at sign-out, or
when the process restarts.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request

from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._errors import InvalidInput
from langgraph_durable.interrupts._service_auth import SESSION_COOKIE, Authenticate, identify
from langgraph_durable.interrupts._service_limits import FailureLimiter

DEFAULT_IDLE = 3_600.0
DEFAULT_LIFETIME = 12 * 3_600.0
DEFAULT_CAPACITY = 10_000


@dataclass
class _Session:
    token: str
    started: float
    used: float


def _positive(value: object, parameter: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise InvalidInput(parameter=parameter, reason="must be a positive number of seconds")
    return float(value)


class Sessions:
    """Session ids mapped to the credential they signed in with, in this process.

    Args:
        idle: Seconds a session lasts unused.
        lifetime: Seconds a session lasts at most, used or not.
        capacity: Most sessions kept; past it the least recently used ends.
        now: Monotonic time source, in seconds (tests).

    Raises:
        InvalidInput: a bound is not positive, or ``idle`` exceeds ``lifetime``.
    """

    def __init__(
        self,
        *,
        idle: float = DEFAULT_IDLE,
        lifetime: float = DEFAULT_LIFETIME,
        capacity: int = DEFAULT_CAPACITY,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle = _positive(idle, "session_idle")
        self.lifetime = _positive(lifetime, "session_lifetime")
        if self.idle > self.lifetime:
            raise InvalidInput(parameter="session_idle", reason="must not exceed session_lifetime")
        self.capacity = capacity
        self._now = now
        self._open: OrderedDict[str, _Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def open(self, token: str) -> str:
        """A new session for a credential that was just accepted; its id."""
        now = self._now()
        sid = secrets.token_urlsafe(32)
        self._open[sid] = _Session(token=token, started=now, used=now)
        while len(self._open) > self.capacity:
            self._open.popitem(last=False)
        return sid

    def use(self, sid: str) -> str | None:
        """The credential of a live session (its idle time restarts), or ``None``."""
        session = self._open.get(sid)
        if session is None:
            return None
        now = self._now()
        if now - session.used > self.idle or now - session.started > self.lifetime:
            del self._open[sid]
            return None
        session.used = now
        self._open.move_to_end(sid)
        return session.token

    def close(self, sid: str) -> None:
        """End a session (sign-out, or its credential is no longer accepted)."""
        self._open.pop(sid, None)


def _bearer(request: Request, token: str) -> Request:
    """The request as if it carried ``token`` in ``Authorization`` (for the hook)."""
    headers = [(k, v) for k, v in request.scope["headers"] if k != b"authorization"]
    headers.append((b"authorization", f"Bearer {token}".encode()))
    return Request({**request.scope, "headers": headers})


class Gate:
    """Who a request is: its credential (limited), else its console session.

    Args:
        authenticate: The service's hook.
        limiter: Failed attempts per address.
        sessions: The console's sessions.
    """

    def __init__(
        self, authenticate: Authenticate, limiter: FailureLimiter, sessions: Sessions
    ) -> None:
        self.authenticate = authenticate
        self.limiter = limiter
        self.sessions = sessions

    async def identity(self, request: Request) -> Decider | None:
        """The request's decider, or ``None``.

        A request with an ``Authorization`` header is an attempt: refused
        outright while its address is over the limit, counted if it fails, and
        never helped by a session cookie. Without one the hook still runs (a
        trusted proxy's headers), then the session cookie is tried.

        Raises:
            TooManyAttempts: the address is over its limit.
        """
        if "authorization" in request.headers:
            self.limiter.check(request)
            decider = await identify(self.authenticate, request)
            if decider is None:
                self.limiter.failed(request)
            return decider
        decider = await identify(self.authenticate, request)
        if decider is not None:
            return decider
        sid = request.cookies.get(SESSION_COOKIE)
        token = self.sessions.use(sid) if sid else None
        if sid is None or token is None:
            return None
        decider = await identify(self.authenticate, _bearer(request, token))
        if decider is None:
            self.sessions.close(sid)
        return decider

    async def sign_in(self, request: Request, token: str) -> str | None:
        """A new session id for a valid ``token``; ``None`` (counted) for a wrong one.

        Raises:
            TooManyAttempts: the address is over its limit (``token`` not checked).
        """
        self.limiter.check(request)
        if token and await identify(self.authenticate, _bearer(request, token)) is not None:
            # signing in again replaces the session the browser had
            self.sign_out(request)
            return self.sessions.open(token)
        self.limiter.failed(request)
        return None

    def sign_out(self, request: Request) -> None:
        """End the request's session on the server."""
        sid = request.cookies.get(SESSION_COOKIE)
        if sid:
            self.sessions.close(sid)
