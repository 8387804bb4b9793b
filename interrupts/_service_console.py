"""The approval service's web console: server-rendered pages, forms with CSRF tokens.

Pages: ``/login`` (a bearer token, checked, then an opaque session id in an
HttpOnly cookie), ``/inbox``,
``/threads/<id>`` (the request exactly as fingerprinted, the decision forms,
the timeline on a time axis, the audit trail), ``/health`` and the decision
link page ``/link/<id>?token=...`` (no login: the signed token is the identity).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from langgraph_durable.interrupts._authz import Decider
from langgraph_durable.interrupts._errors import AlreadyDecided, InvalidInput
from langgraph_durable.interrupts._links import LinkClaim
from langgraph_durable.interrupts._records import section
from langgraph_durable.interrupts._service_api import Api, approval_row
from langgraph_durable.interrupts._service_auth import (
    CSRF_COOKIE,
    CSRF_FIELD,
    SESSION_COOKIE,
    NotAuthenticated,
    check_csrf,
    csrf_token,
    form_token,
)
from langgraph_durable.interrupts._service_http import error_headers, read_form, status_of
from langgraph_durable.interrupts._service_limits import from_proxy
from langgraph_durable.interrupts._service_ops import DECISIONS, ServiceOps
from langgraph_durable.interrupts._service_svg import events_of, timeline_svg
from langgraph_durable.interrupts._shapes import DEFAULT_ALLOWED

TEMPLATES = Path(__file__).parent / "_service_templates"


def _span(seconds: float | None) -> str:
    if seconds is None:
        return "no deadline"
    sign = "overdue " if seconds < 0 else ""
    s = abs(int(seconds))
    days, rest = divmod(s, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes = rest // 60
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes:02d}m"
    return f"{sign}{minutes}m {s % 60:02d}s"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


def _base(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


class Console:
    """The console's pages over the service's operations."""

    def __init__(self, ops: ServiceOps, api: Api, *, title: str) -> None:
        self.ops = ops
        self.api = api
        self.title = title
        self.env = Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["pretty"] = _pretty
        self.env.filters["span"] = _span
        self.env.filters["q"] = lambda s: quote(str(s), safe="")

    def render(
        self, request: Request, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """A page, with the CSRF cookie its forms echo."""
        nonce = csrf_token(request)
        html = self.env.get_template(name).render(
            base=_base(request),
            title=self.title,
            csrf=form_token(request, nonce),
            csrf_field=CSRF_FIELD,
            **context,
        )
        response = HTMLResponse(html, status_code=status)
        if request.cookies.get(CSRF_COOKIE) != nonce:
            self._cookie(request, response, CSRF_COOKIE, nonce)
        return response

    def _cookie(self, request: Request, response: Response, name: str, value: str) -> None:
        response.set_cookie(
            name,
            value,
            httponly=True,
            samesite="strict",
            secure=self.over_https(request),
            path=_base(request) or "/",
        )

    def over_https(self, request: Request) -> bool:
        """Whether the browser reached the service over https (at a listed proxy, its word)."""
        if request.url.scheme == "https":
            return True
        proxies = self.api.gate.limiter.proxies
        proto = request.headers.get("x-forwarded-proto", "").split(",")[-1].strip().lower()
        return from_proxy(request, proxies) and proto == "https"

    def _go(self, request: Request, path: str) -> RedirectResponse:
        return RedirectResponse(_base(request) + path, status_code=303)

    async def _user(self, request: Request) -> Decider:
        return await self.api.caller(request)

    async def error_page(self, request: Request, exc: Exception) -> Response:
        """A refused console request: the login page for 401, else the message."""
        if isinstance(exc, NotAuthenticated) and request.method == "GET":
            return self._go(request, "/login?" + urlencode({"next": request.url.path}))
        status = status_of(exc) or 500
        page = self.render(
            request, "message.html", status, error=type(exc).__name__, message=str(exc)
        )
        page.headers.update(error_headers(exc, status) or {})
        return page

    async def home(self, request: Request) -> Response:
        """``/``: the inbox."""
        return self._go(request, "/inbox")

    async def login(self, request: Request) -> Response:
        """``GET/POST /login``: a bearer token, checked, then a session in a cookie.

        Raises:
            TooManyAttempts: too many failed sign-ins from this address (429).
        """
        error = None
        if request.method == "POST":
            # refused before the form is even read: the guess is never checked
            self.api.gate.limiter.check(request)
            form = await read_form(request, self.api.max_body)
            check_csrf(request, form)
            sid = await self.api.gate.sign_in(request, form.get("token", "").strip())
            if sid is not None:
                target = form.get("next", "")
                base = _base(request)
                # only a page of this app: "//host" and "/\\host" lead browsers elsewhere
                if not target.startswith(base + "/") or target[1:2] in ("/", "\\"):
                    target = base + "/inbox"
                response = RedirectResponse(target, status_code=303)
                self._cookie(request, response, SESSION_COOKIE, sid)
                return response
            error = "That token is not valid."
        nxt = request.query_params.get("next", "")
        return self.render(request, "login.html", 401 if error else 200, error=error, next=nxt)

    async def logout(self, request: Request) -> Response:
        """``POST /logout``: the session ends on the server, the cookie in the browser."""
        form = await read_form(request, self.api.max_body)
        check_csrf(request, form)
        self.api.gate.sign_out(request)
        response = self._go(request, "/login")
        response.delete_cookie(SESSION_COOKIE, path=_base(request) or "/")
        return response

    async def inbox(self, request: Request) -> Response:
        """``/inbox``: what the user may decide, overdue first, with the time left."""
        user = await self._user(request)
        q = request.query_params
        overdue = q.get("overdue") in ("1", "true", "on")
        items, cursor = await self.ops.inbox(
            user, approver=q.get("approver") or None, overdue=overdue, cursor=q.get("cursor")
        )
        now = self.ops.now()
        rows = [approval_row(i, now) for i in items]
        rows.sort(key=lambda r: not r["overdue"])
        return self.render(
            request,
            "inbox.html",
            user=user,
            rows=rows,
            approver=q.get("approver", ""),
            overdue=overdue,
            cursor=cursor,
        )

    async def _thread_page(
        self,
        request: Request,
        user: Decider | None,
        thread_id: str,
        reader: Decider | LinkClaim,
        **extra: Any,
    ) -> HTMLResponse:
        detail = await self.ops.thread(reader, thread_id)
        audit = await self.ops.audit(reader, thread_id)
        now = self.ops.now()
        asked = _asked(detail["timeline"])
        pending = [
            {**approval_row(i, now), **asked.get(i.approval_id, _UNKNOWN)}
            for i in detail["pending"]
        ]
        svg = timeline_svg(events_of(detail["timeline"], audit))
        return self.render(
            request,
            extra.pop("template", "thread.html"),
            extra.pop("status", 200),
            user=user,
            thread_id=thread_id,
            state=detail["state"],
            pending=pending,
            decisions=detail["decisions"],
            audit=audit,
            svg=svg,
            **extra,
        )

    async def thread(self, request: Request) -> Response:
        """``/threads/<id>``: the approval page."""
        user = await self._user(request)
        done = request.query_params.get("done")
        # only the redirect's own word: a crafted link must not put its text in the
        # "Recorded" banner of a trusted page
        done = done if done in DECISIONS else None
        thread_id = request.path_params["thread_id"]
        return await self._thread_page(request, user, thread_id, user, done=done)

    async def decide(self, request: Request) -> Response:
        """``POST /threads/<id>/decide``: the form's decision, through the library."""
        user = await self._user(request)
        thread_id = request.path_params["thread_id"]
        form = await read_form(request, self.api.max_body)
        check_csrf(request, form)
        body: dict[str, Any] = {"decision": form.get("decision")}
        for name in ("comment", "text", "item", "approval_id"):
            if form.get(name):
                body[name] = form[name]
        if form.get("decision") == "edit":
            try:
                body["arguments"] = json.loads(form.get("arguments") or "null")
            except ValueError as exc:
                raise InvalidInput(parameter="arguments", reason=f"not JSON: {exc}") from None
        try:
            await self.ops.decide(user, thread_id, body)
        except AlreadyDecided as late:
            return await self._thread_page(request, user, thread_id, user, late=late, status=409)
        return self._go(request, f"/threads/{quote(thread_id, safe='')}?done={body['decision']}")

    async def health(self, request: Request) -> Response:
        """``/health``: approvals waiting and overdue; runs running, orphaned, parked."""
        user = await self._user(request)
        return self.render(request, "health.html", user=user, health=await self.ops.health())

    async def link(self, request: Request) -> Response:
        """``GET/POST /link/<id>?token=...``: decide through a signed link, no login."""
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            token = request.query_params.get("token", "")
            claim = await self.ops.open_link(thread_id, token)
            return await self._thread_page(
                request, None, thread_id, claim, template="link.html", claim=claim, token=token
            )
        form = await read_form(request, self.api.max_body)
        check_csrf(request, form)
        token = form.get("token", "")
        decision = form.get("decision", "")
        done = await self.ops.link_decide(thread_id, token, decision, form.get("comment") or None)
        return self.render(request, "message.html", error=None, message=_decided(done))

    def routes(self) -> list[Route]:
        """The console's routes."""
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/inbox", self.inbox, methods=["GET"]),
            Route("/threads/{thread_id:path}/decide", self.decide, methods=["POST"]),
            Route("/threads/{thread_id:path}", self.thread, methods=["GET"]),
            Route("/health", self.health, methods=["GET"]),
            Route("/link/{thread_id:path}", self.link, methods=["GET", "POST"]),
        ]


_UNKNOWN: dict[str, Any] = {"allowed": list(DEFAULT_ALLOWED), "fingerprint": None}


def _asked(timeline: list[Any]) -> dict[str, dict[str, Any]]:
    """Each pending interrupt's allowed decisions and request fingerprint."""
    out: dict[str, dict[str, Any]] = {}
    for intr in timeline[-1].interrupts if timeline else ():
        sec = section(intr.value)
        out[intr.interrupt_id] = {
            "allowed": list(sec.get("allowed_decisions") or DEFAULT_ALLOWED),
            "fingerprint": sec.get("fingerprint"),
        }
    return out


def _decided(done: dict[str, Any]) -> str:
    record = done.get("decision") or {}
    what = record.get("action") or ("approved" if record.get("approved") else "rejected")
    return f"Recorded: {what} by {record.get('by')} at {record.get('at')}. Thank you."
