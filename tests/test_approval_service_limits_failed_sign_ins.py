"""Failed sign-ins are limited per client address: past the limit an address gets 429
with Retry-After (its guesses unchecked, a correct token too), other addresses and
successful sign-ins are never slowed, and the addresses remembered are capped."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from langgraph_durable.interrupts import InvalidInput
from tests._service_support import ALICE, Served, page_csrf, served

WRONG = {"Authorization": "Bearer not-a-token-0000"}
ATTACKER = ("203.0.113.7", 40000)
NEIGHBOUR = ("198.51.100.9", 40000)


@pytest.fixture
def svc(request: pytest.FixtureRequest) -> Iterator[Served]:
    with served(request, "postgres", login_attempts=3, login_window=1.5) as s:
        yield s


def test_past_the_limit_an_address_gets_429_and_others_still_sign_in(svc: Served) -> None:
    with TestClient(svc.app, client=ATTACKER) as attacker:
        for _ in range(3):
            assert attacker.get("/api/approvals", headers=WRONG).status_code == 401
        refused = attacker.get("/api/approvals", headers=WRONG)
        assert refused.status_code == 429
        assert refused.json()["error"] == "TooManyAttempts"
        assert "too many failed sign-ins" in refused.json()["message"]
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        # the credential is not even looked at: a right one is refused the same way
        assert attacker.get("/api/approvals", headers=ALICE).status_code == 429
    with TestClient(svc.app, client=NEIGHBOUR) as neighbour:
        assert neighbour.get("/api/approvals", headers=ALICE).status_code == 200
        schema = neighbour.get("/api/openapi.json").json()
        assert "429" in schema["paths"]["/api/approvals"]["get"]["responses"]
    # the window slides past the failures: the address may try again
    time.sleep(1.6)
    with TestClient(svc.app, client=ATTACKER) as attacker:
        assert attacker.get("/api/approvals", headers=ALICE).status_code == 200


def _login(client: TestClient, token: str) -> int:
    form = {"csrf": page_csrf(client.get("/login").text), "token": token, "next": "/inbox"}
    return client.post("/login", data=form, follow_redirects=False).status_code


def test_the_sign_in_page_answers_429_with_a_page_and_retry_after(svc: Served) -> None:
    with TestClient(svc.app, client=ATTACKER) as attacker:
        assert [_login(attacker, f"guess-{n}") for n in range(3)] == [401, 401, 401]
        attacker.get("/login")
        form = {"csrf": attacker.cookies["lgd_csrf"], "token": "alice-token-0001"}
        refused = attacker.post("/login", data=form, follow_redirects=False)
        assert refused.status_code == 429
        assert refused.headers["content-type"].startswith("text/html")
        assert "TooManyAttempts" in refused.text
        assert int(refused.headers["retry-after"]) >= 1
        assert "lgd_session" not in attacker.cookies
    with TestClient(svc.app, client=NEIGHBOUR) as neighbour:
        assert _login(neighbour, "alice-token-0001") == 303


def test_successful_sign_ins_are_never_counted(svc: Served) -> None:
    with TestClient(svc.app, client=ATTACKER) as client:
        for _ in range(10):
            assert client.get("/api/approvals", headers=ALICE).status_code == 200
        assert [_login(client, "alice-token-0001") for _ in range(5)] == [303] * 5
        # requests that present no credential are not guesses either
        client.cookies.clear()
        for _ in range(5):
            assert client.get("/api/approvals").status_code == 401


def test_refusals_are_logged_once_a_minute_per_address(
    svc: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="langgraph_durable.interrupts.service")
    with TestClient(svc.app, client=ATTACKER) as attacker:
        codes = [attacker.get("/api/health", headers=WRONG).status_code for _ in range(50)]
    assert codes == [401] * 3 + [429] * 47
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert lines == [lines[0]]
    assert "203.0.113.7" in lines[0]


def test_forwarded_for_names_the_client_only_from_a_listed_proxy(
    request: pytest.FixtureRequest,
) -> None:
    proxy = ("10.1.2.3", 443)
    spoofed = [{**WRONG, "X-Forwarded-For": f"192.0.2.{n}"} for n in range(6)]
    with (
        served(request, "postgres", login_attempts=3) as direct,
        TestClient(direct.app, client=proxy) as client,
    ):
        # not a listed proxy: its X-Forwarded-For is the client's own word
        codes = [client.get("/api/health", headers=h).status_code for h in spoofed]
        assert codes == [401] * 3 + [429] * 3
    with (
        served(request, "postgres", login_attempts=3, proxies=["10.1.2.3"]) as proxied,
        TestClient(proxied.app, client=proxy) as client,
    ):
        codes = [client.get("/api/health", headers=h).status_code for h in spoofed]
        assert codes == [401] * 6
        # the proxy appends the address it saw: that last entry is the one counted
        chain = {**WRONG, "X-Forwarded-For": "192.0.2.77, 192.0.2.1"}
        assert [client.get("/api/health", headers=chain).status_code for _ in "ab"] == [401] * 2
        assert client.get("/api/health", headers=spoofed[1]).status_code == 429


def _request(host: str) -> Request:
    return Request({"type": "http", "headers": [], "client": (host, 1)})


def test_the_addresses_remembered_are_capped_oldest_first() -> None:
    from langgraph_durable.interrupts._service_limits import FailureLimiter, TooManyAttempts

    limiter = FailureLimiter(attempts=1, window=60, tracked=2)
    for host in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        limiter.failed(_request(host))
    limiter.check(_request("192.0.2.1"))  # forgotten: the oldest of three
    for host in ("192.0.2.2", "192.0.2.3"):
        with pytest.raises(TooManyAttempts):
            limiter.check(_request(host))
    # one host holds a whole IPv6 /64: it is counted as one address
    limiter.failed(_request("2001:db8::1"))
    with pytest.raises(TooManyAttempts):
        limiter.check(_request("2001:db8::ffff:1"))
    limiter.check(_request("2001:db8:0:1::1"))


def test_unusable_limits_are_refused(request: pytest.FixtureRequest) -> None:
    for options in ({"login_attempts": 0}, {"login_window": -1}, {"proxies": "10.0.0.1"}):
        with pytest.raises(InvalidInput), served(request, "postgres", **options):
            pass
