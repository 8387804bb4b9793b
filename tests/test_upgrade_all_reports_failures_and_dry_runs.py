"""upgrade_all (and its async twin, and the CLI) report failing threads and go on; dry runs
count per version and try the steps on a sample without writing."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import redis

from migrations import aupgrade_all, upgrade_all
from tests._bulk_seed import add_bad_thread, picky, v1
from tests._migration_backends import BACKENDS, Backend, backend_from_fixture, seed_bulk
from tests._servers import free_port, redis_server_binary

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
            for s in saver.migration_status()
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


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interrupts.cli", *args], capture_output=True, text=True,
        timeout=120,
    )


@pytest.fixture
def own_redis() -> Iterator[str]:
    """A Redis server of this test's own (the CLI uses the default key prefix)."""
    port = free_port()
    proc = subprocess.Popen(
        [redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=BACKENDS)
def whole_store(request: pytest.FixtureRequest) -> Backend:
    """Like ``backend`` but owning a whole database (the CLI opens the default schema)."""
    if request.param == "postgres":
        b = Backend("postgres", request.getfixturevalue("pg_database"), "public")
    else:
        b = Backend("redis", request.getfixturevalue("own_redis"), "lgd")
    seed_bulk(b, THREADS)
    with b.open(v1) as saver:
        add_bad_thread(saver)
    return b


def test_cli_migrate_exits_non_zero_when_some_failed_and_status_shows_versions(
    whole_store: Backend,
) -> None:
    url = whole_store.url
    out = _cli("status", "--url", url)
    assert out.returncode == 0, out.stderr
    assert "paused at an interrupt" in out.stdout
    assert f"│              1 │      {THREADS + 1} │" in out.stdout
    out = _cli("migrate", "--url", url, "--migrations", "tests._bulk_seed:picky", "--dry-run")
    assert out.returncode == 3, out.stderr
    assert "dry run" in out.stdout and "thread='bad'" in out.stderr
    out = _cli("migrate", "--url", url, "--migrations", "tests._bulk_seed:picky")
    assert out.returncode == 3
    assert f"upgraded {THREADS} threads to version 2" in out.stdout
    assert "failed: thread='bad'" in out.stderr and "price 13 is not allowed" in out.stderr
    out = _cli("migrate", "--url", url, "--migrations", "tests._bulk_seed:nope")
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
    out = _cli("status", "--url", url)
    assert f"│              2 │      {THREADS} │" in out.stdout
