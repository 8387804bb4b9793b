"""Storage never set up is reported the same on both backends: an error, not an empty table.

``migration_status()`` raises ``LayoutVersionError(found=None)`` (sync and
async, Postgres and Redis), and ``langgraph-durable status`` prints one line
naming the schema or prefix and exits 1; after ``setup`` it reports.
"""

from __future__ import annotations

import asyncio

import pytest

from langgraph_durable.checkpointers import LayoutVersionError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import BACKENDS
from tests._cli_support import assert_one_error_line, run_cli
from tests._parts import part_of
from tests._servers import url_with


def _area(backend: str, request: pytest.FixtureRequest) -> tuple[str, dict[str, str], str]:
    """``(driver url, saver options, CLI url)`` of a namespace nobody set up."""
    if backend == "postgres":
        url, schema = request.getfixturevalue("pg_schema")  # exists, holds nothing
        return url, {"schema": schema}, url_with(url, "schema", schema)
    url, prefix = request.getfixturevalue("redis_prefix")
    return url, {"prefix": prefix}, url_with(url, "prefix", prefix)


@pytest.mark.parametrize("backend", BACKENDS)
def test_migration_status_raises_on_both_backends(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, options, _ = _area(backend, request)
    sync_cls = PostgresSaver if backend == "postgres" else RedisSaver
    with sync_cls.from_conn_string(url, **options) as saver:
        with pytest.raises(LayoutVersionError) as caught:
            part_of(saver, "migration_store").migration_status()
        assert caught.value.found is None
        assert "storage is not set up" in str(caught.value)
        assert "call saver.setup() once" in str(caught.value)

    async def _async() -> None:
        async_cls = AsyncPostgresSaver if backend == "postgres" else AsyncRedisSaver
        async with async_cls.from_conn_string(url, **options) as saver:
            with pytest.raises(LayoutVersionError) as caught:
                await part_of(saver, "migration_store").amigration_status()
            assert caught.value.found is None
            await saver.setup()
            assert await part_of(saver, "migration_store").amigration_status() == []

    asyncio.run(_async())


@pytest.mark.parametrize("backend", BACKENDS)
def test_status_is_one_line_and_exit_1_until_setup(
    backend: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    _, options, cli_url = _area(backend, request)
    (param, name) = next(iter(options.items()))
    line = assert_one_error_line(run_cli(capsys, "status", "--url", cli_url))
    assert f"({param} {name!r})" in line
    assert line.startswith("error: nothing is set up at ")
    assert "run `langgraph-durable setup` with this --url first" in line
    assert run_cli(capsys, "setup", "--url", cli_url).code == 0
    shown = run_cli(capsys, "status", "--url", cli_url)
    assert shown.code == 0, shown
    assert "runs: 0 running, 0 orphaned, 0 parked" in shown.out


def test_status_of_a_schema_that_does_not_exist(
    pg_server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = assert_one_error_line(
        run_cli(capsys, "status", "--url", url_with(pg_server_url, "schema", "no_such_schema_here"))
    )
    assert "(schema 'no_such_schema_here')" in line
