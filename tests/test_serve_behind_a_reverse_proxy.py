"""A real ``langgraph-durable serve`` behind a reverse proxy on this host.

The proxy connects from 127.0.0.1 and appends the client's address to
``X-Forwarded-For``. With ``--proxy``, failed sign-ins are counted per forwarded
client (one client's guesses do not lock out the others behind the same proxy); with
``--trust-proxy-header``, the proxy's user header is believed from the proxy only, and
a forwarded address does not make the service take the request for a stranger's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests._approval_savers import open_sync, saver_url
from tests._serve_process import start, stop
from tests._servers import url_with

TOKENS = {"alice-token-0001": {"id": "alice", "roles": ["ops"]}}
PROXY = "127.0.0.1"


@contextmanager
def _serve(request: pytest.FixtureRequest, *options: str) -> Iterator[str]:
    url, saver_options = saver_url(request, "postgres")
    with open_sync("postgres", url, saver_options):
        args = [
            *("serve", "--url", url_with(url, "schema", saver_options["schema"])),
            *("--graph", "tests._service_graphs:graph", *options),
        ]
        proc, base = start(args)
        try:
            yield base
        finally:
            stop(proc)


def _from(address: str) -> httpx.Client:
    """A client whose connections leave from ``address`` (a loopback host)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


def _status(client: httpx.Client, base: str, headers: dict[str, str]) -> int:
    return client.get(f"{base}/api/approvals", headers=headers).status_code


def test_guesses_are_counted_per_forwarded_client(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    options = ("--tokens", str(tokens), "--login-attempts", "3", "--proxy", PROXY)
    right = {"Authorization": "Bearer alice-token-0001"}
    with _serve(request, *options) as base, _from(PROXY) as proxy:
        guesses = [
            _status(proxy, base, {"Authorization": f"Bearer guess-{n}", "X-Forwarded-For": a})
            for n, a in enumerate(["203.0.113.9"] * 5)
        ]
        assert guesses == [401, 401, 401, 429, 429]
        # the guesser is refused even with the right token ...
        assert _status(proxy, base, {**right, "X-Forwarded-For": "203.0.113.9"}) == 429
        # ... while another client behind the same proxy is not locked out
        assert _status(proxy, base, {**right, "X-Forwarded-For": "203.0.113.10"}) == 200
        # a client's own X-Forwarded-For entries before the proxy's are not believed
        spoofed = {**right, "X-Forwarded-For": "203.0.113.10, 203.0.113.9"}
        assert _status(proxy, base, spoofed) == 429
        with _from("127.0.0.2") as direct:
            # not the proxy: its X-Forwarded-For is its own word, and it is counted itself
            assert _status(direct, base, {**right, "X-Forwarded-For": "203.0.113.9"}) == 200


def test_the_proxy_user_header_is_believed_from_the_proxy_only(
    request: pytest.FixtureRequest,
) -> None:
    user = {"X-Forwarded-User": "alice", "X-Forwarded-Groups": "ops"}
    forwarded = {**user, "X-Forwarded-For": "203.0.113.9"}
    with _serve(request, "--trust-proxy-header", "X-Forwarded-User") as base:
        with _from(PROXY) as proxy:
            # the forwarded client address does not hide that the proxy sent it
            got = proxy.get(f"{base}/api/approvals", headers=forwarded)
            assert got.status_code == 200, got.text
            assert got.json()["approvals"] == []
            assert _status(proxy, base, {"X-Forwarded-For": "203.0.113.9"}) == 401
        with _from("127.0.0.2") as stranger:
            # anyone else could set the header: not believed
            assert _status(stranger, base, forwarded) == 401
