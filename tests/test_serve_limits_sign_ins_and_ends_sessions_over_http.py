"""A real ``langgraph-durable serve`` over HTTP: guesses from one address get 429 after
the limit (a forged X-Forwarded-For does not help) while another address signs in; the
session cookie is an opaque id that ends at sign-out, when idle, and when its token is
removed from the tokens file."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests._approval_savers import open_sync, saver_url
from tests._serve_process import start, stop
from tests._servers import url_with

TOKENS = {
    "alice-token-0001": {"id": "alice", "roles": ["ops"]},
    "bob-token-0002": {"id": "bob", "roles": ["ops"]},
}


@contextmanager
def _serve(request: pytest.FixtureRequest, tokens: Path) -> Iterator[tuple[str, list[str]]]:
    """The service on its own schema; its output is in the list once it stopped."""
    logs: list[str] = []
    url, options = saver_url(request, "postgres")
    with open_sync("postgres", url, options):
        args = [
            *("serve", "--url", url_with(url, "schema", options["schema"])),
            *("--graph", "tests._service_graphs:graph", "--tokens", str(tokens)),
            *("--login-attempts", "3", "--session-idle", "1.5"),
        ]
        proc, base = start(args)
        try:
            yield base, logs
        finally:
            logs.append(stop(proc))


def _from(address: str) -> httpx.Client:
    """A client whose connections leave from ``address`` (another loopback host)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


def _sign_in(client: httpx.Client, base: str, token: str) -> httpx.Response:
    page = client.get(f"{base}/login").text
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    form = {"csrf": found.group(1), "token": token, "next": "/inbox"}
    return client.post(f"{base}/login", data=form)


def _in(client: httpx.Client, base: str) -> bool:
    got = client.get(f"{base}/inbox")
    assert got.status_code in (200, 303), got.status_code
    return got.status_code == 200


def test_serve_limits_guesses_and_ends_sessions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # one test: the serve process takes seconds to start
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    with _serve(request, tokens) as (base, logs):
        _guesses_are_limited_per_address(base)
        _sessions_are_opaque_and_end(base, tokens)
    refusals = [line for line in logs[0].splitlines() if "refused" in line]
    # one line for the address, whatever the number of attempts refused
    assert len(refusals) == 1
    assert "127.0.0.2" in refusals[0]
    # nor does any credential, right or wrong, reach the log
    for secret in (*TOKENS, "guess-"):
        assert secret not in logs[0]


def _guesses_are_limited_per_address(base: str) -> None:
    with _from("127.0.0.2") as attacker:
        codes = []
        for n in range(5):
            # without --proxy, X-Forwarded-For is the guesser's own word: not believed
            headers = {"Authorization": f"Bearer guess-{n}", "X-Forwarded-For": f"192.0.2.{n}"}
            got = attacker.get(f"{base}/api/approvals", headers=headers)
            codes.append(got.status_code)
        assert codes == [401, 401, 401, 429, 429]
        assert got.json()["error"] == "TooManyAttempts"
        assert 1 <= int(got.headers["retry-after"]) <= 300
        right = {"Authorization": "Bearer alice-token-0001"}
        assert attacker.get(f"{base}/api/approvals", headers=right).status_code == 429
        assert _sign_in(attacker, base, "alice-token-0001").status_code == 429
    with _from("127.0.0.3") as neighbour:
        right = {"Authorization": "Bearer alice-token-0001"}
        assert neighbour.get(f"{base}/api/approvals", headers=right).status_code == 200


def _sessions_are_opaque_and_end(base: str, tokens: Path) -> None:
    with _from("127.0.0.4") as alice, _from("127.0.0.4") as bob:
        done = _sign_in(alice, base, "alice-token-0001")
        assert done.status_code == 303
        session = alice.cookies["lgd_session"]
        assert "alice-token-0001" not in done.headers["set-cookie"]
        assert "httponly" in done.headers["set-cookie"].lower()
        assert _in(alice, base)
        # sign-out ends it on the server: the cookie replayed opens nothing
        csrf = re.search(r'name="csrf" value="([^"]+)"', alice.get(f"{base}/inbox").text)
        assert csrf is not None
        assert alice.post(f"{base}/logout", data={"csrf": csrf.group(1)}).status_code == 303
        alice.cookies.set("lgd_session", session)
        assert not _in(alice, base)
        assert alice.get(f"{base}/api/approvals").status_code == 401
        alice.cookies.clear()
        # a token removed from the file ends the sessions it opened
        assert _sign_in(alice, base, "alice-token-0001").status_code == 303
        assert _sign_in(bob, base, "bob-token-0002").status_code == 303
        assert _in(alice, base)
        tokens.write_text(json.dumps({"bob-token-0002": TOKENS["bob-token-0002"]}))
        assert not _in(alice, base)
        assert _in(bob, base)
        # unused past --session-idle, bob's session ends too
        time.sleep(2)
        assert not _in(bob, base)
