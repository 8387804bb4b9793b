"""get_tuple does not fetch the chain of a version the saver holds whole.

The saver tells the statement which versions it just wrote or read; their
chains (and the writes those refer to) are not fetched, only the version's own
row, and the saver takes its own bytes when that stored delta rebuilds exactly
them (header, length, CRC). That what is stored wins when another writer
stored other bytes at that version is a contract test
(``tests/contract/test_the_store_wins_over_what_a_saver_holds.py``).
"""

from __future__ import annotations

from typing import Any

import psycopg

from langgraph_durable.checkpointers.postgres import PostgresSaver
from tests._growing import put_items


def _item(i: int, fill: str = "x") -> dict[str, Any]:
    return {"id": i, "text": fill * 120}


_put = put_items


def _fetched_versions(url: str, saver: PostgresSaver, held: dict[str, str]) -> list[str]:
    """The value versions the get_latest statement sends, told ``held``."""
    params = {
        "thread_id": "t",
        "checkpoint_ns": "",
        "held_channels": list(held),
        "held_versions": list(held.values()),
    }
    with psycopg.connect(url) as conn:
        row = conn.execute(saver._core._q.get_latest, params).fetchone()
    assert row is not None
    return sorted(row[19] or [])


def _latest_items(saver: PostgresSaver) -> Any:
    got = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    assert got is not None
    return got.checkpoint["channel_values"]["items"]


def test_a_held_version_is_read_without_its_chain(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        parent = None
        items: list[Any] = []
        for n in range(1, 13):
            items = [_item(i) for i in range(n * 3)]
            parent = _put(saver, parent, items, f"{n:04}")
        with psycopg.connect(url) as conn:
            head_type = conn.execute(
                f'SELECT type FROM "{schema}".checkpoint_blobs WHERE version = %s', ("0012",)
            ).fetchone()
        assert head_type == ("delta",)
        # the statement sends the chain, unless told the saver holds that version
        assert len(_fetched_versions(url, saver, {})) > 2
        assert _fetched_versions(url, saver, {"items": "0012"}) == ["0012"]
        assert [(ch, link.version) for ch, link in saver._core._chains.links("t", "")] == [
            ("items", "0012")
        ]
        assert _latest_items(saver) == items
    # a fresh saver (nothing held) reads the chain and gets the same value
    with PostgresSaver.from_conn_string(url, schema=schema) as fresh:
        assert fresh._core._chains.links("t", "") == []
        assert _latest_items(fresh) == items
        # and then holds it: the next read skips the chain and still reads exactly
        assert [link.version for _, link in fresh._core._chains.links("t", "")] == ["0012"]
        assert _latest_items(fresh) == items
