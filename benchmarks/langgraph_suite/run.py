"""Run LangGraph's own checkpointer tests against langgraph-durable's savers.

    python benchmarks/langgraph_suite/run.py LANGGRAPH_REPO [--workdir DIR] [-- PYTEST_ARGS...]

``LANGGRAPH_REPO`` is a checkout or a bare git directory of langchain-ai/langgraph.
Its ``libs/langgraph/tests`` is extracted to ``--workdir`` (default
``/tmp/lgsuite``), ``durable_checkpointers.py`` is copied beside it and hooked
into its ``conftest.py``, and pytest runs every test of the files below that
takes the ``sync_checkpointer`` / ``async_checkpointer`` fixture, once per saver
of ours (``-k durable_``; ``--all`` runs LangGraph's own savers too). The tests
run against the installed langgraph: install the checkout's ``libs/langgraph``
to match them (newer releases changed internals some of them patch). They need
``syrupy pytest-mock langgraph-checkpoint-sqlite pycryptodome`` (the conftest
imports them). The tests that keep application types in state run with
``LANGGRAPH_STRICT_MSGPACK=true`` (see ``STRICT``), the switch that lets a
compiled graph allow its own schemas' types; everything else runs as LangGraph's
CI runs it.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = (
    "test_pregel.py",
    "test_pregel_async.py",
    "test_large_cases.py",
    "test_large_cases_async.py",
    "test_checkpoint_migration.py",
    "test_pydantic.py",
    "test_interruption.py",
    "test_time_travel.py",
    "test_time_travel_async.py",
    "test_subgraph_persistence.py",
    "test_subgraph_persistence_async.py",
)
HOOK = "\nfrom tests.durable_checkpointers import async_checkpointer, sync_checkpointer  # noqa\n"
# tests whose state holds an application type (a dataclass, a pydantic model,
# langchain_core.agents.AgentAction): the strict allowlist only rebuilds them
# when the compiled graph adds its schemas' types (LANGGRAPH_STRICT_MSGPACK=true)
STRICT = (
    "test_conditional_state_graph",  # langchain_core's / its own AgentAction
    "test_conditional_graph_state",
    "test_in_one_fan_out_state_graph_waiting_edge_custom_state_class_pydantic_input",
    "test_stream_messages_dedupe_pydantic_subgraph_interrupt",  # pydantic input models
    "test_interrupt_functional_pydantic",  # a pydantic model as an entrypoint's input
)


def extract(repo: Path, workdir: Path) -> Path:
    """Copy ``libs/langgraph`` (tests and pyproject) of ``repo`` into ``workdir``."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    git = ["git", f"--git-dir={repo}"] if (repo / "HEAD").is_file() else ["git", "-C", str(repo)]
    tar = subprocess.run(
        [*git, "archive", "HEAD", "libs/langgraph/tests", "libs/langgraph/pyproject.toml"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(workdir, filter="data")
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    root = workdir / "libs" / "langgraph"
    shutil.copy(HERE / "durable_checkpointers.py", root / "tests" / "durable_checkpointers.py")
    with open(root / "tests" / "conftest.py", "a", encoding="utf-8") as conftest:
        conftest.write(HOOK)
    print(f"langgraph {commit} extracted to {root}", flush=True)
    return root


def main() -> int:
    """Extract, hook, run; the exit code is pytest's (the worse of the runs)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lgsuite"))
    parser.add_argument("--all", action="store_true", help="LangGraph's own savers too")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(extra) - (1 if extra or "--" in argv else 0)])
    root = extract(args.repo.resolve(), args.workdir.resolve())
    files = [f"tests/{name}" for name in FILES]
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    codes = []
    strict = " or ".join(STRICT)
    # LangGraph's own savers run every test as its CI does; ours run the
    # application-type tests in strict mode (below) and the others likewise
    ours_strict = f"durable_ and ({strict})"
    plain_k = f"not ({ours_strict})" if args.all else f"durable_ and not ({strict})"
    codes.append(subprocess.run([*base, *files, "-k", plain_k, *extra], cwd=root).returncode)
    if STRICT:
        env = dict(os.environ, LANGGRAPH_STRICT_MSGPACK="true")
        codes.append(
            subprocess.run(
                [*base, *files, "-k", ours_strict, *extra],
                cwd=root,
                env=env,
            ).returncode
        )
    return max(codes)


if __name__ == "__main__":
    raise SystemExit(main())
