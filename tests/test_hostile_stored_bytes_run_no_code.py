"""Bytes written straight into storage never make the saver run code or lie.

Payloads that ask the serializer to call ``os.system``, ``subprocess.Popen``,
``subprocess.run``, ``builtins.eval`` (msgpack ext types, a JSON ``lc: 2``
constructor envelope, a pickle) and corrupted or truncated blobs replace one
channel value or one pending write of a victim thread. Reading it raises
``CorruptCheckpointError`` naming the thread, namespace, checkpoint id and
channel; the sentinel file those payloads would create never appears; a
bystander thread reads back intact.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import psycopg
import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import sql

from langgraph_durable.checkpointers import CorruptCheckpointError
from tests import _durability as d
from tests._backends import BACKENDS

NS = "sub:1"


def ext(code: int, *fields: Any) -> bytes:
    return ormsgpack.packb(ormsgpack.Ext(code, ormsgpack.packb(list(fields))))


def hostile(sentinel: Path) -> dict[str, tuple[str, bytes]]:
    s = str(sentinel)
    return {
        "os.system": ("msgpack", ext(0, "os", "system", f"touch {s}")),
        "subprocess.Popen": ("msgpack", ext(1, "subprocess", "Popen", ["touch", s])),
        "subprocess.run kwargs": ("msgpack", ext(2, "subprocess", "run", {"args": ["touch", s]})),
        "builtins.eval": ("msgpack", ext(0, "builtins", "eval", f"open({s!r}, 'w')")),
        "method call": ("msgpack", ext(3, "subprocess", "Popen", ["touch", s], "__call__")),
        "pydantic v2": ("msgpack", ext(5, "subprocess", "Popen", {"args": ["touch", s]}, "x")),
        "nested in a list": (
            "msgpack",
            ormsgpack.packb([1, ormsgpack.Ext(0, ormsgpack.packb(["os", "system", f"touch {s}"]))]),
        ),
        "json constructor": (
            "json",
            json.dumps(
                {
                    "lc": 2,
                    "type": "constructor",
                    "id": ["subprocess", "Popen"],
                    "args": [["touch", s]],
                }
            ).encode(),
        ),
        "json lc1 constructor": (
            "json",
            json.dumps(
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["os", "system"],
                    "kwargs": {"command": f"touch {s}"},
                }
            ).encode(),
        ),
        "pickle": ("pickle", b"cos\nsystem\n(S'touch " + s.encode() + b"'\ntR."),
    }


def corrupt(good: tuple[str, bytes]) -> dict[str, tuple[str, bytes]]:
    type_, data = good
    return {
        "truncated": (type_, data[: len(data) // 2]),
        "garbage": ("msgpack", b"\xc1\xff\x00garbage"),
        "empty msgpack": ("msgpack", b""),
        "unknown type": ("no-such-type", data),
    }


class Storage:
    """Direct access to one backend's stored bytes of a thread."""

    def __init__(self, backend: str, url: str, area: str) -> None:
        self.backend, self.url, self.area = backend, url, area

    def set_blob(self, thread_id: str, channel: str, typed: tuple[str, bytes]) -> None:
        if self.backend == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                n = conn.execute(
                    sql.SQL(
                        "UPDATE {}.checkpoint_blobs SET type = %s, blob = %s "
                        "WHERE thread_id = %s AND channel = %s"
                    ).format(sql.Identifier(self.area)),
                    (*typed, thread_id, channel),
                ).rowcount
            assert n == 1
        else:
            self._redis_set(
                thread_id,
                "b",
                lambda f, v: f.split(b"\x00")[1] == channel.encode(),
                lambda v: typed[0].encode() + b"\x00" + typed[1],
            )

    def set_write(self, thread_id: str, channel: str, typed: tuple[str, bytes]) -> None:
        if self.backend == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                n = conn.execute(
                    sql.SQL(
                        "UPDATE {}.checkpoint_writes SET type = %s, blob = %s "
                        "WHERE thread_id = %s AND channel = %s"
                    ).format(sql.Identifier(self.area)),
                    (*typed, thread_id, channel),
                ).rowcount
            assert n == 1
        else:

            def rewrite(v: bytes) -> bytes:
                head = b"\x00".join(v.split(b"\x00", 4)[:4]) + b"\x00"
                return head + typed[0].encode() + b"\x00" + typed[1]

            self._redis_set(
                thread_id, "w", lambda f, v: v.split(b"\x00")[2] == channel.encode(), rewrite
            )

    def _redis_set(
        self,
        thread_id: str,
        suffix: str,
        match: Callable[[bytes, bytes], bool],
        new: Callable[[bytes], bytes],
    ) -> None:
        from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES, Keys

        key = Keys(self.area).thread(thread_id)[THREAD_SUFFIXES.index(suffix)]
        client = redis.Redis.from_url(self.url)
        try:
            hits = [(f, v) for f, v in client.hgetall(key).items() if match(f, v)]
            assert len(hits) == 1, hits
            client.hset(key, hits[0][0], new(hits[0][1]))
        finally:
            client.close()


