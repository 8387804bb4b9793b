"""A page on a sibling host cannot make the console decide as the signed-in user.

The attack: the console runs at ``ops.corp.example``; a page the user visits at
``evil.corp.example`` (same site, so the ``SameSite=Strict`` session cookie is sent)
sets its own ``lgd_csrf`` cookie for ``corp.example`` and posts a form carrying the
same value. A plain double-submit check passes that; the console must not. Driven
in headless Chromium (Debian's) against the service under uvicorn on PostgreSQL (the
storage plays no part in the attack: one backend).
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from langgraph_durable.interrupts import audit_log, pending_approvals
from langgraph_durable.interrupts._cli_serve import Server
from langgraph_durable.interrupts.service import BearerTokens, create_app
from tests._approval_savers import open_sync, saver_url
from tests._servers import free_port
from tests._service_graphs import graph
from tests._service_support import TOKENS

CHROMIUM = "/usr/bin/chromium"
CONSOLE = "ops.corp.example"
ATTACKER = "evil.corp.example"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    # both names are this host: one site, two origins
    f"--host-resolver-rules=MAP {CONSOLE} 127.0.0.1, MAP {ATTACKER} 127.0.0.1",
]


class Attacker:
    """A page on the sibling host: tosses a CSRF cookie for the parent domain, then
    posts the form it wants (``form``: the action and its fields)."""

    def __init__(self) -> None:
        self.form: tuple[str, dict[str, str]] = ("", {})
        attacker = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                action, fields = attacker.form
                inputs = "".join(
                    f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items()
                )
                body = (
                    f'<form method="post" action="{action}">{inputs}</form>'
                    "<script>document.forms[0].submit()</script>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Set-Cookie", "lgd_csrf=tossed; Domain=corp.example; Path=/")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{ATTACKER}:{self.port}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        yield context
        context.close()


@pytest.fixture
def site(request: pytest.FixtureRequest) -> Iterator[tuple[Any, str]]:
    url, options = saver_url(request, "postgres")
    with open_sync("postgres", url, options) as saver:
        app = create_app(saver, graph(saver), authenticate=BearerTokens(TOKENS))
        port = free_port()
        server = Server(app, "127.0.0.1", port)
        server.start()
        try:
            yield saver, f"http://{CONSOLE}:{port}"
        finally:
            server.stop()


@pytest.fixture
def attacker() -> Iterator[Attacker]:
    evil = Attacker()
    yield evil
    evil.server.shutdown()


def _sign_in(page: Any, url: str) -> None:
    page.goto(f"{url}/inbox")
    page.fill("#token", "alice-token-0001")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/inbox")


def _visit(page: Any, attacker: Attacker) -> None:
    """Open the attacker's page; its script posts the form to the console."""
    page.goto(attacker.url)
    page.wait_for_url(lambda u: CONSOLE in u)
    page.wait_for_load_state()


def test_a_tossed_csrf_cookie_does_not_let_a_sibling_host_decide(
    site: tuple[Any, str], browser: Any, attacker: Attacker
) -> None:
    saver, url = site
    graph(saver).invoke({"amount": 990}, {"configurable": {"thread_id": "refund-csrf"}})
    browser.clear_cookies()
    page = browser.new_page()
    _sign_in(page, url)
    attacker.form = (
        f"{url}/threads/refund-csrf/decide",
        {"csrf": "tossed", "decision": "approve", "comment": "forged"},
    )
    _visit(page, attacker)
    assert "CsrfRefused" in page.content()
    outcomes = [e.outcome for e in audit_log(saver, thread_id="refund-csrf")]
    assert "recorded" not in outcomes
    assert [p.thread_id for p in pending_approvals(saver)] == ["refund-csrf"]
    # the same user's own click still decides: the session was good, only the forgery failed
    page.goto(f"{url}/threads/refund-csrf")
    page.click("button[value=approve]")
    page.wait_for_selector("#done")
    recorded = [e for e in audit_log(saver, thread_id="refund-csrf") if e.outcome == "recorded"]
    assert [(e.actor, e.action) for e in recorded] == [("alice", "approve")]
    page.close()


def test_a_sibling_host_cannot_sign_the_user_out_or_in(
    site: tuple[Any, str], browser: Any, attacker: Attacker
) -> None:
    _, url = site
    browser.clear_cookies()
    page = browser.new_page()
    _sign_in(page, url)
    attacker.form = (f"{url}/logout", {"csrf": "tossed"})
    _visit(page, attacker)
    assert "CsrfRefused" in page.content()
    page.goto(f"{url}/inbox")
    assert page.url == f"{url}/inbox"  # still signed in
    # login CSRF: signing the victim in as someone else is refused too
    browser.clear_cookies()
    attacker.form = (f"{url}/login", {"csrf": "tossed", "token": "alice-token-0001"})
    _visit(page, attacker)
    assert "CsrfRefused" in page.content()
    assert not [c for c in browser.cookies() if c["name"] == "lgd_session"]
    page.close()
