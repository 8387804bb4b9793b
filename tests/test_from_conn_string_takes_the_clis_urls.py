"""``from_conn_string`` takes the URLs the command line takes, saver parameters included.

``?schema=`` and ``?prepared_statements=`` on a Postgres URL, ``?prefix=`` on a
Redis one, are the keywords of the same names, taken off before the driver
sees the URL: a namespace set up with ``langgraph-durable setup --url URL`` is
the one a saver opened on the same URL in Python reads and writes. A URL value
and a keyword that differ, an invalid name in the URL and the other backend's
parameter are refused with ``InvalidConfigError`` before anything connects
(the URLs of those cases point at a port nothing listens on). Sync and async,
Postgres and Redis.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.conninfo import conninfo_to_dict

from langgraph_durable.checkpointers import InvalidConfigError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_durable.checkpointers.redis import AsyncRedisSaver, RedisSaver
from tests._backends import SAVER_KINDS
from tests._cli_support import run_cli
from tests._servers import free_port, url_with

CLASSES: dict[str, Any] = {
    "postgres-sync": PostgresSaver,
    "postgres-async": AsyncPostgresSaver,
    "redis-sync": RedisSaver,
    "redis-async": AsyncRedisSaver,
}
PARAM = {"postgres": "schema", "redis": "prefix"}


def _backend(kind: str) -> str:
    return kind.split("-")[0]


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


async def _put(kind: str, url: str, thread: str, **options: Any) -> None:
    """Store one checkpoint of ``thread`` through a saver opened on ``url``."""
    cls, checkpoint = CLASSES[kind], empty_checkpoint()
    if kind.endswith("-sync"):
        with cls.from_conn_string(url, **options) as saver:
            saver.put(_config(thread), checkpoint, {}, {})
        return
    async with cls.from_conn_string(url, **options) as asaver:
        await asaver.aput(_config(thread), checkpoint, {}, {})


async def _find(kind: str, url: str, thread: str, **options: Any) -> bool:
    """Whether a saver opened on ``url`` reads a checkpoint of ``thread``."""
    cls = CLASSES[kind]
    if kind.endswith("-sync"):
        with cls.from_conn_string(url, **options) as saver:
            return saver.get_tuple(_config(thread)) is not None
    async with cls.from_conn_string(url, **options) as asaver:
        return await asaver.aget_tuple(_config(thread)) is not None


async def _refusal(kind: str, url: str, **options: Any) -> InvalidConfigError:
    """The ``InvalidConfigError`` opening a saver on ``url`` raises."""
    with pytest.raises(InvalidConfigError) as refused:
        await _find(kind, url, "never-read", **options)
    return refused.value


def _down(backend: str, param: str | None = None, value: str = "") -> str:
    """A URL of ``backend`` on a port nothing listens on (with ``?param=value``)."""
    if backend == "postgres":
        base = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres?connect_timeout=2"
    else:
        base = f"redis://127.0.0.1:{free_port()}/0"
    return url_with(base, param, value) if param else base


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_a_namespace_set_up_by_the_cli_is_the_one_python_opens(
    kind: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = _backend(kind)
    # a schema that exists and holds nothing / a prefix nobody used
    fixture = "pg_schema" if backend == "postgres" else "redis_prefix"
    server_url, name = request.getfixturevalue(fixture)
    param = PARAM[backend]
    url = url_with(server_url, param, name)
    assert run_cli(capsys, "setup", "--url", url).code == 0

    await _put(kind, url, "from-the-url")
    # the checkpoint is in the URL's namespace: a saver given it as a keyword finds it
    assert await _find(kind, server_url, "from-the-url", **{param: name})
    # the keyword and the URL may both name it, if they agree
    assert await _find(kind, url, "from-the-url", **{param: name})


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_a_url_value_and_a_different_keyword_are_refused_naming_both(kind: str) -> None:
    backend = _backend(kind)
    param = PARAM[backend]
    refused = await _refusal(kind, _down(backend, param, "from_url"), **{param: "from_keyword"})
    assert refused.field == param
    assert f"?{param}='from_url'" in str(refused)
    assert f"{param}='from_keyword'" in str(refused)


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_an_invalid_name_in_the_url_is_refused_as_the_keyword_is(kind: str) -> None:
    backend = _backend(kind)
    param = PARAM[backend]
    # too long for a PostgreSQL name; a brace would become every key's hash tag
    name = "s" * 64 if backend == "postgres" else "a{b"
    in_url = await _refusal(kind, _down(backend, param, name.replace("{", "%7B")))
    as_keyword = await _refusal(kind, _down(backend), **{param: name})
    assert (in_url.field, str(in_url)) == (as_keyword.field, str(as_keyword))
    assert in_url.field == param


@pytest.mark.parametrize("kind", SAVER_KINDS)
async def test_the_other_backends_parameter_is_refused(kind: str) -> None:
    backend = _backend(kind)
    other = "prefix" if backend == "postgres" else "schema"
    refused = await _refusal(kind, _down(backend, other, "x"))
    assert refused.field == "url"
    assert f"{other}= is for" in refused.reason


@pytest.mark.parametrize("kind", ["postgres-sync", "postgres-async"])
async def test_prepared_statements_off_in_the_url_is_the_keyword(
    kind: str, pg_set_up_schema: tuple[str, str]
) -> None:
    server_url, schema = pg_set_up_schema
    url = url_with(url_with(server_url, "schema", schema), "prepared_statements", "false")
    cls = CLASSES[kind]
    if kind.endswith("-sync"):
        with cls.from_conn_string(url, pool_size=None) as saver:
            assert saver.conn.prepare_threshold is None
            assert saver.get_tuple(_config("none")) is None
    else:
        async with cls.from_conn_string(url, pool_size=None) as asaver:
            assert asaver.conn.prepare_threshold is None
            assert await asaver.aget_tuple(_config("none")) is None
    refused = await _refusal(
        kind, _down("postgres", "prepared_statements", "false"), prepared_statements=True
    )
    assert refused.field == "prepared_statements"
    assert "False" in str(refused) and "True" in str(refused)


def test_an_empty_postgres_address_still_means_libpqs_environment(
    pg_set_up_schema: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server_url, schema = pg_set_up_schema
    env = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE"}
    env["password"] = "PGPASSWORD"
    for key, value in conninfo_to_dict(server_url).items():
        if key in env:
            monkeypatch.setenv(env[key], str(value))
    with PostgresSaver.from_conn_string("", schema=schema, pool_size=None) as saver:
        assert isinstance(saver.conn, psycopg.Connection)
        assert saver.get_tuple(_config("none")) is None