@pytest.fixture(params=BACKENDS)
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Storage, Any]]:
    url, area = d.storage_area(request.param, request)
    with d.open_saver(request.param, url, area) as saver:
        stored = {}
        for thread_id in ("victim", "bystander"):
            cp = empty_checkpoint()
            cp["channel_values"] = {"payload": {"items": [1, 2, 3]}}
            cp["channel_versions"] = {"payload": saver.get_next_version(None, None)}
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": NS}}
            stored[thread_id] = saver.put(config, cp, {"step": 1}, cp["channel_versions"])
            saver.put_writes(stored[thread_id], [("note", {"text": "hi"})], "task-1")
        yield saver, Storage(request.param, url, area), stored


def assert_refused(saver: Any, stored: Any, channel: str, sentinel: Path) -> None:
    with pytest.raises(CorruptCheckpointError) as info:
        saver.get_tuple(stored["victim"])
    err = info.value
    assert (err.thread_id, err.checkpoint_ns, err.channel) == ("victim", NS, channel)
    assert err.checkpoint_id == stored["victim"]["configurable"]["checkpoint_id"]
    assert err.reason
    assert not sentinel.exists(), "a stored payload ran code"
    # other threads are unaffected
    tup = saver.get_tuple(stored["bystander"])
    assert tup.checkpoint["channel_values"]["payload"] == {"items": [1, 2, 3]}
    assert tup.pending_writes == [("task-1", "note", {"text": "hi"})]


def test_hostile_channel_values_are_refused_and_run_nothing(
    setup: tuple[Any, Storage, Any], tmp_path: Path
) -> None:
    saver, storage, stored = setup
    sentinel = tmp_path / "pwned"
    for name, typed in hostile(sentinel).items():
        storage.set_blob("victim", "payload", typed)
        try:
            assert_refused(saver, stored, "payload", sentinel)
        except BaseException as exc:
            raise AssertionError(f"payload {name!r}") from exc
    assert not os.path.exists(sentinel)


def test_hostile_pending_writes_are_refused_and_run_nothing(
    setup: tuple[Any, Storage, Any], tmp_path: Path
) -> None:
    saver, storage, stored = setup
    sentinel = tmp_path / "pwned"
    for name, typed in hostile(sentinel).items():
        storage.set_write("victim", "note", typed)
        try:
            assert_refused(saver, stored, "note", sentinel)
        except BaseException as exc:
            raise AssertionError(f"payload {name!r}") from exc


def test_corrupt_or_truncated_blobs_name_thread_namespace_checkpoint_and_channel(
    setup: tuple[Any, Storage, Any], tmp_path: Path
) -> None:
    saver, storage, stored = setup
    good = saver.serde.dumps_typed({"items": list(range(50))})
    for name, typed in corrupt(good).items():
        for kind in ("blob", "write"):
            if kind == "blob":
                storage.set_blob("victim", "payload", typed)
                channel = "payload"
            else:
                storage.set_blob("victim", "payload", good)
                storage.set_write("victim", "note", typed)
                channel = "note"
            try:
                assert_refused(saver, stored, channel, tmp_path / "never")
            except BaseException as exc:
                raise AssertionError(f"{name} {kind}") from exc
        storage.set_write("victim", "note", good)
