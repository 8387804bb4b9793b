"""The service's JSON API on Postgres and Redis with a real graph: each decision is the
library's (exactly once, authorized by the graph's policy, audited with the caller's id)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts import audit_log
from tests._service_support import ALICE, BOB, MALLORY, Served, served


@pytest.fixture(params=["postgres", "redis"])
def svc(request: pytest.FixtureRequest) -> Iterator[tuple[Served, TestClient]]:
    with served(request, request.param) as s, TestClient(s.app) as client:
        yield s, client


def test_the_inbox_lists_what_the_caller_may_decide(svc: tuple[Served, TestClient]) -> None:
    s, client = svc
    for n in range(3):
        s.ask(f"t-{n}", amount=10 + n)
    page = client.get("/api/approvals?limit=2", headers=ALICE)
    assert page.status_code == 200
    body = page.json()
    assert [a["thread_id"] for a in body["approvals"]] == ["t-0", "t-1"]
    assert body["approvals"][0]["request"] == {"action": "refund", "amount": 10}
    assert 0 < body["approvals"][0]["time_left_s"] <= 900
    rest = client.get(f"/api/approvals?limit=2&cursor={body['next_cursor']}", headers=ALICE)
    assert [a["thread_id"] for a in rest.json()["approvals"]] == ["t-2"]
    assert rest.json()["next_cursor"] is None
    # mallory is not among the approvers (ops): nothing is hers to decide
    assert client.get("/api/approvals", headers=MALLORY).json()["approvals"] == []
    assert client.get("/api/approvals?overdue=true", headers=ALICE).json()["approvals"] == []


def test_a_decision_resumes_once_and_a_second_is_409(svc: tuple[Served, TestClient]) -> None:
    s, client = svc
    s.ask("t-once")
    done = client.post(
        "/api/threads/t-once/decision",
        json={"decision": "approve", "comment": "looks right"},
        headers=ALICE,
    )
    assert done.status_code == 200, done.text
    assert done.json()["decision"]["by"] == "alice"
    assert done.json()["decision"]["comment"] == "looks right"
    assert s.acted == ["alice"]
    again = client.post("/api/threads/t-once/decision", json={"decision": "reject"}, headers=BOB)
    assert again.status_code == 409
    assert again.json()["error"] == "AlreadyDecided"
    assert again.json()["decided_by"] == "alice"
    assert again.json()["decided_at"] == done.json()["decision"]["at"]
    assert s.acted == ["alice"]
    trail = client.get("/api/threads/t-once/audit", headers=ALICE).json()["entries"]
    assert [(e["actor"], e["outcome"]) for e in trail if e["action"] != "request"][-2:] == [
        ("alice", "recorded"),
        ("bob", "already_decided"),
    ]
    detail = client.get("/api/threads/t-once", headers=ALICE).json()
    assert detail["pending"] == []
    assert detail["decisions"][0]["comment"] == "looks right"
    assert detail["state"]["state"] == "finished"


def test_edit_and_respond_are_refused_where_the_request_does_not_allow_them(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-edit")
    refused = client.post(
        "/api/threads/t-edit/decision",
        json={"decision": "edit", "arguments": {"action": "refund", "amount": 1}},
        headers=ALICE,
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "DecisionNotAllowed"
    assert s.acted == []


def test_unauthenticated_is_401_and_a_policy_refusal_is_403_audited(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-auth")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
        got = client.post(
            "/api/threads/t-auth/decision", json={"decision": "approve"}, headers=headers
        )
        assert got.status_code == 401
        assert got.json()["error"] == "NotAuthenticated"
    assert client.get("/api/approvals").status_code == 401
    refused = client.post(
        "/api/threads/t-auth/decision", json={"decision": "approve"}, headers=MALLORY
    )
    assert refused.status_code == 403
    assert refused.json()["error"] == "NotAuthorized"
    assert "mallory" in refused.json()["message"]
    outcomes = [(e.actor, e.outcome) for e in audit_log(s.saver, thread_id="t-auth")]
    assert outcomes == [(outcomes[0][0], "waiting"), ("mallory", "not_authorized")]
    assert s.acted == []


def _recorded(s: Served, thread_id: str) -> list[Any]:
    return [e for e in audit_log(s.saver, thread_id=thread_id) if e.action != "request"]


def test_bad_input_is_a_clear_4xx_and_records_nothing(svc: tuple[Served, TestClient]) -> None:
    s, client = svc
    s.ask("t-bad")
    url = "/api/threads/t-bad/decision"
    cases: list[tuple[dict[str, Any], int, str, str]] = [
        (
            {"content": b"{not json", "headers": {"Content-Type": "application/json"}},
            400,
            "InvalidInput",
            "malformed JSON",
        ),
        ({"json": {"decision": True}}, 400, "InvalidInput", "decision"),
        ({"json": {"decision": "approve", "comment": 5}}, 400, "InvalidInput", "comment"),
        ({"json": {"decision": "approve", "by": "root"}}, 400, "InvalidInput", "by"),
        ({"json": ["approve"]}, 400, "InvalidInput", "JSON object"),
        (
            {"content": b"decision=approve", "headers": {"Content-Type": "text/plain"}},
            400,
            "InvalidInput",
            "application/json",
        ),
        (
            {
                "content": b"{" + b" " * (1024 * 1024) + b"}",
                "headers": {"Content-Type": "application/json"},
            },
            413,
            "BodyTooLarge",
            "bytes",
        ),
    ]
    for kwargs, status, error, words in cases:
        headers = {**ALICE, **kwargs.pop("headers", {})}
        got = client.post(url, headers=headers, **kwargs)
        assert got.status_code == status, (kwargs, got.text)
        assert got.json()["error"] == error
        assert words in got.json()["message"]
    unknown = client.post(
        "/api/threads/nobody/decision", json={"decision": "approve"}, headers=ALICE
    )
    assert unknown.status_code == 404
    assert unknown.json()["error"] == "UnknownThread"
    assert client.get("/api/threads/nobody", headers=ALICE).status_code == 404
    assert client.get("/api/threads/nobody/audit", headers=ALICE).status_code == 404
    assert client.get("/api/approvals?limit=x", headers=ALICE).json()["error"] == "InvalidInput"
    assert client.get("/api/approvals?cursor=zz", headers=ALICE).status_code == 400
    assert _recorded(s, "t-bad") == []
    assert s.acted == []
    assert (
        client.get("/api/approvals", headers=ALICE).json()["approvals"][0]["thread_id"] == "t-bad"
    )


def test_health_and_the_schema(svc: tuple[Served, TestClient]) -> None:
    s, client = svc
    s.ask("t-h")
    health = client.get("/api/health", headers=ALICE).json()
    assert health["waiting"] == 1
    assert health["overdue"] == 0
    assert {"running", "orphaned", "parked"} <= set(health)
    assert client.get("/healthz").json() == {"ok": True}
    schema = client.get("/api/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) >= {
        "/api/approvals",
        "/api/threads/{thread_id}",
        "/api/threads/{thread_id}/decision",
        "/api/threads/{thread_id}/audit",
        "/api/health",
        "/healthz",
    }
