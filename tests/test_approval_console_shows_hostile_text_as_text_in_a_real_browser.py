"""Markup in a request payload, a thread id, an approver's name, a comment, an edit, an
answer or an error message is shown as text by the console, never run: checked in headless
Chromium (Debian's) over uvicorn on real Postgres and Redis savers, in the inbox, the
approval page, its timeline's SVG, the audit trail, the link page and the error pages."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any, TypedDict
from urllib.parse import quote

import pytest
from langgraph.graph import END, START, StateGraph

from langgraph_durable.interrupts import Decider, decision_link, request_approval
from langgraph_durable.interrupts._cli_serve import Server
from langgraph_durable.interrupts.service import BearerTokens, create_app
from tests._approval_savers import open_sync, saver_url
from tests._servers import free_port

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SECRET = "hostile-text-link-secret-0123"

# each one would, if it reached the page as markup, add an element the test looks for
# (an <img> or <script> in the body), and run script if it could (a dialog)
PAYLOAD = "</pre><img class=pwned src=x onerror=alert(1)><script>alert(2)</script>"
THREAD = '"><img class="pwned" src=x onerror=alert(3)>'
NAME = '<img class="pwned" src=x onerror=alert(4)>'
COMMENT = "</div><script>alert(5)</script><img class=pwned src=x onerror=alert(5)>"
TEXT = "</textarea><img class=pwned src=x onerror=alert(6)>"
TOKENS = {"hostile-token-01": {"id": NAME, "roles": ["ops"]}}


class State(TypedDict, total=False):
    note: str
    approved: bool


def _graph(saver: Any) -> Any:
    def review(state: State) -> dict[str, Any]:
        d = request_approval(
            {"note": state["note"], "html": PAYLOAD},
            approvers=("ops", NAME),
            allowed_decisions=("approve", "reject", "edit", "respond"),
            description=PAYLOAD,
        )
        return {"approved": d.approved}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        yield context
        context.close()


@pytest.fixture(params=["postgres", "redis"])
def site(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[Any, Any, str]]:
    browser.clear_cookies()
    url, options = saver_url(request, request.param)
    with open_sync(request.param, url, options) as saver:
        graph = _graph(saver)
        app = create_app(saver, graph, authenticate=BearerTokens(TOKENS), link_secret=SECRET)
        port = free_port()
        server = Server(app, "127.0.0.1", port)
        server.start()
        try:
            yield saver, graph, f"http://127.0.0.1:{port}"
        finally:
            server.stop()


class Watched:
    """A page whose dialogs (what alert() would open) are counted."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page()
        self.dialogs: list[str] = []

        def seen(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        self.page.on("dialog", seen)

    def check(self, *shown: str) -> None:
        """Nothing ran, nothing was injected, and each text is on the page as text."""
        page = self.page
        assert self.dialogs == [], page.url
        assert page.locator(".pwned").count() == 0, page.url
        assert page.locator("body script").count() == 0, page.url
        text = page.inner_text("body")
        for s in shown:
            assert s in text, (page.url, s)


def _sign_in(w: Watched, url: str) -> None:
    w.page.goto(f"{url}/inbox")
    w.page.fill("#token", "hostile-token-01")
    w.page.click("button[type=submit]")
    w.page.wait_for_url(f"{url}/inbox")


def test_hostile_text_is_shown_as_text_on_every_page(
    site: tuple[Any, Any, str], browser: Any
) -> None:
    _, graph, url = site
    graph.invoke({"note": PAYLOAD}, {"configurable": {"thread_id": THREAD}})
    graph.invoke({"note": "second"}, {"configurable": {"thread_id": "t-second"}})
    w = Watched(browser)
    _sign_in(w, url)
    w.check(THREAD, NAME)  # the inbox: the thread id, the approvers, the user's own name
    page_of = f"{url}/threads/{quote(THREAD, safe='')}"
    w.page.goto(page_of)
    w.check(THREAD, NAME)
    assert PAYLOAD in w.page.inner_text("pre.request")
    w.page.fill("textarea[name=comment]", COMMENT)
    w.page.click("button[value=approve]")
    w.page.wait_for_selector("#done")
    # the decision, the audit trail and the timeline's SVG all name the decider
    w.check(COMMENT, NAME)
    titles = w.page.eval_on_selector_all("svg.timeline title", "ts => ts.map(t => t.textContent)")
    assert any(NAME in t for t in titles)
    assert w.page.locator("svg.timeline .pwned").count() == 0
    # an error page repeats the thread id it could not find
    w.page.goto(f"{url}/threads/{quote(THREAD + 'x', safe='')}")
    w.check(THREAD + "x")
    # the second thread: answered with text, then a second click shows who decided
    w.page.goto(f"{url}/threads/t-second")
    w.page.click("details:has(textarea[name=text]) summary")
    w.page.fill("textarea[name=text]", TEXT)
    w.page.click("button[value=respond]")
    w.page.wait_for_selector("#done")
    w.check(TEXT)
    w.page.close()


def test_a_link_page_shows_hostile_text_as_text(site: tuple[Any, Any, str], browser: Any) -> None:
    saver, graph, url = site
    graph.invoke({"note": PAYLOAD}, {"configurable": {"thread_id": THREAD}})
    link = decision_link(
        saver, THREAD, decider=Decider(NAME, ("ops",)), base_url=url, secret=SECRET
    )
    w = Watched(browser)
    w.page.goto(link)
    w.check(NAME, THREAD)
    assert PAYLOAD in w.page.inner_text("pre.request")
    w.page.fill("textarea[name=comment]", COMMENT)
    w.page.click("button[value=reject]")
    w.check(NAME)
    # used: the refusal names who decided, as text
    w.page.goto(link)
    w.check(NAME)
    w.page.close()
