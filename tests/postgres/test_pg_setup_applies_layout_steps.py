"""setup() applies the numbered layout steps once, under a lock, from any copy."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import uuid
from pathlib import Path

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_durable.checkpointers import LayoutVersionError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.migrations.postgres import latest_version, layout_steps

ROOT = Path(__file__).resolve().parents[2]


def _layout(url: str, schema: str) -> list[tuple[int, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            f'SELECT version, name FROM "{schema}".langgraph_durable_layout ORDER BY version'
        ).fetchall()


def test_steps_are_numbered_files_shipped_as_package_data() -> None:
    steps = layout_steps()
    assert [s.version for s in steps] == list(range(1, len(steps) + 1))
    files = sorted(p.name for p in (ROOT / "migrations" / "postgres").glob("*.sql"))
    assert files == [f"{s.version:04d}_{s.name}.sql" for s in steps]


async def test_ten_concurrent_setups_end_with_one_correct_layout(pg_server_url) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"  # not created yet: setup() creates it
    try:
        savers = []
        for _ in range(10):
            conn = await psycopg.AsyncConnection.connect(pg_server_url, autocommit=True)
            savers.append(AsyncPostgresSaver(conn, schema=schema))
        results = await asyncio.gather(*(s.setup() for s in savers), return_exceptions=True)
        assert [r for r in results if r is not None] == []
        assert _layout(pg_server_url, schema) == [(s.version, s.name) for s in layout_steps()]
        # and it works
        stored = await savers[3].aput(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
        )
        assert (await savers[7].aget_tuple(stored)).config == stored
        for s in savers:
            await s.conn.close()
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_setup_is_idempotent_and_schemas_are_isolated(pg_schema, pg_server_url) -> None:
    url, schema = pg_schema
    other = f"t_{uuid.uuid4().hex[:12]}"
    config = {"configurable": {"thread_id": "same-thread", "checkpoint_ns": ""}}
    try:
        with (
            PostgresSaver.from_conn_string(url, schema=schema) as a,
            PostgresSaver.from_conn_string(url, schema=other) as b,
        ):
            a.setup()
            a.setup()
            b.setup()
            assert _layout(url, schema)[-1][0] == latest_version()
            a.put(config, empty_checkpoint(), {"app": "a"}, {})
            assert b.get_tuple(config) is None
            b.put(config, empty_checkpoint(), {"app": "b"}, {})
            assert a.get_tuple(config).metadata["app"] == "a"
            assert b.get_tuple(config).metadata["app"] == "b"
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{other}" CASCADE')


def test_a_saver_before_setup_says_so(pg_schema) -> None:
    url, schema = pg_schema
    with (
        PostgresSaver.from_conn_string(url, schema=schema) as saver,
        pytest.raises(LayoutVersionError) as err,
    ):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert "setup()" in str(err.value)


def test_an_installed_wheel_carries_and_applies_the_steps(pg_schema, tmp_path) -> None:
    url, schema = pg_schema
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__"),
    )
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("langgraph_durable-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    vpy = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # install the wheel with this interpreter's pip into the new venv (offline)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            site,
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    # dependencies come from the test environment, after the wheel's own files
    Path(site, "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = textwrap.dedent(
        f"""
        import langgraph_durable.checkpointers, langgraph_durable.migrations.postgres as mp
        from langgraph_durable.checkpointers.postgres import PostgresSaver
        installed = langgraph_durable.checkpointers.__file__
        assert installed.startswith({site!r}), installed
        assert len(mp.layout_steps()) == {latest_version()}
        with PostgresSaver.from_conn_string({url!r}, schema={schema!r}) as s:
            s.setup()
        print("ok")
        """
    )
    out = subprocess.run(
        [str(vpy), "-c", script], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == "ok"
    assert _layout(url, schema)[-1][0] == latest_version()


def test_setup_upgrades_a_schema_left_at_an_older_step(pg_schema) -> None:
    url, schema = pg_schema
    first = layout_steps()[0]
    # a schema as an older release left it: only step 1 applied and recorded
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('search_path', %s, true)", (f'"{schema}"',))
        conn.execute(first.sql)
        conn.execute(
            "CREATE TABLE langgraph_durable_layout (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        conn.execute(
            "INSERT INTO langgraph_durable_layout (version, name) VALUES (1, %s)", (first.name,)
        )
        conn.execute(
            "INSERT INTO checkpoints"
            " (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)"
            " VALUES ('old', '', '1', %s, '{\"step\": 7}')",
            (
                '{"v": 4, "id": "1", "ts": "", "channel_values": {"x": 1}, '
                '"channel_versions": {"x": "1"}, "versions_seen": {}}',
            ),
        )
    assert _layout(url, schema) == [(1, first.name)]
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        assert _layout(url, schema) == [(s.version, s.name) for s in layout_steps()]
        tup = saver.get_tuple({"configurable": {"thread_id": "old"}})
        assert tup.checkpoint["channel_values"] == {"x": 1}
        assert tup.metadata["step"] == 7
