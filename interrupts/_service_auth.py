"""Who is calling the approval service: bearer tokens, a trusted proxy, or the user's hook.

Every decision the service records carries the identity an ``authenticate``
hook returned, never one the caller asserts in the body. The hook is any
callable ``authenticate(request) -> Decider | None`` (or a coroutine function):
``None`` means unauthenticated (401, nothing recorded). Two built-ins:

* :class:`BearerTokens`: ``Authorization: Bearer <token>`` checked against a
  file of tokens kept only as sha256 hashes, read again when the file changes;
* :class:`TrustedProxy`: identity headers set by an authenticating reverse proxy,
  believed only from the proxy's own addresses, and only when configured.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import inspect
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._errors import InterruptsError, InvalidInput

log = logging.getLogger("langgraph_durable.interrupts.service")

Authenticate = Callable[[Request], "Decider | Awaitable[Decider | None] | None"]
"""The hook: the request's authenticated decider, or ``None``."""

SESSION_COOKIE = "lgd_session"
CSRF_COOKIE = "lgd_csrf"
CSRF_FIELD = "csrf"
HASH_PREFIX = "sha256:"
# a browser says where a request comes from; only the console's own pages may post
_OWN_PAGES = frozenset({"same-origin", "none"})
_FORM_CONTEXT = b"langgraph-durable console form\x00"


class NotAuthenticated(InterruptsError, PermissionError):
    """The request carries no identity the service accepts; nothing was recorded."""

    def __init__(self, reason: str = "sign in: send Authorization: Bearer <token>") -> None:
        self.reason = reason
        super().__init__(reason)


class CsrfRefused(InterruptsError, PermissionError):
    """A console form the service did not serve to this user; nothing was recorded.

    Attributes:
        reason: What gave it away (another site sent it, or its token is wrong).
    """

    def __init__(self, reason: str = "the form's CSRF token is missing or wrong") -> None:
        self.reason = reason
        super().__init__(f"{reason}: reload the page")


def hash_token(token: str) -> str:
    """``sha256:<hex>`` of a bearer token, as a tokens file may store it."""
    return HASH_PREFIX + hashlib.sha256(token.encode()).hexdigest()


def _decider(value: Any, where: str) -> Decider:
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str) or not value["id"]:
        raise InvalidInput(parameter="tokens", reason=f'{where}: expected {{"id": "...", ...}}')
    roles = value.get("roles") or []
    if isinstance(roles, str) or not all(isinstance(r, str) for r in roles):
        raise InvalidInput(parameter="tokens", reason=f"{where}: roles must be a list of names")
    return Decider(id=value["id"], roles=tuple(roles))


class BearerTokens:
    """Bearer tokens mapped to deciders; only their sha256 hashes are kept.

    The file (or mapping) looks like ``{"<token>": {"id": "alice", "roles": ["ops"]}}``;
    a key ``"sha256:<hex>"`` (:func:`hash_token`) is a token stored hashed, so the
    file need not hold the token itself. Read with :meth:`from_file`, the file is
    read again whenever it changes, so a token removed from it stops working at
    its next use, console sessions it opened included.

    Args:
        tokens: ``{token or "sha256:<hex>": {"id": ..., "roles": [...]}}``.

    Raises:
        InvalidInput: an entry is malformed (names the entry, never the token).
    """

    def __init__(self, tokens: Mapping[str, Any]) -> None:
        self._by_hash = _hashed(tokens)
        self._path: Path | None = None
        self._stamp: tuple[int, int, int] | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> BearerTokens:
        """Read a JSON tokens file.

        The file is read again when its size, modification time or inode change
        (a replace by rename included); a version that cannot be read keeps the
        previous one in force and is logged.

        Raises:
            InvalidInput: the file is missing, not JSON, or malformed.
        """
        tokens = cls(_read(Path(path)))
        tokens._path = Path(path)
        tokens._stamp = _stamp(tokens._path)
        return tokens

    def _reload(self) -> None:
        if self._path is None:
            return
        stamp = _stamp(self._path)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._by_hash = _hashed(_read(self._path))
        except InvalidInput as exc:
            log.error("tokens file not reloaded, the previous one stays in force: %s", exc)
        else:
            log.info("tokens file reloaded: %d token(s)", len(self._by_hash))

    def lookup(self, token: str) -> Decider | None:
        """The decider of ``token``, or ``None``."""
        self._reload()
        wanted = hash_token(token)
        found = None
        # compare against every entry: the time taken says nothing of which matched
        for hashed, decider in self._by_hash.items():
            if hmac.compare_digest(hashed, wanted):
                found = decider
        return found

    def __call__(self, request: Request) -> Decider | None:
        """The decider of the request's ``Authorization: Bearer`` token, or ``None``."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self.lookup(token.strip())
        return None


def _hashed(tokens: Mapping[str, Any]) -> dict[str, Decider]:
    by_hash: dict[str, Decider] = {}
    for n, (key, value) in enumerate(tokens.items()):
        if not isinstance(key, str) or not key:
            raise InvalidInput(parameter="tokens", reason=f"entry {n}: empty token")
        hashed = key if key.startswith(HASH_PREFIX) else hash_token(key)
        by_hash[hashed.lower()] = _decider(value, f"entry {n}")
    return by_hash


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(parameter="tokens", reason=f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput(parameter="tokens", reason=f"{path}: expected a JSON object")
    return data


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


class TrustedProxy:
    """Identity from headers an authenticating reverse proxy sets.

    Only requests from ``trusted`` addresses are believed: anyone else could
    set the header. Use it only behind a proxy that strips the headers from
    what clients send.

    Args:
        user_header: The header naming the user (``X-Forwarded-User``).
        roles_header: A comma-separated list of roles (``X-Forwarded-Groups``), or ``None``.
        trusted: Client addresses of the proxy (default: this host only).
    """

    def __init__(
        self,
        user_header: str = "X-Forwarded-User",
        roles_header: str | None = "X-Forwarded-Groups",
        trusted: Collection[str] = ("127.0.0.1", "::1"),
    ) -> None:
        if not user_header:
            raise InvalidInput(parameter="user_header", reason="must name a header")
        self.user_header = user_header
        self.roles_header = roles_header
        self.trusted = frozenset(trusted)

    def __call__(self, request: Request) -> Decider | None:
        """The proxy's user, when the request comes from the proxy."""
        client = request.client.host if request.client else None
        if client not in self.trusted:
            return None
        user = request.headers.get(self.user_header, "").strip()
        if not user:
            return None
        raw = request.headers.get(self.roles_header, "") if self.roles_header else ""
        roles = tuple(r.strip() for r in raw.split(",") if r.strip())
        return Decider(id=user, roles=roles)


