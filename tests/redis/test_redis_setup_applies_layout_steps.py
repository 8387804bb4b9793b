"""setup() applies the numbered layout steps under a lock and warns once when nothing persists."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
import redis

from langgraph_durable.checkpointers import LayoutVersionError
from langgraph_durable.checkpointers.redis import RedisSaver, _layout
from langgraph_durable.checkpointers.redis._keys import Keys
from langgraph_durable.migrations.redis import latest_version, steps
from tests.redis._own_server import OwnRedis


def test_steps_are_data_numbered_from_one() -> None:
    found = steps()
    assert [s["version"] for s in found] == list(range(1, len(found) + 1))
    assert found[0]["file"] == "0001_initial.json"
    assert latest_version() == len(found)


def test_setup_records_the_version_and_is_idempotent(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        assert int(raw.get(Keys(prefix).layout())) == latest_version()
        saver.setup()
        assert int(raw.get(Keys(prefix).layout())) == latest_version()
        assert raw.get(Keys(prefix).layout_lock()) is None  # released


def test_concurrent_setups_all_succeed(redis_prefix: tuple[str, str], raw: redis.Redis) -> None:
    url, prefix = redis_prefix
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
                saver.setup()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=run) for _ in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert int(raw.get(Keys(prefix).layout())) == latest_version()


def test_setup_waits_for_the_lock_holder(redis_prefix: tuple[str, str], raw: redis.Redis) -> None:
    url, prefix = redis_prefix
    keys = Keys(prefix)
    raw.set(keys.layout_lock(), "someone-else", px=600)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()  # polls until the other holder's lock expires, then applies
    assert int(raw.get(keys.layout())) == latest_version()


def test_a_newer_layout_is_refused(redis_prefix: tuple[str, str], raw: redis.Redis) -> None:
    url, prefix = redis_prefix
    raw.set(Keys(prefix).layout(), latest_version() + 1)
    with (
        RedisSaver.from_conn_string(url, prefix=prefix) as saver,
        pytest.raises(LayoutVersionError) as err,
    ):
        saver.setup()
    assert err.value.found == latest_version() + 1
    assert err.value.expected == latest_version()
    assert raw.get(Keys(prefix).layout_lock()) is None


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "persists nothing" in r.getMessage()]


def test_warns_once_when_the_server_persists_nothing(caplog: pytest.LogCaptureFixture) -> None:
    server = OwnRedis(args=["--save", "", "--appendonly", "no"]).start()
    try:
        caplog.set_level(logging.WARNING, logger="langgraph_durable.checkpointers.redis")
        for _ in range(2):
            with RedisSaver.from_conn_string(server.url, prefix=f"p{uuid.uuid4().hex[:6]}") as s:
                s.setup()
        assert len(_warnings(caplog)) == 1
        assert str(server.port) in _warnings(caplog)[0]
    finally:
        server.remove()


def test_no_warning_with_aof_or_when_config_is_disabled(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="langgraph_durable.checkpointers.redis")
    with RedisSaver.from_conn_string(own_redis.url, prefix="p") as saver:
        saver.setup()
    assert _warnings(caplog) == []
    locked = OwnRedis(args=["--save", "", "--appendonly", "no", "--rename-command", "CONFIG", ""])
    locked.start()
    try:
        _layout._warned.clear()
        with RedisSaver.from_conn_string(locked.url, prefix="p") as saver:
            saver.setup()  # CONFIG is disabled: nothing to check, no error
        assert _warnings(caplog) == []
    finally:
        locked.remove()
