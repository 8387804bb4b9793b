"""Decision links attacked over HTTP, against a real ``langgraph-durable serve`` process:
a used link replayed, an altered one, one for another thread, an expired one, forged
tokens on threads that are not stored (refused, and nothing written for them), and the
sign-in page's redirect pointed elsewhere; and a thread read by someone it never asked."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from langgraph_durable.interrupts import Decider, audit_log, decision_link, pending_approvals
from tests._approval_savers import open_sync, saver_url
from tests._serve_process import HTTP_TIMEOUT, start, stop, tokens_file
from tests._servers import url_with
from tests._service_graphs import graph_without_deadline

SECRET = "real-serve-link-secret-0123456"
TOKENS = {
    "alice-token-0001": {"id": "alice", "roles": ["ops"]},
    "mallory-token-03": {"id": "mallory", "roles": []},
    "admin-token-0004": {"id": "root", "roles": ["admin"]},
}
ALICE = Decider("alice", ("ops",))


@pytest.fixture(params=["postgres", pytest.param("redis", marks=pytest.mark.slow)])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Any, str]]:
    url, options = saver_url(request, request.param)
    key = "schema" if request.param == "postgres" else "prefix"
    with open_sync(request.param, url, options) as saver:
        spec = "tests._service_graphs:graph_without_deadline"
        args = ["serve", "--url", url_with(url, key, options[key]), "--graph", spec]
        proc, base = start(
            [*args, "--tokens", str(tokens_file(tmp_path, TOKENS))],
            env={"LANGGRAPH_DURABLE_LINK_SECRET": SECRET},
        )
        try:
            yield saver, graph_without_deadline(saver), base
        finally:
            stop(proc)


def _link(saver: Any, thread_id: str, base: str, **kw: Any) -> tuple[str, str]:
    link = decision_link(saver, thread_id, decider=ALICE, base_url=base, secret=SECRET, **kw)
    return link, parse_qs(urlsplit(link).query)["token"][0]


def _post(client: httpx.Client, base: str, thread_id: str, token: str) -> httpx.Response:
    page = client.get(f"{base}/link/{quote(thread_id, safe='')}", params={"token": token})
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    csrf = found.group(1) if found else client.cookies.get("lgd_csrf", "")
    form = {"csrf": csrf, "token": token, "decision": "approve"}
    return client.post(f"{base}/link/{quote(thread_id, safe='')}", data=form)


def test_links_over_http_decide_once_and_only_for_their_approval(
    served: tuple[Any, Any, str],
) -> None:
    # one test: each serve process takes seconds to start
    _used_link_replayed(*served)
    _altered_foreign_and_expired(*served)
    _forged_on_threads_not_stored(*served)
    _sign_in_stays_on_the_service(served[2])
    _reads_only_for_those_asked(served[2])


def _reads_only_for_those_asked(base: str) -> None:
    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    for path in ("/api/threads/l-once", "/api/threads/l-once/audit"):
        for token in ("alice-token-0001", "admin-token-0004"):
            got = httpx.get(base + path, headers=bearer(token), timeout=HTTP_TIMEOUT)
            assert got.status_code == 200, (path, token)
        hidden = httpx.get(base + path, headers=bearer("mallory-token-03"), timeout=HTTP_TIMEOUT)
        assert hidden.status_code == 404, path
        assert "not one you may see" in hidden.json()["message"]


def _used_link_replayed(saver: Any, graph: Any, base: str) -> None:
    graph.invoke({"amount": 1}, {"configurable": {"thread_id": "l-once"}})
    link, token = _link(saver, "l-once", base)
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        first = _post(client, base, "l-once", token)
        assert first.status_code == 200, first.text
        assert "Recorded: approve by alice" in first.text
        again = _post(client, base, "l-once", token)
        assert again.status_code == 403
        assert "already decided by alice" in again.text
        assert client.get(link).status_code == 403
    state = graph.get_state({"configurable": {"thread_id": "l-once"}})
    assert state.values["done"] == ["act"]
    outcomes = [e.outcome for e in audit_log(saver, thread_id="l-once")]
    assert outcomes.count("recorded") == 1


def _altered_foreign_and_expired(saver: Any, graph: Any, base: str) -> None:
    for t in ("l-a", "l-b", "l-late"):
        graph.invoke({"amount": 2}, {"configurable": {"thread_id": t}})
    _, token = _link(saver, "l-a", base)
    _, short = _link(saver, "l-late", base, ttl=timedelta(seconds=1))
    altered = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
    time.sleep(1.1)
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        cases = [
            ("l-a", altered, "signature"),
            ("l-b", token, "another thread"),
            ("l-late", short, "expired"),
        ]
        for thread_id, tok, why in cases:
            got = _post(client, base, thread_id, tok)
            assert got.status_code == 403, (thread_id, got.text)
            assert why in got.text, thread_id
    assert {p.thread_id for p in pending_approvals(saver)} == {"l-a", "l-b", "l-late"}
    for t in ("l-a", "l-b", "l-late"):
        outcomes = [e.outcome for e in audit_log(saver, thread_id=t)]
        assert "recorded" not in outcomes and "link_refused" in outcomes, t


def _forged_on_threads_not_stored(saver: Any, graph: Any, base: str) -> None:
    graph.invoke({"amount": 3}, {"configurable": {"thread_id": "l-real"}})
    _, token = _link(saver, "l-real", base)
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        for n in range(20):
            ghost = f"l-ghost-{n}"
            got = client.get(f"{base}/link/{ghost}", params={"token": token})
            assert got.status_code == 403
            assert "another thread" in got.text
            assert audit_log(saver, thread_id=ghost) == []
            assert saver.get_tuple({"configurable": {"thread_id": ghost}}) is None
        # the same token on its own thread still works: nothing was spent
        assert client.get(f"{base}/link/l-real", params={"token": token}).status_code == 200


def _sign_in_stays_on_the_service(base: str) -> None:
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        for target in (
            "//evil.example/x",
            "/\\evil.example",
            "https://evil.example/",
            "/\t/evil.example",
            "/%2F%2Fevil.example",
        ):
            page = client.get(f"{base}/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            got = client.post(
                f"{base}/login",
                data={"csrf": csrf.group(1), "token": "alice-token-0001", "next": target},
            )
            assert got.status_code == 303, (target, got.text)
            location = got.headers["location"]
            assert urlsplit(location).netloc == "" and not location.startswith("//"), target
            assert "\t" not in location, target
