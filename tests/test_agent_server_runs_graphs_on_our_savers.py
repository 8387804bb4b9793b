"""LangGraph Agent Server (``langgraph dev``, from PyPI) runs graphs on our savers.

``langgraph.json`` names ``langgraph_durable.checkpointers.agent_server.postgres``
(or ``.redis``) as its checkpointer; a graph run created through
``langgraph-sdk`` pauses at an interrupt, its checkpoints are in our tables
(keys), a resume through the SDK completes it, and deleting the thread
deletes them. The server is kept off the
network: analytics and version checks off, no LangSmith key, and every HTTP(S)
proxy pointed at a closed local port, so a stray outside call fails here.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis
from langgraph_sdk import get_client
from psycopg import sql

from langgraph_durable.checkpointers import InvalidConfigError, LayoutVersionError, agent_server
from langgraph_durable.checkpointers.redis import RedisSaver
from tests._servers import free_port, url_with

AGENT = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def work(state: State) -> dict:
    return {"items": ["worked"]}


def ask(state: State) -> dict:
    return {"items": [f"answered:{interrupt({'question': 'ship it?'})}"]}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_node("ask", ask)
builder.add_edge(START, "work")
builder.add_edge("work", "ask")
builder.add_edge("ask", END)
graph = builder.compile()
"""

# a closed port: a request the server makes to the outside fails at once, here
_NOWHERE = "http://127.0.0.1:9"
_OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_OTEL_ENABLED": "false",
    "HTTP_PROXY": _NOWHERE,
    "HTTPS_PROXY": _NOWHERE,
    "ALL_PROXY": _NOWHERE,
    "http_proxy": _NOWHERE,
    "https_proxy": _NOWHERE,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
_SECRETS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY")


@contextmanager
def _agent_server(
    folder: Path, factory: str, env: dict[str, str], agent: str = AGENT, http_app: str | None = None
) -> Iterator[str]:
    """``langgraph dev`` on a free port with our factory as its checkpointer; yields its URL.

    ``http_app``: the source of ``./http_app.py``, served as the server's ``http.app``.
    """
    (folder / "agent.py").write_text(agent)
    config: dict[str, Any] = {
        "dependencies": ["."],
        "graphs": {"agent": "./agent.py:graph"},
        "checkpointer": {"path": f"langgraph_durable.checkpointers.agent_server.{factory}"},
    }
    if http_app is not None:
        (folder / "http_app.py").write_text(http_app)
        config["http"] = {"app": "./http_app.py:app"}
    (folder / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    server_env = {k: v for k, v in os.environ.items() if k not in _SECRETS}
    server_env.update(_OFFLINE)
    server_env.update(env)
    log = (folder / "server.log").open("w")
    args = ["dev", "--no-browser", "--no-reload", "--port", str(port), "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "langgraph_cli", *args],
        cwd=folder,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (folder / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, (folder / "server.log").read_text()[-3000:]
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    text = (folder / "server.log").read_text()
    assert "Using custom checkpointer: Async" in text, text[-3000:]
    # nothing tried to leave the machine (it would have met the closed proxy)
    assert "127.0.0.1:9" not in text, text[-3000:]


async def _run_to_interrupt_and_resume(url: str, stored: Any) -> None:
    client = get_client(url=url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    paused = await client.runs.wait(tid, "agent", input={"items": ["start"]})
    assert paused["items"] == ["start", "worked"]
    assert paused["__interrupt__"][0]["value"] == {"question": "ship it?"}
    state = await client.threads.get_state(tid)
    assert state["next"] == ["ask"]
    assert await asyncio.to_thread(stored, tid) >= 3  # input, work, the paused step
    done = await client.runs.wait(tid, "agent", command={"resume": "yes"})
    assert done == {"items": ["start", "worked", "answered:yes"]}
    assert (await client.threads.get_state(tid))["next"] == []
    history = await client.threads.get_history(tid)
    assert len(history) == await asyncio.to_thread(stored, tid)
    # deleting the thread through the API deletes its checkpoints in our storage
    await client.threads.delete(tid)
    assert await asyncio.to_thread(stored, tid) == 0


async def test_agent_server_runs_and_resumes_on_the_postgres_saver(pg_schema, tmp_path) -> None:
    url, schema = pg_schema

    def stored(thread_id: str) -> int:
        with psycopg.connect(url) as conn:
            query = sql.SQL("SELECT count(*) FROM {}.checkpoints WHERE thread_id = %s")
            row = conn.execute(query.format(sql.Identifier(schema)), (thread_id,)).fetchone()
        return int(row[0]) if row else 0

    env = {"LANGGRAPH_DURABLE_POSTGRES_URL": url_with(url, "schema", schema)}
    with _agent_server(tmp_path, "postgres", env) as server:
        await _run_to_interrupt_and_resume(server, stored)


async def test_agent_server_runs_and_resumes_on_the_redis_saver(redis_prefix, tmp_path) -> None:
    url, prefix = redis_prefix

    def stored(thread_id: str) -> int:
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            return len(list(saver.list(config)))

    sep = "&" if "?" in url else "?"
    env = {"LANGGRAPH_DURABLE_REDIS_URL": f"{url}{sep}prefix={prefix}"}
    with _agent_server(tmp_path, "redis", env) as server:
        await _run_to_interrupt_and_resume(server, stored)
    keys = redis.Redis.from_url(url)
    try:
        assert any(True for _ in keys.scan_iter(match=f"*{prefix}*", count=1000))
    finally:
        keys.close()


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({}, "LANGGRAPH_DURABLE_POSTGRES_URL"),
        ({"LANGGRAPH_DURABLE_POSTGRES_URL": "redis://127.0.0.1"}, "LANGGRAPH_DURABLE_POSTGRES_URL"),
        ({"LANGGRAPH_DURABLE_POOL_SIZE": "0"}, "LANGGRAPH_DURABLE_POOL_SIZE"),
        ({"LANGGRAPH_DURABLE_SETUP": "maybe"}, "LANGGRAPH_DURABLE_SETUP"),
    ],
)
async def test_a_bad_variable_is_named(monkeypatch, pg_schema, env, field) -> None:
    url, schema = pg_schema
    for name in ("LANGGRAPH_DURABLE_POSTGRES_URL", "LANGGRAPH_DURABLE_POOL_SIZE"):
        monkeypatch.delenv(name, raising=False)
    if field != "LANGGRAPH_DURABLE_POSTGRES_URL":
        monkeypatch.setenv("LANGGRAPH_DURABLE_POSTGRES_URL", url_with(url, "schema", schema))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(InvalidConfigError) as raised:
        async with agent_server.postgres():
            pass
    assert raised.value.field == field


async def test_setup_can_be_left_to_a_deploy_step(monkeypatch, pg_schema) -> None:
    url, schema = pg_schema
    monkeypatch.setenv("LANGGRAPH_DURABLE_POSTGRES_URL", url_with(url, "schema", f"{schema}_none"))
    monkeypatch.setenv("LANGGRAPH_DURABLE_SETUP", "false")
    async with agent_server.postgres() as saver:
        with pytest.raises(LayoutVersionError):
            await saver.aget_tuple({"configurable": {"thread_id": "t"}})
