"""An embedded PostgreSQL for the demo and notebooks (the ``embedded`` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph_durable.interrupts._cli_common import CliError


def cache_folder() -> Path:
    """The user's cache folder for langgraph-durable (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "langgraph-durable"


def start_embedded_postgres(folder: Path | None = None) -> tuple[str, Any]:
    """Start (or join) the embedded PostgreSQL whose data lives under ``folder``.

    Returns:
        ``(url, handle)``: keep ``handle`` alive while the server is needed and call
        ``handle.cleanup()`` when done; the data stays on disk for the next run.

    Raises:
        CliError: pgserver is not installed (the ``embedded`` extra).
    """
    try:
        import pgserver
    except ImportError:
        raise CliError(
            "the embedded database needs the `embedded` extra: "
            'pip install "langgraph-durable[embedded]" (or pass --url)'
        ) from None
    folder = folder or cache_folder() / "pgdata"
    folder.mkdir(parents=True, exist_ok=True)
    # pgserver exports get_server without declaring it (no __all__, no stubs)
    server = pgserver.get_server(folder, cleanup_mode="stop")  # type: ignore[attr-defined]
    return str(server.get_uri()), server
