"""Storage addresses, parsed without I/O.

The one parser of the command line, the savers' ``from_conn_string`` and the
Agent Server factories.

An address is any form the drivers take: libpq's URLs (``postgresql://``,
``postgres://``, with ``?host=`` and other query parameters, percent-encoded
socket folders as the host) and its keyword DSNs (``host=/tmp dbname=app``),
and redis-py's URLs (``redis://``, ``rediss://``, ``unix:///path.sock?db=N``).
On top of those, the savers' own parameters: ``?schema=NAME`` and
``?prepared_statements=false`` on a Postgres URL (the same keywords in a DSN),
``?prefix=NAME`` on a Redis URL. They are taken off before the driver sees
the rest, which is passed on byte for byte: re-encoding a URL is how sockets
and ``unix://`` URLs get mangled (``urlunsplit`` writes ``unix:/x.sock``) and
passwords changed (``urlencode`` writes a space as ``+``, which libpq reads as
a plus).

The same parse finds every password (the URL's user info, a ``password`` /
``sslpassword`` query parameter or keyword) so it can be masked wherever the
address is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote, unquote

from langgraph_durable.checkpointers._errors import InvalidConfigError

Backend = Literal["postgres", "redis"]

SCHEMES: dict[str, Backend] = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "redis": "redis",
    "rediss": "redis",
    "unix": "redis",
}
"""URL schemes the drivers accept, and the backend of each."""

SAVER_PARAMS: dict[Backend, tuple[str, ...]] = {
    "postgres": ("schema", "prepared_statements"),
    "redis": ("prefix",),
}
"""The savers' own parameters on each backend's address."""
NAMESPACE: dict[Backend, str] = {"postgres": "schema", "redis": "prefix"}
"""The parameter that selects a saver's namespace."""
_OURS = frozenset(p for params in SAVER_PARAMS.values() for p in params)

MASK = "***"
"""What a password is replaced with where an address is shown."""

SECRET_KEYS = frozenset({"password", "sslpassword"})
"""Query parameters and DSN keywords whose value is a secret."""

EXPECTED = "postgresql://, redis://, rediss://, unix:// or a keyword DSN (host=... dbname=...)"

_DSN_START = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
_BOOLEANS = {"true": True, "1": True, "on": True, "yes": True}
_BOOLEANS.update({"false": False, "0": False, "off": False, "no": False})


def _refuse(reason: str) -> InvalidConfigError:
    return InvalidConfigError(field="url", reason=reason)


@dataclass(frozen=True)
class StorageAddress:
    """What ``--url`` says, split into what the driver gets and what the saver gets.

    Attributes:
        backend: ``"postgres"`` or ``"redis"``.
        driver_url: The URL or DSN for the driver: the saver's parameter removed,
            the rest exactly as given.
        options: The saver's own parameters found: ``schema``,
            ``prepared_statements`` (a bool), ``prefix``.
        shown: The address with every password replaced by ``***``, safe to print.
        secrets: The passwords found (as written and percent-decoded).
    """

    backend: Backend
    driver_url: str
    options: dict[str, Any] = field(default_factory=dict)
    shown: str = ""
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Token:
    """One ``key=value`` of a keyword DSN: its decoded parts and where it sits."""

    key: str
    value: str
    start: int
    value_start: int
    end: int


def parse_address(url: str) -> StorageAddress:
    """Split ``url`` into its backend, the driver's URL, the saver's options and its shown form.

    Raises:
        InvalidConfigError: the address is empty, of a kind no driver takes,
            malformed, or carries the other backend's parameter (or one of ours
            twice): ``field`` is ``"url"`` (``"prepared_statements"`` for a
            value that is not a yes/no). The message never repeats a password.
    """
    if not url.strip():
        raise _refuse(f"empty: expected {EXPECTED}")
    if "://" in url:
        return _parse_url(url)
    if _DSN_START.match(url):
        return _parse_dsn(url)
    # not a form we know: echoing it could print a password in a form we cannot parse
    raise _refuse(f"not an address the drivers take (not shown): expected {EXPECTED}")


def redact_url(url: str) -> str:
    """``url`` with every password replaced by ``***``, safe to print or log.

    An address that cannot be parsed is not shown at all.
    """
    try:
        return parse_address(url).shown
    except InvalidConfigError:
        return "(address not shown)"


def with_saver_option(url: str, value: str) -> str:
    """``url`` with the saver's namespace (``schema`` or ``prefix``) set to ``value``.

    Whatever the URL said before is replaced; the rest stays as given.
    """
    address = parse_address(url)
    param = NAMESPACE[address.backend]
    if "://" not in url:
        return f"{address.driver_url} {param}={_dsn_quote(value)}"
    parts = _url_parts(url)
    items = [(k, v) for k, v in parts.items if unquote(k) != param]
    return parts.join([*items, (param, quote(value, safe=""))])


# -- URLs ---------------------------------------------------------------------


