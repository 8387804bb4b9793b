"""upgrade_all (and its async twin, and the CLI) report failing threads and go on; dry runs
count per version and try the steps on a sample without writing."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from langgraph_durable.migrations import aupgrade_all, upgrade_all
from tests._backends import BACKENDS
from tests._bulk_seed import add_bad_thread, picky, v1
from tests._migration_backends import Backend, backend_from_fixture, seed_bulk
from tests._parts import part_of
from tests._servers import url_with

THREADS = 20


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    b = backend_from_fixture(request.param, request)
    seed_bulk(b, THREADS)
    with b.open(v1) as saver:
        add_bad_thread(saver)
    return b


def _versions(backend: Backend) -> dict[int, tuple[int, int, int]]:
    with backend.open(picky) as saver:
        return {
            s.schema_version: (s.threads, s.checkpoints, s.paused_threads)
            for s in part_of(saver, "migration_store").migration_status()
        }


def test_failing_thread_is_reported_and_the_rest_go_on(backend: Backend) -> None:
    with backend.open(picky) as saver:
        seen = []
        result = upgrade_all(saver, picky, batch_size=7, progress=lambda p: seen.append(p.done))
    assert result.upgraded == THREADS and result.failed == 1
    (failure,) = result.failures
    assert failure.thread_id == "bad" and failure.schema_version == 1
    assert "price 13 is not allowed" in failure.error and "refuse_13" in failure.error
    assert seen[-1] == THREADS + 1 and seen == sorted(seen)
    # latest-only: the bad thread and every older checkpoint stay on version 1
    assert _versions(backend) == {1: (1, 3 * THREADS + 4, 1), 2: (THREADS, THREADS, THREADS)}


def test_dry_run_counts_and_samples_without_writing(backend: Backend) -> None:
    before = _versions(backend)
    with backend.open(picky) as saver:
        result = upgrade_all(saver, picky, dry_run=True, sample_size=50)
        history = upgrade_all(saver, picky, dry_run=True, all_history=True, sample_size=5)
    assert result.dry_run and result.upgraded == 0
    (v,) = result.dry_run_versions
    assert (v.schema_version, v.would_change, v.sampled) == (1, THREADS + 1, THREADS + 1)
    assert [f.thread_id for f in v.sample_failures] == ["bad"]
    assert history.by_version == {1: 4 * (THREADS + 1)}
    assert history.dry_run_versions[0].sampled == 5
    assert _versions(backend) == before


async def test_async_twin_upgrades_all_history(backend: Backend) -> None:
    async with backend.aopen(picky) as saver:
        result = await aupgrade_all(saver, picky, all_history=True, batch_size=9)
        again = await aupgrade_all(saver, picky, all_history=True)
    # the bad thread: its two checkpoints holding (or receiving) price 13 fail
    assert result.upgraded == 4 * THREADS + 2
    assert {f.thread_id for f in result.failures} == {"bad"} and result.failed == 2
    assert again.upgraded == 0 and again.failed == 2


def _cli(*args: str) -> Any:
    """Run the CLI in this process (fast); exit code, stdout and stderr as a subprocess would."""
    from click.testing import CliRunner

    from langgraph_durable.interrupts.cli import main

    return CliRunner().invoke(main, list(args))


def _url(backend: Backend) -> str:
    param = "schema" if backend.name == "postgres" else "prefix"
    return url_with(backend.url, param, backend.area)


def test_cli_migrate_exits_non_zero_when_some_failed_and_status_shows_versions(
    backend: Backend,
) -> None:
    url = _url(backend)
    out = _cli("status", "--url", url)
    assert out.exit_code == 0, out.stderr
    assert "paused at an interrupt" in out.stdout
    assert f"│              1 │      {THREADS + 1} │" in out.stdout
    out = _cli("migrate", "--url", url, "--migrations", "tests._bulk_seed:picky", "--dry-run")
    assert out.exit_code == 3, out.stderr
    assert "dry run" in out.stdout and "thread='bad'" in out.stderr
    out = _cli("migrate", "--url", url, "--migrations", "tests._bulk_seed:picky")
    assert out.exit_code == 3
    assert f"upgraded {THREADS} threads to version 2" in out.stdout
    assert "failed: thread='bad'" in out.stderr and "price 13 is not allowed" in out.stderr
    out = _cli("status", "--url", url)
    assert f"│              2 │      {THREADS} │" in out.stdout


def test_cli_mistakes_are_one_line_without_traceback(backend: Backend) -> None:
    # the real entry point, in its own process
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "langgraph_durable.interrupts.cli",
            "migrate",
            "--url",
            _url(backend),
            "--migrations",
            "tests._bulk_seed:nope",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr and "has no 'nope'" in out.stderr
    for spec, says in (
        ("no_such_module:m", "cannot import"),
        ("tests._bulk_seed:build", "expected a langgraph_durable.migrations.StateMigrations"),
        ("tests._bulk_seed", "package.module:name"),
    ):
        res = _cli("migrate", "--url", _url(backend), "--migrations", spec)
        assert res.exit_code == 1, (spec, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and says in res.stderr, res.stderr
