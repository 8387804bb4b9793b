"""The approval service as Agent Server's ``http.app`` (a real ``langgraph dev`` on our
Postgres saver), mounted below /approvals: a run started with the SDK pauses, alice approves
through the service's API on the Agent Server's own port, and the SDK sees the run finished
with her decision."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests._servers import url_with
from tests.test_agent_server_answers_approvals import AGENT
from tests.test_agent_server_runs_graphs_on_our_savers import _agent_server

HTTP_APP = """
import importlib.util
import json
import os
from contextlib import ExitStack
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount

from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.interrupts.service import BearerTokens, create_app

spec = importlib.util.spec_from_file_location("agent_svc", Path(__file__).with_name("agent.py"))
agent = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agent)

resources = ExitStack()
saver = resources.enter_context(
    PostgresSaver.from_conn_string(
        os.environ["SERVICE_DB"], schema=os.environ["SERVICE_SCHEMA"], pool_size=4
    )
)
approvals = create_app(
    saver,
    agent.builder.compile(checkpointer=saver),
    authenticate=BearerTokens(json.loads(os.environ["SERVICE_TOKENS"])),
)
# below a prefix: the console's /threads/... would shadow the server's own /threads API
app = Starlette(routes=[Mount("/approvals", app=approvals)])
# the server keeps the app, not this module: the app keeps the saver's pool open
app.state.resources = resources
"""


@pytest.mark.timeout(180)
async def test_mounted_as_http_app_a_decision_resumes_the_servers_thread(
    pg_schema: Any, tmp_path: Any
) -> None:
    url, schema = pg_schema
    env = {
        "LANGGRAPH_DURABLE_POSTGRES_URL": url_with(url, "schema", schema),
        "SERVICE_DB": url,
        "SERVICE_SCHEMA": schema,
        "SERVICE_TOKENS": json.dumps({"alice-token-0001": {"id": "alice", "roles": ["ops"]}}),
    }
    with _agent_server(tmp_path, "postgres", env, agent=AGENT, http_app=HTTP_APP) as server:
        client = get_client(url=server)
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "agent", input={"amount": 30})
        alice = {"Authorization": "Bearer alice-token-0001"}
        async with httpx.AsyncClient(base_url=server, timeout=60) as http:
            listed = (await http.get("/approvals/api/approvals", headers=alice)).json()["approvals"]
            assert [a["thread_id"] for a in listed] == [tid]
            done = await http.post(
                f"/approvals/api/threads/{tid}/decision",
                json={"decision": "approve", "comment": "via the service"},
                headers=alice,
            )
            assert done.status_code == 200, done.text
        state = await client.threads.get_state(tid)
        assert state["next"] == []
        decision = state["values"]["decision"]
        assert (decision["by"], decision["comment"], decision["via"]) == (
            "alice",
            "via the service",
            "api",
        )
