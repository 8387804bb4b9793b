"""An embedded PostgreSQL for the demo and notebooks (the ``embedded`` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph_durable.interrupts._cli_common import URL_ENV
from langgraph_durable.interrupts._errors import MissingExtra


def cache_folder() -> Path:
    """The user's cache folder for langgraph-durable (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "langgraph-durable"


def pgserver_module() -> Any:
    """The ``pgserver`` module that runs the embedded PostgreSQL.

    Raises:
        MissingExtra: it is not installed (the ``embedded`` extra).
    """
    try:
        import pgserver
    except ImportError as exc:
        raise MissingExtra(
            feature="the embedded PostgreSQL",
            extra="embedded",
            missing=exc.name or "pgserver",
            instead=f"set {URL_ENV} to the URL of a PostgreSQL or Redis server",
        ) from None
    return pgserver


def start_embedded_postgres(folder: Path | None = None) -> tuple[str, Any]:
    """Start (or join) the embedded PostgreSQL whose data lives under ``folder``.

    Returns:
        ``(url, handle)``: keep ``handle`` alive while the server is needed and call
        ``handle.cleanup()`` when done; the data stays on disk for the next run.

    Raises:
        MissingExtra: pgserver is not installed (the ``embedded`` extra); its
            message also names ``LANGGRAPH_DURABLE_URL``, the examples' other way.
    """
    pgserver = pgserver_module()
    folder = folder or cache_folder() / "pgdata"
    folder.mkdir(parents=True, exist_ok=True)
    # pgserver exports get_server without declaring it (no __all__, no stubs)
    server = pgserver.get_server(folder, cleanup_mode="stop")
    return str(server.get_uri()), server
