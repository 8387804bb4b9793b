"""The console's session cookie is an opaque random id, never the bearer token; the
session ends on the server at sign-out, after its idle or absolute expiry, and when
its token is removed from the tokens file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts import InvalidInput
from langgraph_durable.interrupts.service import BearerTokens, create_app, hash_token
from tests._service_support import TOKENS, page_csrf, served

TOKEN = "alice-token-0001"


def _sign_in(client: TestClient, token: str = TOKEN) -> str:
    form = {"csrf": page_csrf(client.get("/login").text), "token": token, "next": "/inbox"}
    done = client.post("/login", data=form, follow_redirects=False)
    assert done.status_code == 303
    return done.headers["set-cookie"]


def _in(client: TestClient) -> bool:
    """Whether the client's cookie still opens the inbox (else: sent to sign in)."""
    got = client.get("/inbox", follow_redirects=False)
    assert got.status_code in (200, 303), got.status_code
    return got.status_code == 200


def test_the_cookie_is_an_opaque_id_never_the_token(request: pytest.FixtureRequest) -> None:
    with served(request, "postgres") as svc, TestClient(svc.app) as client:
        header = _sign_in(client)
        session = client.cookies["lgd_session"]
        assert TOKEN not in header
        assert session != TOKEN
        assert hash_token(TOKEN).split(":")[1] not in header
        assert len(session) >= 40  # 32 random bytes, url-safe
        for attribute in ("HttpOnly", "SameSite=strict"):
            assert attribute.lower() in header.lower()
        assert "secure" not in header.lower()  # plain http here
        # the API reads the session too, and a fresh sign-in gets a fresh id
        assert client.get("/api/approvals").status_code == 200
        _sign_in(client)
        assert client.cookies["lgd_session"] != session
        client.cookies.clear()
        client.cookies.set("lgd_session", session)
        assert not _in(client)  # the replaced session ended


def test_the_cookie_is_secure_over_https_and_from_a_listed_proxy_saying_so(
    request: pytest.FixtureRequest,
) -> None:
    with served(request, "postgres", proxies=["127.0.0.1"]) as svc:
        with TestClient(svc.app, base_url="https://testserver") as client:
            assert "secure" in _sign_in(client).lower()
        # behind a TLS-terminating proxy the service itself is reached over http
        over_tls = {"X-Forwarded-Proto": "https"}
        for peer, secure in (("127.0.0.1", True), ("192.0.2.5", False)):
            with TestClient(svc.app, client=(peer, 1), headers=over_tls) as client:
                cookie = client.get("/login").headers["set-cookie"]
                assert cookie.startswith("lgd_csrf=")
                assert ("secure" in cookie.lower()) is secure, peer


def test_sign_out_ends_the_session_on_the_server(request: pytest.FixtureRequest) -> None:
    with served(request, "postgres") as svc, TestClient(svc.app) as client:
        _sign_in(client)
        session = client.cookies["lgd_session"]
        csrf = page_csrf(client.get("/inbox").text)
        assert (
            client.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
        )
        # the old cookie, replayed, opens nothing: neither a page nor the API
        client.cookies.set("lgd_session", session)
        assert not _in(client)
        assert client.get("/api/approvals").status_code == 401


PERIOD = 0.4  # seconds from one use's start to the next's (a slow use leaves less pause)


def _pause_until(when: float) -> None:
    time.sleep(max(0.0, when - time.monotonic()))


def test_an_idle_session_ends(request: pytest.FixtureRequest) -> None:
    idle = 1.2
    with (
        served(request, "postgres", session_idle=idle, session_lifetime=60) as svc,
        TestClient(svc.app) as client,
    ):
        _sign_in(client)
        next_use = time.monotonic()
        for _ in range(4):  # in use, it lasts past its idle time (4 x 0.4 s > 1.2 s)
            next_use += PERIOD
            _pause_until(next_use)
            assert _in(client)
        time.sleep(idle + 0.2)
        assert not _in(client)


def test_a_session_ends_at_its_lifetime_however_used(request: pytest.FixtureRequest) -> None:
    idle, lifetime = 1.0, 2.0
    with (
        served(request, "postgres", session_idle=idle, session_lifetime=lifetime) as svc,
        TestClient(svc.app) as client,
    ):
        before = time.monotonic()
        _sign_in(client)
        opened = time.monotonic()  # the session started between before and opened
        uses: list[tuple[float, float, bool]] = []  # (start, end, still signed in)
        next_use = opened
        while not uses or uses[-1][0] <= opened + lifetime:
            next_use += PERIOD
            _pause_until(next_use)
            start = time.monotonic()
            signed_in = _in(client)
            uses.append((start, time.monotonic(), signed_in))
        # every use that ended within its lifetime found it open, one of them past its
        # idle time (the uses kept it); the first use begun past its lifetime did not
        assert all(ok for _, end, ok in uses if end < before + lifetime), uses
        assert any(ok for start, _, ok in uses if start > opened + idle), uses
        assert uses[-1][2] is False, uses


def test_a_token_removed_from_the_file_ends_its_sessions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(TOKENS))
    with served(request, "postgres") as svc:
        app = create_app(svc.saver, svc.graph, authenticate=BearerTokens.from_file(path))
        with TestClient(app) as alice, TestClient(app) as bob:
            _sign_in(alice)
            _sign_in(bob, "bob-token-0002")
            assert _in(alice)
            assert _in(bob)
            path.write_text(json.dumps({k: v for k, v in TOKENS.items() if k != TOKEN}))
            assert not _in(alice)
            assert (
                alice.get(
                    "/api/approvals", headers={"Authorization": f"Bearer {TOKEN}"}
                ).status_code
                == 401
            )
            assert _in(bob)
            # a file that cannot be read keeps the previous tokens in force
            path.write_text("{not json")
            assert _in(bob)


def test_unusable_session_bounds_are_refused(request: pytest.FixtureRequest) -> None:
    bad = (
        {"session_idle": 0},
        {"session_lifetime": -1},
        {"session_idle": 10, "session_lifetime": 5},
    )
    for options in bad:
        with pytest.raises(InvalidInput), served(request, "postgres", **options):
            pass
