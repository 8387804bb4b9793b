"""``langgraph-durable serve``: the approval service (JSON API and console) under uvicorn.

``worker --serve`` runs the same server beside the sweeper and recovery loop.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import click

from langgraph_durable.interrupts._cli_common import (
    CliError,
    bind_graph,
    command,
    load_object,
    open_saver,
    url_option,
)
from langgraph_durable.interrupts._cli_errors import configure_logging
from langgraph_durable.interrupts._cli_options import (
    count_option,
    graph_option,
    option_group,
    seconds_option,
)

# decisions run in worker threads: one connection would serialize them all
SERVE_POOL = 16


@dataclass(frozen=True)
class Serving:
    """Where the approval service listens and whom it lets in (``serve``, ``worker --serve``).

    Attributes:
        host: ``--host``.
        port: ``--port``.
        tokens: ``--tokens``: the bearer tokens file.
        proxy_header: ``--trust-proxy-header``.
        pool_size: ``--pool-size``.
        roles_header: ``--roles-header``.
    """

    host: str
    port: int
    tokens: str | None
    proxy_header: str | None
    pool_size: int
    roles_header: str


serve_options = option_group(
    "serving",
    Serving,
    click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind."),
    click.option(
        "--port", default=8321, show_default=True, type=click.IntRange(0, 65535), help="Port."
    ),
    click.option(
        "--tokens",
        type=click.Path(dir_okay=False),
        default=None,
        help='Bearer tokens file: {"<token>" or "sha256:<hex>": {"id": ..., "roles": [...]}}.',
    ),
    click.option(
        "--trust-proxy-header",
        "proxy_header",
        default=None,
        metavar="HEADER",
        help="Believe this header's user (X-Forwarded-User) from a proxy on this host.",
    ),
    click.option(
        "--pool-size",
        default=SERVE_POOL,
        show_default=True,
        type=click.IntRange(1, 200),
        help="PostgreSQL connections the service's requests share.",
    ),
    click.option(
        "--roles-header",
        default="X-Forwarded-Groups",
        show_default=True,
        help="With --trust-proxy-header: the comma-separated roles header.",
    ),
)
"""``--host``, ``--port``, ``--tokens``, ``--trust-proxy-header``, ``--pool-size``,
``--roles-header`` (one ``serving`` argument: a :class:`Serving`)."""


def _guard(
    login_attempts: int,
    login_window: float,
    session_idle: float,
    session_lifetime: float,
    proxies: tuple[str, ...],
) -> dict[str, Any]:
    if session_idle > session_lifetime:
        raise click.BadParameter("must not exceed --session-lifetime", param_hint="--session-idle")
    return {
        "login_attempts": login_attempts,
        "login_window": login_window,
        "session_idle": session_idle,
        "session_lifetime": session_lifetime,
        "proxies": proxies,
    }


guard_options = option_group(
    "guard",
    _guard,
    count_option(
        "--login-attempts",
        default=10,
        minimum=1,
        help="Failed sign-ins one address may make per --login-window before a 429.",
    ),
    seconds_option(
        "--login-window",
        default=300.0,
        minimum=0,
        min_open=True,
        help="Seconds over which --login-attempts are counted.",
    ),
    seconds_option(
        "--session-idle",
        default=3600.0,
        minimum=0,
        min_open=True,
        help="Seconds a console session lasts unused.",
    ),
    seconds_option(
        "--session-lifetime",
        default=43200.0,
        minimum=0,
        min_open=True,
        help="Seconds a console session lasts at most after sign-in.",
    ),
    click.option(
        "--proxy",
        "proxies",
        multiple=True,
        metavar="ADDRESS",
        help="A reverse proxy's address (repeatable): from it X-Forwarded-For names the "
        "client and X-Forwarded-Proto the scheme. Default: none (with "
        "--trust-proxy-header: this host).",
    ),
)
"""``--login-attempts``, ``--login-window``, ``--session-idle``, ``--session-lifetime``,
``--proxy`` (one ``guard`` argument: :func:`create_app`'s keywords)."""


def guarded(guard: dict[str, Any], authenticate: Any) -> dict[str, Any]:
    """``guard`` with the trusted proxy's addresses as ``proxies`` if none were named."""
    trusted = getattr(authenticate, "trusted", None)
    if not guard["proxies"] and isinstance(trusted, frozenset):
        return {**guard, "proxies": tuple(sorted(trusted))}
    return guard


def authenticator(serving: Serving) -> Any:
    """The ``authenticate`` hook the options chose (one is required).

    Raises:
        CliError: neither ``--tokens`` nor ``--trust-proxy-header`` (or both).
        MissingExtra: the service extra is not installed.
    """
    try:
        import uvicorn  # noqa: F401 (serves the app: checked before any work)

        from langgraph_durable.interrupts.service import BearerTokens, TrustedProxy
    except ImportError as exc:
        from langgraph_durable.interrupts._errors import MissingExtra

        raise MissingExtra(
            feature="the approval service", extra="service", missing=exc.name or str(exc)
        ) from None
    tokens, proxy_header = serving.tokens, serving.proxy_header
    if tokens and proxy_header:
        raise CliError("pass --tokens or --trust-proxy-header, not both")
    if tokens:
        return BearerTokens.from_file(tokens)
    if proxy_header:
        return TrustedProxy(user_header=proxy_header, roles_header=serving.roles_header or None)
    raise CliError(
        "the service needs authentication: --tokens FILE, or --trust-proxy-header HEADER "
        "behind an authenticating proxy"
    )


def build_app(
    saver: Any, graph: Any, authenticate: Any, guard: dict[str, Any], *, metrics: bool = False
) -> Any:
    """The service app over ``saver`` and ``graph`` (with ``/metrics`` if asked)."""
    from langgraph_durable.interrupts.service import create_app

    options = guarded(guard, authenticate)
    return create_app(saver, graph, authenticate=authenticate, metrics=metrics, **options)


class Server:
    """uvicorn serving an app from a background thread (``worker --serve``)."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        self.server = uvicorn.Server(
            uvicorn.Config(
                # the app reads a proxy's headers itself, from the addresses it was
                # given: uvicorn rewriting the peer would hide the proxy behind its clients
                app,
                host=host,
                port=port,
                log_level="info",
                proxy_headers=False,
            )
        )
        self.thread = threading.Thread(target=self.server.run, name="approval-service", daemon=True)

    def start(self) -> None:
        """Start serving; returns once the port listens.

        Raises:
            CliError: the server could not start (the port is taken...).
        """
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise CliError("the approval service did not start (see the log above)")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop serving and wait for open requests."""
        self.server.should_exit = True
        self.thread.join(timeout=10)


@command("serve")
@url_option
@graph_option("The graph whose approvals are decided (decisions resume it).", required=True)
@serve_options
@guard_options
@click.option(
    "--metrics",
    is_flag=True,
    help="Also serve GET /metrics for Prometheus (no login; needs the prometheus extra).",
)
def serve(url: str, spec: str, serving: Serving, metrics: bool, guard: dict[str, Any]) -> None:
    """Serve the approval console and JSON API (/api) at http://HOST:PORT.

    Decisions go through the graph's authorization policy as the signed-in
    user. Signed decision links are honoured when $LANGGRAPH_DURABLE_LINK_SECRET
    is set. The worker (sweeps, recovery) can serve too: worker --serve.
    """
    configure_logging()
    authenticate = authenticator(serving)  # first: it checks the service extra is installed
    import uvicorn

    obj = load_object(spec, what="--graph")
    host, port = serving.host, serving.port
    with open_saver(url, pool_size=serving.pool_size) as saver:
        graph = bind_graph(obj, saver, spec)
        app = build_app(saver, graph, authenticate, guard, metrics=metrics)
        click.echo(f"approval service on http://{host}:{port}/ (Ctrl-C to stop)")
        uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)
