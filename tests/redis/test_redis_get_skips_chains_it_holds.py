"""get_tuple does not fetch the chain of a version the saver holds whole.

The saver asks the ``get`` script not to send the chains of the versions it
just wrote or read; it takes its own bytes when the stored delta rebuilds
exactly them (header, length, CRC). That what is stored wins when another
writer stored other bytes at that version is a contract test
(``tests/contract/test_the_store_wins_over_what_a_saver_holds.py``).
"""

from __future__ import annotations

from typing import Any

import redis

from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._keys import Keys
from tests._growing import put_items


def _item(i: int, fill: str = "x") -> dict[str, Any]:
    return {"id": i, "text": fill * 120}


_put = put_items


def _chain(raw: redis.Redis, prefix: str, *known: str) -> list[Any]:
    keys = Keys(prefix).thread("t")
    entry = raw.evalsha(raw.script_load(S.GET.source), len(keys), *keys, "", "", 0, 0, 0, *known)
    return entry[6]


def test_a_held_version_is_read_without_its_chain(
    sync_saver: RedisSaver, redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    parent = None
    items: list[Any] = []
    for n in range(1, 13):
        items = [_item(i) for i in range(n * 3)]
        parent = _put(sync_saver, parent, items, f"{n:04}")
    head = raw.hget(Keys(prefix).thread("t")[4], b"\x00items\x000012")
    assert head is not None and head.startswith(b"delta2\x00")
    # the script sends the chain, unless told the client holds that version
    assert len(_chain(raw, prefix)) > 2
    assert _chain(raw, prefix, "\x00items\x000012") == []
    assert sync_saver._core.codec.known_fields("t", "") and all(
        f == "\x00items\x000012" for f in sync_saver._core.codec.known_fields("t", "")
    )
    got = sync_saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert got is not None and got.checkpoint["channel_values"]["items"] == items
    with RedisSaver.from_conn_string(url, prefix=prefix) as fresh:
        assert fresh._core.codec.known_fields("t", "") == {}
        again = fresh.get_tuple({"configurable": {"thread_id": "t"}})
    assert again is not None and again.checkpoint["channel_values"]["items"] == items
