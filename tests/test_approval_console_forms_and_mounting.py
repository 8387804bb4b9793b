"""The console's forms need the page's CSRF token; the app works mounted below a prefix;
a trusted-proxy identity is believed only when configured and only from the proxy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from langgraph_durable.interrupts import audit_log
from langgraph_durable.interrupts.service import BearerTokens, TrustedProxy, create_app
from tests._service_support import ALICE, TOKENS, Served, page_csrf, served


@pytest.fixture(params=["postgres", "redis"])
def svc(request: pytest.FixtureRequest) -> Iterator[Served]:
    with served(request, request.param) as s:
        yield s


def _signed_in(client: TestClient, prefix: str = "") -> str:
    client.get(f"{prefix}/login")
    csrf = client.cookies["lgd_csrf"]
    done = client.post(
        f"{prefix}/login",
        data={"csrf": csrf, "token": "alice-token-0001", "next": f"{prefix}/inbox"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert done.headers["location"] == f"{prefix}/inbox"
    # signed in, a page's forms carry the nonce bound to the session, not the bare cookie
    return page_csrf(client.get(f"{prefix}/inbox").text)


def test_a_form_without_the_csrf_token_records_nothing(svc: Served) -> None:
    svc.ask("t-csrf")
    with TestClient(svc.app) as client:
        csrf = _signed_in(client)
        url = "/threads/t-csrf/decide"
        for form in ({"decision": "approve"}, {"decision": "approve", "csrf": "forged"}):
            got = client.post(url, data=form)
            assert got.status_code == 403
            assert "CsrfRefused" in got.text
        assert [e.outcome for e in audit_log(svc.saver, thread_id="t-csrf")] == ["waiting"]
        bad_edit = client.post(url, data={"csrf": csrf, "decision": "edit", "arguments": "{"})
        assert bad_edit.status_code == 400
        assert "arguments" in bad_edit.text
        ok = client.post(url, data={"csrf": csrf, "decision": "approve"}, follow_redirects=False)
        assert ok.status_code == 303
    assert svc.acted == ["alice"]


def test_a_tossed_csrf_cookie_and_its_value_do_not_pass_once_signed_in(svc: Served) -> None:
    # a sibling host can set lgd_csrf for the parent domain, so it knows both halves of
    # a plain double-submit; the field must be bound to the session it cannot read
    svc.ask("t-toss")
    with TestClient(svc.app) as client:
        _signed_in(client)
        session = client.cookies["lgd_session"]
        client.cookies.clear()
        client.cookies.set("lgd_session", session)
        client.cookies.set("lgd_csrf", "tossed")
        got = client.post("/threads/t-toss/decide", data={"csrf": "tossed", "decision": "approve"})
        assert got.status_code == 403
        assert "CsrfRefused" in got.text
    assert [e.outcome for e in audit_log(svc.saver, thread_id="t-toss")] == ["waiting"]
    assert svc.acted == []


def test_a_form_another_site_sent_is_refused_even_with_the_right_token(svc: Served) -> None:
    svc.ask("t-site")
    with TestClient(svc.app) as client:
        csrf = _signed_in(client)
        form = {"csrf": csrf, "decision": "approve"}
        for site in ("same-site", "cross-site"):
            got = client.post("/threads/t-site/decide", data=form, headers={"Sec-Fetch-Site": site})
            assert got.status_code == 403
            assert f"another site (Sec-Fetch-Site: {site})" in got.text
        # over plain http a browser sends no Sec-Fetch-Site, but an Origin
        for origin in ("http://evil.example", "null"):
            got = client.post("/threads/t-site/decide", data=form, headers={"Origin": origin})
            assert got.status_code == 403
            assert f"another site (Origin: {origin})" in got.text
        assert [e.outcome for e in audit_log(svc.saver, thread_id="t-site")] == ["waiting"]
        # behind a proxy that rewrites Host, the public name comes as X-Forwarded-Host
        proxied = {"Origin": "https://ops.example", "X-Forwarded-Host": "ops.example"}
        assert client.post("/logout", data={"csrf": csrf}, headers=proxied).status_code == 200
        csrf = _signed_in(client)
        form["csrf"] = csrf
        own = {"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}
        ok = client.post("/threads/t-site/decide", data=form, headers=own, follow_redirects=False)
        assert ok.status_code == 303
    assert svc.acted == ["alice"]


def test_every_page_forbids_scripts_framing_and_foreign_form_targets(svc: Served) -> None:
    with TestClient(svc.app) as client:
        for path in ("/login", "/api/openapi.json", "/healthz"):
            policy = client.get(path).headers["content-security-policy"]
            for part in ("default-src 'none'", "form-action 'self'", "frame-ancestors 'none'"):
                assert part in policy, (path, part)
            assert "script-src" not in policy  # default-src 'none' covers scripts


def test_the_recorded_banner_shows_only_the_decision_made(svc: Served) -> None:
    # a crafted link cannot put its own words in the page's "Recorded" banner
    svc.ask("t-banner")
    with TestClient(svc.app) as client:
        _signed_in(client)
        spoof = client.get("/threads/t-banner", params={"done": "approve; wire 10k to acct 99"})
        assert 'id="done"' not in spoof.text
        assert "wire 10k" not in spoof.text
        real = client.get("/threads/t-banner", params={"done": "reject"})
        assert "Recorded: reject." in real.text


def test_a_wrong_token_does_not_sign_in(svc: Served) -> None:
    with TestClient(svc.app) as client:
        assert client.get("/inbox", follow_redirects=False).headers["location"].startswith("/login")
        client.get("/login")
        got = client.post("/login", data={"csrf": client.cookies["lgd_csrf"], "token": "nope"})
        assert got.status_code == 401
        assert "not valid" in got.text
        assert "lgd_session" not in client.cookies


def test_mounted_below_a_prefix_every_link_keeps_it(svc: Served) -> None:
    svc.ask("t-mount")
    outer = Starlette(routes=[Mount("/approvals", app=svc.app)])
    with TestClient(outer) as client:
        api = client.get(
            "/approvals/api/approvals", headers={"Authorization": "Bearer alice-token-0001"}
        )
        assert [a["thread_id"] for a in api.json()["approvals"]] == ["t-mount"]
        assert client.get("/approvals/api/threads/nobody").json()["error"] == "NotAuthenticated"
        login = client.get("/approvals/inbox", follow_redirects=False).headers["location"]
        assert login.startswith("/approvals/login")
        csrf = _signed_in(client, "/approvals")
        page = client.get("/approvals/inbox").text
        assert 'href="/approvals/threads/t-mount"' in page
        done = client.post(
            "/approvals/threads/t-mount/decide",
            data={"csrf": csrf, "decision": "reject", "comment": "no"},
            follow_redirects=False,
        )
        assert done.headers["location"] == "/approvals/threads/t-mount?done=reject"
    assert svc.acted == ["alice"]


def test_a_trusted_proxy_identity_is_believed_only_from_the_proxy(svc: Served) -> None:
    svc.ask("t-proxy")
    proxy = TrustedProxy(user_header="X-Forwarded-User", trusted=("testclient",))
    app = create_app(svc.saver, svc.graph, authenticate=proxy)
    who = {"X-Forwarded-User": "carol", "X-Forwarded-Groups": "ops, audit"}
    with TestClient(app) as client:
        listed = client.get("/api/approvals", headers=who).json()["approvals"]
        assert [a["thread_id"] for a in listed] == ["t-proxy"]
        done = client.post(
            "/api/threads/t-proxy/decision", json={"decision": "approve"}, headers=who
        )
        assert done.json()["decision"]["by"] == "carol"
        assert done.json()["decision"]["roles"] == ["ops", "audit"]
    # the same header from anyone else is no identity: 401
    elsewhere = create_app(svc.saver, svc.graph, authenticate=TrustedProxy())
    with TestClient(elsewhere) as client:
        assert client.get("/api/approvals", headers=who).status_code == 401


def test_create_app_refuses_what_it_cannot_serve(svc: Served) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_durable.interrupts import InvalidInput

    with pytest.raises(InvalidInput, match="graph"):
        create_app(InMemorySaver(), svc.graph, authenticate=TrustedProxy())
    with pytest.raises(InvalidInput, match="authenticate"):
        create_app(svc.saver, svc.graph, authenticate=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="secret"):
        create_app(svc.saver, svc.graph, authenticate=TrustedProxy(), link_secret="short")


def test_a_link_for_another_approval_or_altered_is_refused_over_http(svc: Served) -> None:
    from urllib.parse import parse_qs, urlsplit

    from langgraph_durable.interrupts import Decider, decision_link
    from tests._service_support import SECRET

    svc.ask("t-a")
    svc.ask("t-b")
    link = decision_link(
        svc.saver, "t-a", decider=Decider("alice", ("ops",)), base_url="http://x", secret=SECRET
    )
    token = parse_qs(urlsplit(link).query)["token"][0]
    with TestClient(svc.app) as client:
        foreign = client.get("/link/t-b", params={"token": token})
        assert foreign.status_code == 403
        assert "LinkRefused" in foreign.text
        assert "another thread" in foreign.text
        client.get("/link/t-a", params={"token": token})  # sets the form's CSRF cookie
        csrf = client.cookies["lgd_csrf"]
        altered = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
        got = client.post("/link/t-a", data={"csrf": csrf, "token": altered, "decision": "approve"})
        assert got.status_code == 403
        assert "signature" in got.text
        wrong = client.post("/link/t-a", data={"csrf": csrf, "token": token, "decision": "edit"})
        assert wrong.status_code == 400
    for thread_id in ("t-a", "t-b"):
        outcomes = [e.outcome for e in audit_log(svc.saver, thread_id=thread_id)]
        assert "recorded" not in outcomes
    assert svc.acted == []


def test_sign_in_redirects_only_to_pages_of_the_app(svc: Served) -> None:
    with TestClient(svc.app) as client:
        for target in ("//evil.example/x", "/\\evil.example", "https://evil.example/"):
            # the page as a browser would have it (signed in after the first round)
            csrf = page_csrf(client.get("/login").text)
            got = client.post(
                "/login",
                data={"csrf": csrf, "token": "alice-token-0001", "next": target},
                follow_redirects=False,
            )
            assert got.headers["location"] == "/inbox", target


def test_the_timeline_shows_an_escalation_and_the_decision_on_the_time_axis(svc: Served) -> None:
    from datetime import timedelta

    from langgraph_durable.interrupts import CLOCK_CONFIG_KEY, ApprovalSweeper
    from tests._approval_graphs import FakeClock, review_graph, two_level_escalation

    clock = FakeClock()
    graph = review_graph(svc.saver, on_timeout=two_level_escalation(), open_to_all=True)
    config = {"configurable": {"thread_id": "t-esc", CLOCK_CONFIG_KEY: clock}}
    graph.invoke({"amount": 80}, config)
    clock.advance(timedelta(hours=1, minutes=1))
    assert ApprovalSweeper(graph, clock=clock).run_once() == 1
    app = create_app(svc.saver, graph, authenticate=BearerTokens(TOKENS), clock=clock)
    with TestClient(app) as client:
        (row,) = client.get("/api/approvals", headers=ALICE).json()["approvals"]
        assert (row["escalation_level"], row["approvers"]) == (1, ["manager"])
        csrf = _signed_in(client)
        page = client.get("/threads/t-esc").text
        assert 'data-kind="escalated"' in page
        client.post("/threads/t-esc/decide", data={"csrf": csrf, "decision": "approve"})
        page = client.get("/threads/t-esc").text
    for kind in ("asked", "escalated", "decided", "resumed"):
        assert f'data-kind="{kind}"' in page, kind
