"""No command prints a password, in any address form, on any error path or in its output.

Every command runs against addresses with a password in the libpq URL, a
keyword DSN, a ``?password=`` parameter, redis-py's ``:pw@`` and ``user:pw@``
and unix-socket forms: the server down, the password wrong, the address
malformed around the password, the storage not set up, the thread unknown,
and (for the commands that succeed there) on a working server. The password
appears neither as written nor percent-decoded, and each failure is one line.
"""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import quote

import pytest

from tests._cli_support import COMMANDS, GRAPH_ARGS, Outcome, run_cli
from tests._protected_servers import (
    ACL_PASSWORD,
    ACL_USER,
    PG_PASSWORD,
    REDIS_PASSWORD,
    ProtectedPostgres,
    ProtectedRedis,
    pg_forms,
    redis_forms,
)
from tests._servers import free_port

WRONG = "Wr0ng-pw%2F@x"


def _secret_forms(*passwords: str) -> list[str]:
    """Each password as written, percent-encoded and as the DSN quotes it."""
    out = []
    for pw in passwords:
        out += [pw, quote(pw, safe=""), quote(pw), pw.replace("'", "\\'")]
    return out


SECRETS = (PG_PASSWORD, REDIS_PASSWORD, ACL_PASSWORD, WRONG)


def _problems(outcome: Outcome, *, must_fail: bool) -> list[str]:
    """What is wrong with one command's outcome: a password shown, a traceback, not one line."""
    found = [f"shows {s!r}" for s in _secret_forms(*SECRETS) if s in outcome.text]
    if "Traceback" in outcome.text:
        found.append("traceback")
    if must_fail or outcome.code != 0:
        lines = outcome.err.strip().splitlines()
        if outcome.code != 1 or len(lines) != 1 or not lines[0].startswith("error: "):
            found.append(f"exit {outcome.code} with {len(lines)} lines on stderr")
    return found


def _check_all(
    capsys: pytest.CaptureFixture[str], args: list[str], forms: dict[str, str], *, must_fail: bool
) -> None:
    """Run ``args`` on every form; fail naming each form that broke a promise."""
    problems = {}
    for form, url in forms.items():
        outcome = run_cli(capsys, *args, "--url", url)
        if found := _problems(outcome, must_fail=must_fail):
            problems[form] = (found, outcome.err.strip()[:300])
    assert not problems, problems


