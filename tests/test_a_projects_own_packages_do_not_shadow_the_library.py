"""A project with its own ``migrations``, ``interrupts`` and ``checkpointers`` packages
(Flask-Migrate, yoyo and hand-rolled ones are common) uses the library normally: the
library installs nothing but ``langgraph_durable`` at the top level."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = """
import sys
import migrations, interrupts, checkpointers
# the project's own packages are the ones imported by these names
assert migrations.OWNER == interrupts.OWNER == checkpointers.OWNER == "project", sys.path

from datetime import timedelta
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
from langgraph_durable import PostgresSaver, StateMigrations, approve, request_approval

class S(TypedDict, total=False):
    approved: bool

def review(state: S) -> S:
    return {"approved": request_approval({"action": "refund"}, timeout=timedelta(hours=1)).approved}

builder = StateGraph(S)
builder.add_node("review", review)
builder.add_edge(START, "review")
builder.add_edge("review", END)
m = StateMigrations(version=1)
with PostgresSaver.from_conn_string(URL, schema=SCHEMA, migrations=m) as saver:
    saver.setup()
    graph = builder.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t-1"}}
    graph.invoke({}, cfg)
    approve(graph, cfg, by="alice")
    assert graph.get_state(cfg).values == {"approved": True}
# the library's modules were loaded from langgraph_durable only
ours = ("migrations.", "interrupts.", "checkpointers.")
leaked = sorted(m for m in sys.modules if m.startswith(ours))
assert not leaked, leaked
print("ok")
"""


def test_project_packages_named_like_ours_come_first(
    tmp_path: Path, pg_schema: tuple[str, str]
) -> None:
    url, schema = pg_schema
    for name in ("migrations", "interrupts", "checkpointers"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text('OWNER = "project"\n')
    script = f"URL = {url!r}\nSCHEMA = {schema!r}\n" + textwrap.dedent(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)  # the project's folder first, as a project runs
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
