"""Reading a thread (its requests, decisions, timeline and audit trail) over the service:
an approver reads the threads that asked them, an admin reads every thread, anyone else
gets the 404 of a thread that is not stored, in the API and in the console alike."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts.service import BearerTokens, create_app
from tests._service_support import ADMIN, ALICE, BOB, MALLORY, TOKENS, Served, served

HIDDEN = "is not stored, or not one you may see"


@pytest.fixture(params=["postgres", "redis"])
def svc(request: pytest.FixtureRequest) -> Iterator[tuple[Served, TestClient]]:
    with served(request, request.param) as s, TestClient(s.app) as client:
        yield s, client


def _sign_in(client: TestClient, token: str) -> None:
    client.get("/login")
    client.post("/login", data={"csrf": client.cookies["lgd_csrf"], "token": token})


def test_someone_the_thread_never_asked_gets_the_404_of_a_missing_thread(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-private", amount=987654321)
    for path in ("/api/threads/t-private", "/api/threads/t-private/audit"):
        got = client.get(path, headers=MALLORY)
        assert got.status_code == 404, (path, got.text)
        assert got.json()["error"] == "UnknownThread"
        assert HIDDEN in got.json()["message"]
        assert "987654321" not in got.text
        # the same answer as for a thread that does not exist: an id says nothing
        missing = client.get(path.replace("t-private", "t-nowhere"), headers=MALLORY).json()
        assert missing["message"] == got.json()["message"].replace("t-private", "t-nowhere")
    _sign_in(client, "mallory-token-03")
    page = client.get("/threads/t-private")
    assert page.status_code == 404
    assert "987654321" not in page.text
    # the inbox never listed it either, and deciding is still refused (403, audited)
    assert client.get("/api/approvals", headers=MALLORY).json()["approvals"] == []
    refused = client.post(
        "/api/threads/t-private/decision", json={"decision": "approve"}, headers=MALLORY
    )
    assert refused.status_code == 403
    assert s.acted == []


def test_the_approvers_read_it_before_and_after_it_is_decided(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-team", amount=12)
    for who in (ALICE, BOB):
        detail = client.get("/api/threads/t-team", headers=who)
        assert detail.status_code == 200
        assert detail.json()["pending"][0]["request"]["amount"] == 12
    done = client.post("/api/threads/t-team/decision", json={"decision": "approve"}, headers=ALICE)
    assert done.status_code == 200
    # bob lost nothing by alice deciding first: the approval asked him too
    detail = client.get("/api/threads/t-team", headers=BOB).json()
    assert [d["by"] for d in detail["decisions"]] == ["alice"]
    outcomes = [
        e["outcome"] for e in client.get("/api/threads/t-team/audit", headers=BOB).json()["entries"]
    ]
    assert "recorded" in outcomes
    _sign_in(client, "bob-token-0002")
    page = client.get("/threads/t-team")
    assert page.status_code == 200
    assert "alice" in page.text
    assert client.get("/api/threads/t-team", headers=MALLORY).status_code == 404


def test_an_admin_reads_every_thread_and_the_role_is_configurable(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-any", amount=77)
    assert client.get("/api/threads/t-any", headers=ADMIN).json()["pending"][0]["request"] == {
        "action": "refund",
        "amount": 77,
    }
    assert client.get("/api/threads/t-any/audit", headers=ADMIN).status_code == 200
    # to an admin a missing thread is just missing
    missing = client.get("/api/threads/t-nowhere", headers=ADMIN)
    assert missing.status_code == 404
    assert HIDDEN not in missing.json()["message"]
    # admin is read-only: deciding is the graph's policy (ops approve refunds)
    refused = client.post(
        "/api/threads/t-any/decision", json={"decision": "approve"}, headers=ADMIN
    )
    assert refused.status_code == 403
    auditors = create_app(
        s.saver, s.graph, authenticate=BearerTokens(TOKENS), admin_roles=["auditor"]
    )
    with TestClient(auditors) as other:
        assert other.get("/api/threads/t-any", headers=ADMIN).status_code == 404
    with pytest.raises(Exception, match="admin_roles"):
        create_app(s.saver, s.graph, authenticate=BearerTokens(TOKENS), admin_roles="admin")