def _unreachable_forms() -> dict[str, str]:
    port = free_port()  # nothing listens there
    redis = redis_forms(port, REDIS_PASSWORD, acl=(ACL_USER, ACL_PASSWORD), socket="/no/r.sock")
    return {
        **{f"pg-{k}": v for k, v in pg_forms(port, PG_PASSWORD, "/no/such/dir").items()},
        **{f"redis-{k}": v for k, v in redis.items()},
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_server_down(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    _check_all(capsys, COMMANDS[command], _unreachable_forms(), must_fail=True)


def _malformed_forms() -> dict[str, str]:
    port = free_port()
    redis_pw = quote(REDIS_PASSWORD, safe="")
    return {
        # libpq quotes the token it cannot decode: here, the password
        "pg-bad-percent": f"postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{port}/postgres",
        "pg-bad-query": f"postgresql://h:{port}/db?password={quote(PG_PASSWORD)}&nosuch=1",
        "dsn-unclosed-quote": f"host=127.0.0.1 password='{PG_PASSWORD} dbname=x",
        "dsn-no-equals": f"host=127.0.0.1 password={quote(PG_PASSWORD)} {PG_PASSWORD}",
        "dsn-unknown-keyword": f"host=127.0.0.1 password={quote(PG_PASSWORD)} nosuch=1",
        "redis-bad-db": f"redis://:{redis_pw}@127.0.0.1:{port}/0?db=x",
        "unknown-scheme": f"mysql://root:{quote(PG_PASSWORD, safe='')}@127.0.0.1/db",
        "not-an-address": f"root {PG_PASSWORD}",
        "wrong-parameter": f"redis://:{redis_pw}@h:{port}/0?schema=x",
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_malformed_address(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    _check_all(capsys, COMMANDS[command], _malformed_forms(), must_fail=True)


def _protected_forms(
    pg: ProtectedPostgres, rd: ProtectedRedis, *, wrong: bool = False
) -> dict[str, str]:
    pg_pw, rd_pw, acl_pw = (WRONG,) * 3 if wrong else (PG_PASSWORD, REDIS_PASSWORD, ACL_PASSWORD)
    return {
        **{f"pg-{k}": v for k, v in pg.forms(pg_pw).items()},
        **{f"redis-{k}": v for k, v in rd.forms(rd_pw, acl_pw).items()},
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_wrong_password(
    command: str,
    capsys: pytest.CaptureFixture[str],
    protected_postgres: ProtectedPostgres,
    protected_redis: ProtectedRedis,
) -> None:
    forms = _protected_forms(protected_postgres, protected_redis, wrong=True)
    _check_all(capsys, COMMANDS[command], forms, must_fail=True)


def _in_namespace(form: str, url: str, name: str) -> str:
    param = "schema" if form.startswith("pg-") else "prefix"
    if "://" not in url:
        return f"{url} {param}={name}"
    return f"{url}{'&' if '?' in url.split('@')[-1] else '?'}{param}={name}"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"setup", "demo", "migrate"}))
def test_storage_not_set_up_or_thread_unknown(
    command: str,
    capsys: pytest.CaptureFixture[str],
    protected_postgres: ProtectedPostgres,
    protected_redis: ProtectedRedis,
) -> None:
    forms = _protected_forms(protected_postgres, protected_redis)
    name = f"nothing_{command.replace('-', '_')}"
    fresh = {form: _in_namespace(form, url, name) for form, url in forms.items()}
    # a namespace nobody set up: errors for most commands, a report for some
    _check_all(capsys, COMMANDS[command], fresh, must_fail=False)
    for url in forms.values():
        assert run_cli(capsys, "setup", "--url", url).code == 0
    # set up, thread t-1 unknown
    _check_all(capsys, COMMANDS[command], forms, must_fail=False)


def test_working_commands_show_the_address_masked(
    capsys: pytest.CaptureFixture[str],
    protected_postgres: ProtectedPostgres,
    protected_redis: ProtectedRedis,
) -> None:
    for form, url in _protected_forms(protected_postgres, protected_redis).items():
        for command in ("setup", "status"):
            outcome = run_cli(capsys, command, "--url", url)
            assert outcome.code == 0, outcome
            assert "***" in outcome.out, (form, outcome.out)
            assert not _problems(outcome, must_fail=False), (form, outcome)
        # the schema or prefix asked for is part of the address shown
        param = "schema" if form.startswith("pg-") else "prefix"
        there = _in_namespace(form, url, "shown_ns")
        for command in ("setup", "status"):
            outcome = run_cli(capsys, command, "--url", there)
            assert outcome.code == 0, outcome
            header = outcome.out.splitlines()[0]
            assert header.startswith("storage at "), (form, outcome.out)
            assert "***" in header and (
                f"?{param}=shown_ns" in header
                or f"&{param}=shown_ns" in header
                or f" {param}='shown_ns'" in header
            ), (form, header)
            assert not _problems(outcome, must_fail=False), (form, outcome)


def test_the_installed_script_masks_passwords_too(protected_redis: ProtectedRedis) -> None:
    # the real process: the script's entry point, its logging, its exit code
    url = protected_redis.forms(WRONG)["default_user"]
    cli = [sys.executable, "-m", "langgraph_durable.interrupts.cli"]
    done = subprocess.run(
        [*cli, "worker", "--once", *GRAPH_ARGS, "--url", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done
    assert not _problems(Outcome(done.returncode, done.stdout, done.stderr), must_fail=True)
