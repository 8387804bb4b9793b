"""The console end to end in headless Chromium (Debian's, driven by Playwright), served by
uvicorn over real Postgres and Redis savers with a real graph waiting for approval."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_durable.interrupts import Decider, audit_log, decision_link, thread_timeline
from langgraph_durable.interrupts._cli_serve import Server
from tests._servers import free_port
from tests._service_support import SECRET, Served, served

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# LANGGRAPH_DURABLE_SCREENSHOTS=docs/images refreshes the documentation's screenshots
SHOTS = os.environ.get("LANGGRAPH_DURABLE_SCREENSHOTS")


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
def site(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[Served, str]]:
    browser.clear_cookies()
    with served(request, request.param) as s:
        port = free_port()
        server = Server(s.app, "127.0.0.1", port)
        server.start()
        try:
            yield s, f"http://127.0.0.1:{port}"
        finally:
            server.stop()


def _page(browser: Any, viewport: dict[str, int]) -> Any:
    page = browser.new_page()
    page.set_viewport_size(viewport)
    return page


def _acted(s: Served, thread_id: str) -> int:
    """How many checkpoints ran the node after the approval (a resume runs it once)."""
    return sum("act" in e.nodes for e in thread_timeline(s.saver, thread_id))


def _login(page: Any, url: str, token: str) -> None:
    page.goto(f"{url}/inbox")
    assert "/login" in page.url
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/inbox")


def _shot(page: Any, name: str, tmp: Path) -> None:
    target = Path(SHOTS) if SHOTS else tmp
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / name), full_page=True)
    assert (target / name).stat().st_size > 5_000


def test_sign_in_open_the_approval_and_approve_with_a_comment(
    site: tuple[Served, str], browser: Any, tmp_path: Path
) -> None:
    s, url = site
    s.ask("refund-1042", amount=120)
    s.ask("refund-1043", amount=75)
    page = _page(browser, {"width": 1000, "height": 700})
    _login(page, url, "alice-token-0001")
    rows = page.locator("tr.approval")
    assert rows.count() == 2
    assert "refund" in rows.first.inner_text()
    _shot(page, "inbox.png", tmp_path)
    page.click("a[href$='/threads/refund-1042']")
    assert '"amount": 120' in page.inner_text("pre.request")
    _shot(page, "approval.png", tmp_path)
    page.fill("textarea[name=comment]", "customer verified by phone")
    page.click("button[value=approve]")
    page.wait_for_selector("#done")
    assert _acted(s, "refund-1042") == 1
    assert _acted(s, "refund-1043") == 0
    recorded = [e for e in audit_log(s.saver, thread_id="refund-1042") if e.outcome == "recorded"]
    assert [(e.actor, e.action) for e in recorded] == [("alice", "approve")]
    assert "customer verified by phone" in page.inner_text(".decision")
    assert "alice" in page.inner_text("table.audit")
    # the timeline is drawn on a time axis: asked, decided and resumed are all there
    kinds = set(
        page.eval_on_selector_all("svg.timeline circle", "cs => cs.map(c => c.dataset.kind)")
    )
    assert {"asked", "decided", "resumed"} <= kinds
    page.close()


def test_a_phone_sized_screen_needs_no_sideways_scrolling(
    site: tuple[Served, str], browser: Any
) -> None:
    s, url = site
    s.ask("refund-7", amount=7)
    page = _page(browser, {"width": 375, "height": 740})
    _login(page, url, "alice-token-0001")
    for path in ("/inbox", "/threads/refund-7", "/health"):
        page.goto(url + path)
        wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, (path, wide)
    assert page.inner_text("#waiting") == "1"
    page.close()


def test_a_signed_link_rejects_without_a_login(site: tuple[Served, str], browser: Any) -> None:
    s, url = site
    s.ask("refund-link", amount=300)
    link = decision_link(
        s.saver, "refund-link", decider=Decider("alice", ("ops",)), base_url=url, secret=SECRET
    )
    page = browser.new_page()
    page.goto(link)
    assert "Your decision, alice" in page.inner_text("h1")
    assert '"amount": 300' in page.inner_text("pre.request")
    page.fill("textarea[name=comment]", "not this one")
    page.click("button[value=reject]")
    assert "Recorded: reject by alice" in page.inner_text(".banner")
    assert _acted(s, "refund-link") == 1
    (entry,) = [e for e in audit_log(s.saver, thread_id="refund-link") if e.outcome == "recorded"]
    assert (entry.actor, entry.action) == ("alice", "reject")
    # the same link again: refused, saying who decided
    page.goto(link)
    assert "already decided by alice" in page.inner_text(".banner")
    page.close()


def test_a_second_click_shows_who_already_decided(site: tuple[Served, str], browser: Any) -> None:
    s, url = site
    s.ask("refund-race", amount=55)
    alice = browser.new_page()
    _login(alice, url, "alice-token-0001")
    alice.goto(f"{url}/threads/refund-race")
    # bob opens the same approval in another tab (same browser: bob signs in after)
    bob = browser.new_page()
    bob.goto(f"{url}/threads/refund-race")
    alice.click("button[value=approve]")
    alice.wait_for_selector("#done")
    bob.click("button[value=reject]")
    bob.wait_for_selector("#already")
    assert "Already decided by alice" in bob.inner_text("#already")
    assert _acted(s, "refund-race") == 1
    outcomes = [e.outcome for e in audit_log(s.saver, thread_id="refund-race")]
    assert outcomes.count("recorded") == 1
    assert outcomes.count("already_decided") == 1
    alice.close()
    bob.close()


def test_the_session_cookie_is_opaque_and_dies_at_sign_out(
    site: tuple[Served, str], browser: Any
) -> None:
    _, url = site
    page = _page(browser, {"width": 1280, "height": 900})
    _login(page, url, "alice-token-0001")
    (session,) = [c for c in browser.cookies() if c["name"] == "lgd_session"]
    assert "alice-token" not in session["value"]
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Strict"
    page.click("text=Sign out")
    page.wait_for_url(f"{url}/login")
    # the cookie put back, as a thief who copied it would: the server ended the session
    browser.add_cookies([session])
    page.goto(f"{url}/inbox")
    assert "/login" in page.url
    page.close()
