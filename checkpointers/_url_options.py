"""The savers' own query parameters on a storage URL (shared by the CLI and the server factories).

``?schema=NAME`` and ``?prepared_statements=false`` on a Postgres URL,
``?prefix=NAME`` on a Redis one: taken off before the driver sees the URL
(libpq refuses parameters it does not know).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from langgraph_durable.checkpointers._errors import InvalidConfigError

SAVER_PARAMS = {"postgres": ("schema", "prepared_statements"), "redis": ("prefix",)}
_BOOLEANS = {"true": True, "1": True, "on": True, "yes": True}
_BOOLEANS.update({"false": False, "0": False, "off": False, "no": False})


def backend_of(url: str) -> str | None:
    """``"postgres"``, ``"redis"`` or ``None`` for a URL of another scheme."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("postgresql", "postgres"):
        return "postgres"
    if scheme in ("redis", "rediss", "unix"):
        return "redis"
    return None


def parse_bool(field: str, value: str) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``on``/``off``, ``yes``/``no``) as a bool.

    Raises:
        InvalidConfigError: ``value`` is none of those, naming ``field``.
    """
    found = _BOOLEANS.get(value.strip().lower())
    if found is None:
        raise InvalidConfigError(field=field, reason=f"{value!r}: expected true or false")
    return found


def split_saver_options(url: str, backend: str) -> tuple[str, dict[str, Any]]:
    """Take the saver's own query parameters off ``url``.

    Returns:
        The URL the driver sees, and the saver options found (``schema``,
        ``prepared_statements`` as a bool, ``prefix``).

    Raises:
        InvalidConfigError: ``prepared_statements`` is not a yes/no value.
    """
    params = SAVER_PARAMS[backend]
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options: dict[str, Any] = {k: v for k, v in query if k in params}
    if "prepared_statements" in options:
        options["prepared_statements"] = parse_bool(
            "prepared_statements", options["prepared_statements"]
        )
    rest = [(k, v) for k, v in query if k not in params]
    return urlunsplit(parts._replace(query=urlencode(rest))), options