@dataclass(frozen=True)
class _UrlParts:
    """A URL cut where the drivers cut it; nothing decoded, nothing re-encoded."""

    scheme: str
    userinfo: str  # up to and including the '@', or ""
    path: str  # host, port, path: everything up to the query
    items: list[tuple[str, str | None]]  # the query's raw key/value pairs

    def join(self, items: list[tuple[str, str | None]], *, userinfo: str | None = None) -> str:
        query = "&".join(k if v is None else f"{k}={v}" for k, v in items)
        head = f"{self.scheme}://{self.userinfo if userinfo is None else userinfo}"
        return head + self.path + (f"?{query}" if query else "")


def _url_parts(url: str, *, widest: bool = False) -> _UrlParts:
    """Cut ``url`` as the drivers do, or (``widest``) with the user info as wide as it can be.

    The drivers end the user info at an ``@`` before the query or path. The
    widest reading ends it at the last ``@`` anywhere: what is masked when the
    URL is shown, so a password with unencoded ``@`` ``?`` ``/`` (a malformed
    URL, but one a user may type) is never shown in part.
    """
    scheme_end = url.index("://")
    body = url[scheme_end + 3 :]
    at = body.rfind("@") if widest else _userinfo_end(body)
    rest = body[at + 1 :]
    path, sep, query = rest.partition("?")
    items = [_split_item(i) for i in query.split("&") if i] if sep else []
    return _UrlParts(url[:scheme_end].lower(), body[: at + 1], path, items)