async def identify(authenticate: Authenticate, request: Request) -> Decider | None:
    """Run the hook (sync or async); anything but a ``Decider`` is unauthenticated."""
    got = authenticate(request)
    if inspect.isawaitable(got):
        got = await got
    return got if isinstance(got, Decider) and got.id else None


def csrf_token(request: Request) -> str:
    """The page's anti-forgery nonce: the cookie's, or a new one to set."""
    return request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)


def form_token(request: Request, nonce: str) -> str:
    """The value a page's forms carry: the nonce, bound to the session when there is one.

    A plain double-submit (field equals cookie) falls to a sibling host that sets
    the cookie for the parent domain ("cookie tossing"): it then knows both
    halves. Bound to the session token, which such a host cannot read, the
    field cannot be made without it. The session cookie is an opaque random id
    that never leaves this user's browser and the server.
    """
    session = request.cookies.get(SESSION_COOKIE)
    if not session:
        return nonce
    mac = hmac.new(session.encode(), _FORM_CONTEXT + nonce.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def _from_own_origin(request: Request) -> bool:
    """No ``Origin`` (not a browser, or an old one), or this service's own host.

    ``null`` is refused: the console's pages (``Referrer-Policy: same-origin``)
    make the browser name their origin; a page elsewhere can hide its own.
    """
    origin = request.headers.get("origin")
    if origin is None:
        return True
    hosts = (request.headers.get("host"), request.headers.get("x-forwarded-host"))
    # behind a proxy that rewrites Host, the public name is in X-Forwarded-Host
    own = {h.split(",")[0].strip().lower() for h in hosts if h}
    return urlsplit(origin).netloc.lower() in own


def check_csrf(request: Request, form: Mapping[str, str]) -> None:
    """Refuse a form another site sent, or one whose token is not this page's.

    Two checks: the browser must say the form came from the console's own
    origin (``Sec-Fetch-Site``, else ``Origin``, when it sends them), and the
    form's field must be the cookie's nonce bound to the session
    (:func:`form_token`).

    Raises:
        CsrfRefused: either check fails.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        if site.lower() not in _OWN_PAGES:
            raise CsrfRefused(f"the form was sent from another site (Sec-Fetch-Site: {site})")
    elif not _from_own_origin(request):
        # browsers send no Sec-Fetch-Site to plain-http origins, but an Origin
        raise CsrfRefused(
            f"the form was sent from another site (Origin: {request.headers['origin']})"
        )
    nonce = request.cookies.get(CSRF_COOKIE, "")
    sent = form.get(CSRF_FIELD, "")
    if not nonce or not sent or not hmac.compare_digest(form_token(request, nonce), sent):
        raise CsrfRefused()
