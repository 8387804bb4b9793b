"""``upgrade_all`` on 20,000 checkpoints (1,000 in the default run): a run killed half-way and
restarted upgrades every checkpoint exactly once, and two concurrent runs never upgrade the
same checkpoint twice. The default run still takes 20 claimed batches: its runs claim,
crash mid-batch and contend for batches as the slow one's do.

The step counts its applications in the state (``applied``) and nests ``price``,
so a checkpoint done twice would show ``applied == 2`` or a nested amount.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests._backends import BACKENDS
from tests._bulk_seed import check_each_upgraded_once, m
from tests._migration_backends import Backend, backend_from_fixture, seed_bulk
from tests._parts import part_of

# (threads, batch size): 4 checkpoints per thread; 20 batches by default, 100 when slow
SIZES = [
    pytest.param((250, 50), id="1k-checkpoints"),
    pytest.param((5000, 200), id="20k-checkpoints", marks=pytest.mark.slow),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return backend_from_fixture(request.param, request)


def _worker(backend: Backend, batch: int, *, crash_after: int = 0) -> subprocess.Popen[str]:
    env = {**os.environ, "DURABLE_TEST_CRASH_AFTER": str(crash_after)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests._migration_backends",
            "upgrade-all",
            *backend.argv(),
            str(batch),
            "--all-history",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, dict[str, int] | None]:
    out, err = proc.communicate(timeout=240)
    if proc.returncode not in (0, 3):
        pytest.fail(f"worker exited {proc.returncode}: {err[-2000:]}")
    return proc.returncode, (json.loads(out) if proc.returncode == 0 else None)


def _status(backend: Backend) -> dict[int, int]:
    with backend.open(m) as saver:
        return {
            s.schema_version: s.checkpoints
            for s in part_of(saver, "migration_store").migration_status()
        }


@pytest.mark.timeout(900)
@pytest.mark.parametrize("size", SIZES)
def test_killed_run_restarted_upgrades_every_checkpoint_once(
    backend: Backend, size: tuple[int, int]
) -> None:
    threads, batch = size
    total = seed_bulk(backend, threads)
    assert total == 4 * threads
    # the step runs about twice per checkpoint (values, pending writes): mid-run
    code, _ = _finish(_worker(backend, batch, crash_after=3 * threads))
    assert code == 3  # died mid-batch, its open batch rolled back
    half = _status(backend)
    assert 0 < half.get(2, 0) < total and half[1] + half[2] == total
    code, result = _finish(_worker(backend, batch))
    assert code == 0 and result is not None
    assert result == {"upgraded": half[1], "failed": 0}
    with backend.open(m) as saver:
        assert check_each_upgraded_once(saver) == total
    assert _status(backend) == {2: total}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("size", SIZES)
def test_two_concurrent_runs_do_not_double_apply(backend: Backend, size: tuple[int, int]) -> None:
    threads, batch = size
    total = seed_bulk(backend, threads)
    a, b = _worker(backend, batch), _worker(backend, batch)
    (code_a, res_a), (code_b, res_b) = _finish(a), _finish(b)
    assert code_a == 0 and code_b == 0 and res_a and res_b
    assert res_a["upgraded"] + res_b["upgraded"] == total
    assert res_a["failed"] == res_b["failed"] == 0
    with backend.open(m) as saver:
        assert check_each_upgraded_once(saver) == total
