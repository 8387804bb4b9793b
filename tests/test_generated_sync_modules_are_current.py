"""The sync modules generated from their async sources are current, and the generator is sound.

``tools/async_to_sync.py --check`` fails the suite when a source changed without
its sync module being regenerated; the other tests pin what the generator does
(renames, markers, imports, staleness) on sources written for them.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "async_to_sync.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("async_to_sync", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_module_matches_its_source() -> None:
    done = subprocess.run(
        [sys.executable, str(TOOL), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ROOT / "migrations" / "_bulk.py").read_text().startswith("# Generated from ")


def test_async_code_becomes_its_sync_twin() -> None:
    source = textwrap.dedent(
        '''\
        """Calls :func:`aupgrade_all` on an ``AsyncConnection``."""
        import asyncio
        from collections.abc import AsyncIterator


        class AsyncRunner:
            async def __aenter__(self) -> AsyncRunner:
                return self

            async def run(self, conn: AsyncConnection) -> None:
                async with conn.transaction():
                    await asyncio.sleep(0.1)  # wait for aupgrade_all
                    rows = [r async for r in conn.stream()]
                    await conn.aput(rows)
        '''
    )
    out = _tool().unasync(source, "example_async.py")
    assert out == textwrap.dedent(
        '''\
        """Calls :func:`upgrade_all` on an ``Connection``."""
        import time
        import asyncio
        from collections.abc import Iterator


        class Runner:
            def __enter__(self) -> Runner:
                return self

            def run(self, conn: Connection) -> None:
                with conn.transaction():
                    time.sleep(0.1)  # wait for upgrade_all
                    rows = [r for r in conn.stream()]
                    conn.put(rows)
        '''
    )


def test_markers_keep_a_line_or_block_to_one_variant() -> None:
    source = textwrap.dedent(
        """\
        def f() -> int:
            x = 1
            if x:  # async-only
                x = 2
                x = 3
            # sync-only: x = 4
            y = x  # async-only
            return x
        """
    )
    assert _tool().unasync(source, "m_async.py") == textwrap.dedent(
        """\
        def f() -> int:
            x = 1
            x = 4
            return x
        """
    )


def test_async_before_anything_but_def_with_for_is_refused() -> None:
    tool = _tool()
    with pytest.raises(tool.GenerationError, match=r"m_async\.py:1"):
        tool.unasync("x = async\n", "m_async.py")
    with pytest.raises(tool.GenerationError, match="names no code"):
        tool.unasync("# sync-only:\n", "m_async.py")


def test_check_names_a_stale_module_and_a_run_makes_it_current(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    shutil.copy(TOOL, tmp_path / "tools" / "async_to_sync.py")
    package = tmp_path / "migrations"
    package.mkdir()
    (package / "_demo_async.py").write_text("async def afetch() -> None:\n    pass\n")
    tool = [sys.executable, str(tmp_path / "tools" / "async_to_sync.py")]

    stale = subprocess.run([*tool, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1
    assert "migrations/_demo.py is stale" in stale.stdout
    assert not (package / "_demo.py").exists()  # --check writes nothing

    assert subprocess.run(tool, capture_output=True).returncode == 0
    assert "def afetch() -> None:" in (package / "_demo.py").read_text()
    assert subprocess.run([*tool, "--check"], capture_output=True).returncode == 0

    (package / "_demo.py").write_text("# edited by hand\n")
    again = subprocess.run([*tool, "--check"], capture_output=True, text=True)
    assert again.returncode == 1 and "_demo.py is stale" in again.stdout

    (package / "_demo_async.py").unlink()
    (package / "_demo.py").write_text("# Generated from migrations/_demo_async.py by ...\n")
    orphan = subprocess.run([*tool, "--check"], capture_output=True, text=True)
    assert orphan.returncode == 1 and "source that is gone" in orphan.stdout
