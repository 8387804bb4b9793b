"""The benchmark commands the results page names run as written, from a checkout.

``python benchmarks/X.py`` puts ``benchmarks/`` (not the checkout) first on
``sys.path``; a script that imports the tests' helpers before it adds the
checkout fails at once, and a renamed internal breaks a script nobody runs in
the suite. A quick ``run_all.py`` runs every job the results page is built from
at small sizes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))
# run from elsewhere, as a user would from any directory of the checkout: no PYTHONPATH help
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_benchmark_script_starts(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout.lower(), done.stdout[-2000:]


def test_a_quick_run_all_runs_every_job(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick", "--out", str(out)],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "[run_all] failed" not in done.stdout
    page = out.read_text()
    from benchmarks.run_all import JOBS

    missing = [j.key for j in JOBS if f"<!-- run_all:{j.key} -->" not in page]
    assert missing == [], missing
    assert "a quick smoke run" in page
