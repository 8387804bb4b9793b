"""get_tuple does not fetch the chain of a version the saver holds whole.

The saver tells the read (the Postgres ``get_latest`` statement, the Redis
``get`` script) which versions it just wrote or read; their chains (and the
writes those refer to) are not sent, and the saver takes its own bytes when
the stored delta rebuilds exactly them (header, length, CRC). A fresh saver
holds nothing, reads the chain, and then holds the version too. Both
backends, through their sync savers; how each one's read is asked is in its
probe below. That what is stored wins when another writer stored other bytes
at that version is ``test_the_store_wins_over_what_a_saver_holds.py``.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._keys import Keys
from tests._backends import BACKENDS, POSTGRES, area_fixture
from tests._durability import open_saver
from tests._growing import put_items

HEAD = "0012"


def _item(i: int) -> dict[str, Any]:
    return {"id": i, "text": "x" * 120}


class _PostgresProbe:
    def __init__(self, url: str, schema: str) -> None:
        self.url, self.schema = url, schema

    def head_is_a_delta(self) -> bool:
        query = sql.SQL("SELECT type FROM {} WHERE version = %s").format(
            sql.Identifier(self.schema, "checkpoint_blobs")
        )
        with psycopg.connect(self.url) as conn:
            return conn.execute(query, (HEAD,)).fetchone() == ("delta",)

    def sent(self, saver: Any, held: dict[str, str]) -> list[str]:
        """The value versions the get_latest statement sends, told ``held``."""
        params = {
            "thread_id": "t",
            "checkpoint_ns": "",
            "held_channels": list(held),
            "held_versions": list(held.values()),
        }
        with psycopg.connect(self.url) as conn:
            row = conn.execute(saver.core.queries.get_latest, params).fetchone()
        assert row is not None
        return sorted(row[19] or [])

    def check_chain_is_sent_unless_held(self, saver: Any) -> None:
        assert len(self.sent(saver, {})) > 2
        # told it holds the head: only the head's own row comes
        assert self.sent(saver, {"items": HEAD}) == [HEAD]

    def held(self, saver: Any) -> list[tuple[str, str]]:
        return [(ch, link.version) for ch, link in saver.core._chains.links("t", "")]


class _RedisProbe:
    def __init__(self, url: str, prefix: str) -> None:
        self.url, self.prefix = url, prefix
        self.keys = Keys(prefix).thread("t")

    def head_is_a_delta(self) -> bool:
        with redis.Redis.from_url(self.url) as raw:
            head = raw.hget(self.keys[4], f"\x00items\x00{HEAD}".encode())
        return head is not None and head.startswith(b"delta2\x00")

    def sent(self, *known: str) -> list[Any]:
        """The chain the get script sends, told the fields the client holds."""
        with redis.Redis.from_url(self.url) as raw:
            sha = raw.script_load(S.GET.source)
            entry = raw.evalsha(sha, len(self.keys), *self.keys, "", "", 0, 0, 0, *known)
        return list(entry[6])

    def check_chain_is_sent_unless_held(self, saver: Any) -> None:
        assert len(self.sent()) > 2
        assert self.sent(f"\x00items\x00{HEAD}") == []

    def held(self, saver: Any) -> list[tuple[str, str]]:
        fields = saver.core.codec.known_fields("t", "")
        return [tuple(f.split("\x00")[1:]) for f in fields]  # "\0channel\0version"


def _latest_items(saver: Any) -> Any:
    got = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    assert got is not None
    return got.checkpoint["channel_values"]["items"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_held_version_is_read_without_its_chain(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url, area = request.getfixturevalue(area_fixture(backend))
    probe = _PostgresProbe(url, area) if backend == POSTGRES else _RedisProbe(url, area)
    with open_saver(backend, url, area) as saver:
        parent = None
        items: list[Any] = []
        for n in range(1, 13):
            items = [_item(i) for i in range(n * 3)]
            parent = put_items(saver, parent, items, f"{n:04}")
        assert probe.head_is_a_delta()
        probe.check_chain_is_sent_unless_held(saver)
        assert probe.held(saver) == [("items", HEAD)]
        assert _latest_items(saver) == items
    # a fresh saver (nothing held) reads the chain and gets the same value
    with open_saver(backend, url, area) as fresh:
        assert probe.held(fresh) == []
        assert _latest_items(fresh) == items
        # and then holds it: the next read skips the chain and still reads exactly
        assert probe.held(fresh) == [("items", HEAD)]
        assert _latest_items(fresh) == items