def _without_ours(items: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    return [(k, v) for k, v in items if unquote(k) not in _OURS]


def _parse_url(url: str) -> StorageAddress:
    parts = _url_parts(url)
    backend = SCHEMES.get(parts.scheme)
    if backend is None:
        shown = re.sub(r"[^a-z0-9+.-]", "", parts.scheme)[:20]
        raise _refuse(f"unsupported URL scheme {shown + '://'!r}: expected {EXPECTED}")
    decoded = [(unquote(k), None if v is None else unquote(v)) for k, v in parts.items]
    options = _take_option(backend, decoded)
    kept = _without_ours(parts.items)
    shown, secrets = _masked(_url_parts(url, widest=True))
    _, more = _masked(parts)  # the password as the driver reads it
    return StorageAddress(
        backend, parts.join(kept), options, shown, tuple(dict.fromkeys(secrets + more))
    )


def _masked(parts: _UrlParts) -> tuple[str, list[str]]:
    """The URL without our parameter, passwords masked; and the passwords."""
    secrets: list[str] = []
    userinfo = parts.userinfo
    user, colon, password = userinfo[:-1].partition(":")
    if colon and password:
        secrets += [password, unquote(password)]
        userinfo = f"{user}:{MASK}@"
    items: list[tuple[str, str | None]] = []
    for k, v in _without_ours(parts.items):
        if unquote(k).lower() in SECRET_KEYS and v:
            secrets += [v, unquote(v)]
            v = MASK
        items.append((k, v))
    return parts.join(items, userinfo=userinfo), secrets


def _userinfo_end(body: str) -> int:
    """Index in ``body`` of the ``@`` that ends the user info as the drivers read it, or -1.

    The last ``@`` before the query; if there is none there, the last one
    before the path.
    """
    q = body.find("?")
    at = body.rfind("@", 0, q if q >= 0 else len(body))
    if at < 0:
        slash = body.find("/")
        at = body.rfind("@", 0, slash if slash >= 0 else len(body))
    return at


def _split_item(item: str) -> tuple[str, str | None]:
    key, eq, value = item.partition("=")
    return key, (value if eq else None)


# -- keyword DSNs ---------------------------------------------------------------


def _parse_dsn(dsn: str) -> StorageAddress:
    tokens = _dsn_tokens(dsn)
    options = _take_option("postgres", [(t.key, t.value) for t in tokens])
    driver, shown, last = [], [], 0
    secrets: list[str] = []
    for t in tokens:
        if t.key in _OURS:
            driver.append(dsn[last : t.start])
            shown.append(dsn[last : t.start])
        elif t.key.lower() in SECRET_KEYS and t.value:
            secrets += [t.value, dsn[t.value_start : t.end]]
            driver.append(dsn[last : t.end])
            shown.append(dsn[last : t.value_start] + MASK)
        else:
            driver.append(dsn[last : t.end])
            shown.append(dsn[last : t.end])
        last = t.end
    return StorageAddress(
        "postgres",
        "".join(driver).strip(),
        options,
        "".join(shown).strip(),
        tuple(dict.fromkeys(secrets)),
    )


def _dsn_tokens(dsn: str) -> list[_Token]:
    """The ``key=value`` pairs of a libpq keyword DSN, as libpq reads them.

    Values are bare (up to whitespace) or single-quoted; a backslash escapes
    the next character in both.

    Raises:
        InvalidConfigError: a keyword without ``=`` or an unterminated quoted value
            (the message shows neither: it could be a password).
    """
    tokens: list[_Token] = []
    i, n = 0, len(dsn)
    while True:
        while i < n and dsn[i].isspace():
            i += 1
        if i >= n:
            return tokens
        start = i
        while i < n and dsn[i] != "=" and not dsn[i].isspace():
            i += 1
        key = dsn[start:i]
        while i < n and dsn[i].isspace():
            i += 1
        if i >= n or dsn[i] != "=" or not key:
            raise _refuse(
                f"not a valid keyword DSN: a keyword without '=' after {len(tokens)} "
                "keyword(s) (the DSN is not shown)"
            )
        i += 1
        while i < n and dsn[i].isspace():
            i += 1
        value_start = i
        value, i = _dsn_value(dsn, i)
        tokens.append(_Token(key, value, start, value_start, i))


def _dsn_value(dsn: str, i: int) -> tuple[str, int]:
    """The value starting at ``i`` (decoded) and the index just past it."""
    n, out = len(dsn), list[str]()
    quoted = i < n and dsn[i] == "'"
    if quoted:
        i += 1
    while True:
        if i >= n:
            if quoted:
                raise _refuse(
                    "not a valid keyword DSN: a quoted value is not closed (the DSN is not shown)"
                )
            return "".join(out), i
        ch = dsn[i]
        if ch == "\\" and i + 1 < n:
            out.append(dsn[i + 1])
            i += 2
            continue
        if (quoted and ch == "'") or (not quoted and ch.isspace()):
            return "".join(out), i + 1 if quoted else i
        out.append(ch)
        i += 1


def _dsn_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- the saver's own parameter ----------------------------------------------------


def _take_option(backend: Backend, pairs: list[tuple[str, str | None]]) -> dict[str, Any]:
    """The saver's parameters among the decoded ``pairs``: each at most once, this backend's."""
    own = SAVER_PARAMS[backend]
    mine, theirs = ("Postgres", "Redis") if backend == "postgres" else ("Redis", "Postgres")
    for key, _ in pairs:
        if key in _OURS and key not in own:
            takes = ", ".join(f"{p}=" for p in own)
            raise _refuse(f"{key}= is for {theirs} addresses; a {mine} one takes {takes}")
    options: dict[str, Any] = {}
    for param in own:
        values = [v for k, v in pairs if k == param]
        if len(values) > 1:
            raise _refuse(f"gives {param}= {len(values)} times; give it once")
        if values:
            options[param] = values[0] or ""
    if "prepared_statements" in options:
        options["prepared_statements"] = parse_bool(
            "prepared_statements", options["prepared_statements"]
        )
    return options


# -- what the Agent Server factories call ------------------------------------------


def backend_of(url: str) -> str | None:
    """``"postgres"``, ``"redis"`` or ``None`` for an address of another kind."""
    if "://" in url:
        return SCHEMES.get(url[: url.index("://")].lower())
    return "postgres" if _DSN_START.match(url) else None


def parse_bool(field: str, value: str) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``on``/``off``, ``yes``/``no``) as a bool.

    Raises:
        InvalidConfigError: ``value`` is none of those, naming ``field``.
    """
    found = _BOOLEANS.get(value.strip().lower())
    if found is None:
        raise InvalidConfigError(field=field, reason=f"{value!r}: expected true or false")
    return found


def conn_string_options(url: str, backend: Backend, **given: Any) -> tuple[str, dict[str, Any]]:
    """What a saver's ``from_conn_string`` opens: the driver's address and the saver's options.

    ``url`` may carry the saver's own parameters, as on the command line
    (``?schema=`` and ``?prepared_statements=`` on Postgres, ``?prefix=`` on
    Redis); they are taken off (the rest goes to the driver as given) and
    become options, as if passed as keywords. ``given`` holds the keywords the
    caller passed (``None``: not passed). A parameter both in the URL and in
    ``given`` must have the same value in both. An empty Postgres address goes
    to libpq as it is (its ``PG*`` environment variables then name the server).

    Returns:
        The address for the driver, and the options found in the URL and in
        ``given`` (those given neither way are left out).

    Raises:
        InvalidConfigError: see :func:`parse_address` (``field`` ``"url"``); an
            address of the other backend; or a parameter whose URL value and
            keyword differ (``field`` is the parameter, both values named).
    """
    passed = {k: v for k, v in given.items() if v is not None}
    if backend == "postgres" and not url.strip():
        return url, passed
    driver_url, found = split_saver_options(url, backend)
    for param, value in found.items():
        if param in passed and passed[param] != value:
            raise InvalidConfigError(
                field=param,
                reason=f"the URL gives ?{param}={value!r} but the keyword gives "
                f"{param}={passed[param]!r}: give it once, or the same value in both",
            )
    return driver_url, {**found, **passed}


def split_saver_options(url: str, backend: str) -> tuple[str, dict[str, Any]]:
    """Take the saver's own parameters off ``url`` (a ``backend`` address).

    Returns:
        The address the driver sees, and the saver options found (``schema``,
        ``prepared_statements`` as a bool, ``prefix``).

    Raises:
        InvalidConfigError: see :func:`parse_address`; also an address of the
            other backend.
    """
    address = parse_address(url)
    if address.backend != backend:
        raise _refuse(f"expected a {backend} address, got a {address.backend} one")
    return address.driver_url, address.options
