"""The approval service: a JSON API and a web console over a saver and its graph.

An ASGI app (Starlette) to run with uvicorn (``langgraph-durable serve``) or to
mount in a FastAPI/Starlette app or in Agent Server's ``http.app``::

    from langgraph_durable.interrupts.service import BearerTokens, create_app

    app = create_app(saver, graph, authenticate=BearerTokens.from_file("tokens.json"))

Every decision goes through the library's own ``approve``/``reject``/``edit``/
``respond``/``decide`` (exactly once, authorized by the graph's policy, audited)
with the identity ``authenticate`` returned. Needs the ``service`` extra.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response

from langgraph_durable.checkpointers import CheckpointerError
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._errors import InterruptsError, InvalidInput
from langgraph_durable.interrupts._links import LinkRefused
from langgraph_durable.interrupts._service_api import Api
from langgraph_durable.interrupts._service_auth import (
    Authenticate,
    BearerTokens,
    CsrfRefused,
    NotAuthenticated,
    TrustedProxy,
    hash_token,
)
from langgraph_durable.interrupts._service_console import Console
from langgraph_durable.interrupts._service_http import (
    DEFAULT_MAX_BODY,
    BodyTooLarge,
    error_response,
)
from langgraph_durable.interrupts._service_limits import (
    DEFAULT_ATTEMPTS,
    DEFAULT_WINDOW,
    FailureLimiter,
    TooManyAttempts,
)
from langgraph_durable.interrupts._service_ops import (
    DEFAULT_ADMIN_ROLES,
    ServiceOps,
    UnknownThread,
)
from langgraph_durable.interrupts._service_sessions import (
    DEFAULT_IDLE,
    DEFAULT_LIFETIME,
    Gate,
    Sessions,
)
from langgraph_durable.interrupts._types import CompiledGraph, Saver

__all__ = [
    "Authenticate",
    "BearerTokens",
    "BodyTooLarge",
    "CsrfRefused",
    "LinkRefused",
    "NotAuthenticated",
    "TooManyAttempts",
    "TrustedProxy",
    "UnknownThread",
    "create_app",
    "hash_token",
]


# the console runs no script at all: markup that slipped through escaping could not
# run any either, nor post a form elsewhere, nor load anything from another origin
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class _SecurityHeaders(BaseHTTPMiddleware):
    # the console is never framed (clickjacking a decision button) nor sniffed
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        # never a link's token to another site; the console's own forms name their
        # origin (with no-referrer a browser posts them as Origin: null)
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response


def _check(saver: Any, graph: Any, authenticate: Any, max_body: Any) -> None:
    if type(saver).__name__.startswith("Async"):
        raise InvalidInput(
            parameter="saver",
            reason="the service runs on a sync saver (PostgresSaver, RedisSaver); "
            f"got {type(saver).__name__}",
        )
    if getattr(graph, "checkpointer", None) is not saver:
        raise InvalidInput(parameter="graph", reason="must be compiled with checkpointer=saver")
    if not callable(authenticate):
        raise InvalidInput(parameter="authenticate", reason="must be a callable taking the request")
    if not isinstance(max_body, int) or max_body < 1024:
        raise InvalidInput(parameter="max_body", reason="must be an int of at least 1024 bytes")


def create_app(
    saver: Saver,
    graph: CompiledGraph,
    *,
    authenticate: Authenticate,
    link_secret: str | bytes | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    clock: Clock | None = None,
    title: str = "Approvals",
    metrics: bool = False,
    admin_roles: Collection[str] = DEFAULT_ADMIN_ROLES,
    login_attempts: int = DEFAULT_ATTEMPTS,
    login_window: float = DEFAULT_WINDOW,
    session_idle: float = DEFAULT_IDLE,
    session_lifetime: float = DEFAULT_LIFETIME,
    proxies: Collection[str] = (),
) -> Starlette:
    """Build the approval service's ASGI app.

    Routes (relative to where it is mounted): the JSON API under ``/api``
    (``/api/openapi.json`` describes it), ``/healthz``, the console (``/inbox``,
    ``/threads/<id>``, ``/health``, ``/login``) and signed decision links
    (``/link/<thread id>?token=...``, see
    :func:`~langgraph_durable.interrupts.decision_link`).

    Args:
        saver: The sync saver the graph runs on (``PostgresSaver``, ``RedisSaver``).
        graph: The graph compiled with ``checkpointer=saver``; decisions resume it.
        authenticate: ``authenticate(request) -> Decider | None`` (may be async):
            :class:`BearerTokens`, :class:`TrustedProxy` or your own. ``None`` is 401.
        link_secret: The key decision links are signed with (the same as
            ``decision_link``'s); ``None``: ``$LANGGRAPH_DURABLE_LINK_SECRET`` if set,
            else links are refused.
        max_body: Largest request body accepted, in bytes (larger: 413).
        clock: Time source (tests).
        title: Shown in the console's header.
        metrics: Also serve ``GET /metrics`` (no login): the process's metrics in
            Prometheus' format, the approval and run gauges measured per scrape
            (needs the prometheus extra; see docs/guides/observability.md).
        admin_roles: Roles whose holders read every thread and its audit trail.
            Anyone else reads the threads with an approval the graph's policy lets
            them decide (pending or past) and those they decided on; other thread
            ids are a 404 as if not stored. Deciding is always the policy's.
        login_attempts: Failed authentications (a wrong bearer token in a header or
            on the sign-in page) one client address may make within ``login_window``
            seconds; past that its attempts are a 429 with ``Retry-After``, their
            credential unchecked. The address is the peer the ASGI server reports.
        login_window: The window of ``login_attempts``, in seconds.
        session_idle: Seconds a console session lasts unused.
        session_lifetime: Seconds a console session lasts at most after sign-in.
            Sessions live in this process: a restart signs everyone out, and
            several processes need sticky sessions.
        proxies: Addresses of reverse proxies in front of the service. From them,
            and only from them, the last ``X-Forwarded-For`` entry is the client
            address ``login_attempts`` counts against, and ``X-Forwarded-Proto:
            https`` marks cookies ``Secure``. Empty (the default): the socket peer.

    Raises:
        InvalidInput: a parameter is unusable (an async saver, a graph on another saver...).
    """
    import os

    from langgraph_durable.interrupts._links import LINK_SECRET_ENV

    _check(saver, graph, authenticate, max_body)
    if isinstance(admin_roles, str) or not all(isinstance(r, str) and r for r in admin_roles):
        raise InvalidInput(parameter="admin_roles", reason="must be a list of role names")
    if isinstance(proxies, str):
        raise InvalidInput(parameter="proxies", reason="must be a list of addresses")
    secret = link_secret if link_secret is not None else os.environ.get(LINK_SECRET_ENV) or None
    ops = ServiceOps(saver, graph, secret=secret, clock=clock, admin_roles=admin_roles)
    gate = Gate(
        authenticate,
        FailureLimiter(attempts=login_attempts, window=login_window, proxies=proxies),
        Sessions(idle=session_idle, lifetime=session_lifetime),
    )
    api = Api(ops, gate, max_body)
    console = Console(ops, api, title=title)
    routes = [*api.routes(), *console.routes()]
    if metrics:
        from starlette.routing import Route

        from langgraph_durable.interrupts._metrics import metrics_endpoint

        routes.append(Route("/metrics", metrics_endpoint(saver), methods=["GET"]))
    return Starlette(
        routes=routes,
        middleware=[Middleware(_SecurityHeaders)],
        # a saver's errors too: a refused thread id is a 400, a storage failure a 503
        exception_handlers={
            InterruptsError: _handler(console),
            CheckpointerError: _handler(console),
        },
    )


def _handler(console: Console) -> Any:
    async def handle(request: Request, exc: Exception) -> Response:
        if _is_api(request):
            return await error_response(request, exc)
        return await console.error_page(request, exc)

    return handle


def _is_api(request: Request) -> bool:
    root = request.scope.get("root_path", "")
    path = request.url.path
    route = path[len(root) :] if root and path.startswith(root) else path
    return route.startswith("/api/") or route == "/healthz"
