"""Input an attacker or a careless client sends the service gets a JSON 4xx naming what
was wrong, never a 500, and records nothing: forged cursors, odd digits, NUL in a path,
JSON nested deeper than the parser's stack."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from langgraph_durable.interrupts import audit_log
from tests._service_support import ALICE, Served, served


@pytest.fixture(params=["postgres", "redis"])
def svc(request: pytest.FixtureRequest) -> Iterator[tuple[Served, TestClient]]:
    with (
        served(request, request.param) as s,
        TestClient(s.app, raise_server_exceptions=False) as client,
    ):
        yield s, client


def _cursor(key: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode()


@pytest.mark.parametrize(
    "key", [[1, "t", "a"], [None, 2, "a"], [None, "t", ["a"]], ["x", {"t": 1}, "a"]]
)
def test_a_forged_cursor_of_other_types_is_a_400(
    svc: tuple[Served, TestClient], key: object
) -> None:
    s, client = svc
    s.ask("t-cursor")
    got = client.get(f"/api/approvals?cursor={_cursor(key)}", headers=ALICE)
    assert got.status_code == 400, got.text
    assert got.json()["parameter"] == "cursor"
    page = client.get(f"/inbox?cursor={_cursor(key)}", headers=ALICE)
    assert page.status_code == 400
    assert "InvalidInput" in page.text


@pytest.mark.parametrize("limit", ["%C2%B2", "%D9%A3", "1e3", "0x10"])
def test_a_limit_of_non_ascii_digits_is_a_400(svc: tuple[Served, TestClient], limit: str) -> None:
    _, client = svc
    got = client.get(f"/api/approvals?limit={limit}", headers=ALICE)
    assert got.status_code == 400, got.text
    assert got.json()["parameter"] == "limit"


def test_a_thread_id_holding_nul_is_a_400_naming_the_thread_id(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-nul")
    for got in (
        client.get("/api/threads/t-nul%00x", headers=ALICE),
        client.get("/api/threads/t-nul%00x/audit", headers=ALICE),
        client.post("/api/threads/t-nul%00x/decision", json={"decision": "approve"}, headers=ALICE),
    ):
        assert got.status_code == 400, got.text
        assert got.json()["error"] == "InvalidConfigError"
        assert got.json()["parameter"] == "thread_id"
    page = client.get("/threads/t-nul%00x", headers=ALICE)
    assert page.status_code == 400
    assert "thread_id" in page.text
    assert s.acted == []
    assert [e.outcome for e in audit_log(s.saver, thread_id="t-nul")] == ["waiting"]


def test_json_nested_deeper_than_the_parser_is_a_400_and_records_nothing(
    svc: tuple[Served, TestClient],
) -> None:
    s, client = svc
    s.ask("t-deep")
    deep = '{"decision": "edit", "arguments": ' + "[" * 20_000 + "]" * 20_000 + "}"
    assert len(deep) < 64 * 1024  # under the body limit: the parser, not the size, refuses
    got = client.post(
        "/api/threads/t-deep/decision",
        content=deep,
        headers={**ALICE, "content-type": "application/json"},
    )
    assert got.status_code == 400, got.text
    assert got.json() == {
        "error": "InvalidInput",
        "message": "invalid body: JSON nested too deeply",
        "parameter": "body",
    }
    assert s.acted == []
    assert [e.outcome for e in audit_log(s.saver, thread_id="t-deep")] == ["waiting"]
