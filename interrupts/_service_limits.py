"""A bound on failed sign-ins per client address, kept in the service's process.

Every attempt that presents a credential (an ``Authorization`` header, or the
console's sign-in form) is first checked against the limiter: an address with
``attempts`` failures within the last ``window`` seconds is refused with 429
and ``Retry-After`` without its credential being looked at. A successful
sign-in is never counted nor delayed. The addresses tracked are capped; past
the cap the one whose last failure is oldest is forgotten first.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from starlette.requests import Request

from langgraph_durable.interrupts._errors import InterruptsError, InvalidInput

log = logging.getLogger("langgraph_durable.interrupts.service")

DEFAULT_ATTEMPTS = 10
DEFAULT_WINDOW = 300.0
DEFAULT_TRACKED = 10_000
# a refused address is logged when it is first refused, then at most this often
LOG_EVERY = 60.0


class TooManyAttempts(InterruptsError):
    """Too many failed sign-ins from this address lately; the credential was not checked.

    Attributes:
        retry_after: Seconds until the address may try again.
    """

    def __init__(self, *, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(f"too many failed sign-ins from this address: retry in {retry_after} s")


def from_proxy(request: Request, proxies: Collection[str]) -> bool:
    """Whether the request's peer is one of the reverse proxies the service was told of."""
    return bool(proxies) and request.client is not None and request.client.host in proxies


def client_address(request: Request, proxies: Collection[str] = ()) -> str:
    """The peer, or from a listed proxy the address it appended to ``X-Forwarded-For``.

    Only the last entry is the proxy's own word; earlier ones are whatever the
    client sent.
    """
    peer = request.client.host if request.client else ""
    if from_proxy(request, proxies):
        forwarded = request.headers.get("x-forwarded-for", "").split(",")[-1].strip()
        return forwarded or peer
    return peer


def client_key(request: Request, proxies: Collection[str] = ()) -> str:
    """The address a request is counted against.

    An IPv6 client is counted by its /64: one host usually holds the whole
    prefix and could otherwise step through addresses past the limit.
    """
    host = client_address(request, proxies)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


@dataclass
class _Client:
    failures: deque[float] = field(default_factory=deque)
    refused: int = 0
    logged: float = -math.inf


class FailureLimiter:
    """Failed authentications per client address in a sliding window.

    Args:
        attempts: Failures allowed within ``window`` before further attempts are refused.
        window: The window, in seconds.
        tracked: Most addresses remembered at once (oldest forgotten first).
        proxies: Reverse proxies whose ``X-Forwarded-For`` names the client.
        now: Monotonic time source, in seconds (tests).

    Raises:
        InvalidInput: a bound is not a positive number.
    """

    def __init__(
        self,
        *,
        attempts: int = DEFAULT_ATTEMPTS,
        window: float = DEFAULT_WINDOW,
        tracked: int = DEFAULT_TRACKED,
        proxies: Collection[str] = (),
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise InvalidInput(parameter="login_attempts", reason="must be an int of at least 1")
        if not isinstance(window, int | float) or isinstance(window, bool) or window <= 0:
            raise InvalidInput(parameter="login_window", reason="must be a positive number")
        if not isinstance(tracked, int) or tracked < 1:
            raise InvalidInput(parameter="tracked", reason="must be an int of at least 1")
        self.attempts = attempts
        self.window = float(window)
        self.tracked = tracked
        self.proxies = frozenset(proxies)
        self._now = now
        self._clients: OrderedDict[str, _Client] = OrderedDict()

    def _current(self, key: str, now: float) -> _Client | None:
        client = self._clients.get(key)
        if client is None:
            return None
        while client.failures and client.failures[0] <= now - self.window:
            client.failures.popleft()
        if not client.failures:
            del self._clients[key]
            return None
        return client

    def check(self, request: Request) -> None:
        """Refuse the attempt if its address used up its failures.

        Raises:
            TooManyAttempts: with the seconds until the oldest failure leaves the window.
        """
        key = client_key(request, self.proxies)
        now = self._now()
        client = self._current(key, now)
        if client is None or len(client.failures) < self.attempts:
            return
        retry = max(1, math.ceil(client.failures[0] + self.window - now))
        client.refused += 1
        # one line a minute per address, with the count: a flood of guesses is not
        # a flood of log lines
        if now - client.logged >= LOG_EVERY:
            log.warning(
                "refused %d sign-in attempt(s) from %s: %d failures within %g s; retry in %d s",
                client.refused,
                key,
                len(client.failures),
                self.window,
                retry,
            )
            client.logged = now
            client.refused = 0
        raise TooManyAttempts(retry_after=retry)

    def failed(self, request: Request) -> None:
        """Count a failed authentication against the request's address."""
        key = client_key(request, self.proxies)
        now = self._now()
        client = self._current(key, now) or _Client()
        client.failures.append(now)
        # only the newest `attempts` failures can ever matter
        while len(client.failures) > self.attempts:
            client.failures.popleft()
        self._clients[key] = client
        self._clients.move_to_end(key)
        while len(self._clients) > self.tracked:
            self._clients.popitem(last=False)
