"""get_tuple does not fetch the chain of a version the saver holds whole (issue 12).

The saver tells the statement which versions it just wrote or read; their
chains (and the writes those refer to) are not fetched, only the version's own
row, and the saver takes its own bytes when that stored delta rebuilds exactly
them (header, length, CRC). When another writer stored other bytes at that
version, the read is made again with the chain and returns what is stored.
"""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint

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
        row = conn.execute(saver._q.get_latest, params).fetchone()
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
        assert [(ch, link.version) for ch, link in saver._chains.links("t", "")] == [
            ("items", "0012")
        ]
        assert _latest_items(saver) == items
    # a fresh saver (nothing held) reads the chain and gets the same value
    with PostgresSaver.from_conn_string(url, schema=schema) as fresh:
        assert fresh._chains.links("t", "") == []
        assert _latest_items(fresh) == items
        # and then holds it: the next read skips the chain and still reads exactly
        assert [link.version for _, link in fresh._chains.links("t", "")] == ["0012"]
        assert _latest_items(fresh) == items


def test_other_bytes_stored_at_a_held_version_win(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    with (
        PostgresSaver.from_conn_string(url, schema=schema) as a,
        PostgresSaver.from_conn_string(url, schema=schema) as b,
    ):
        a.setup()
        parent = None
        base: list[Any] = []
        for n in range(1, 6):
            base = [_item(i) for i in range(n * 3)]
            parent = _put(a, parent, base, f"{n:04}")
        assert _latest_items(b) == base  # b holds 0005 now
        stored = [*base, _item(99, "a")]
        mine = [*base, _item(99, "b")]  # same length and header, other bytes
        _put(a, parent, stored, "0006")
        b_id = _put(b, parent, mine, "0006")  # the row exists: a's bytes are kept
        assert [link.version for _, link in b._chains.links("t", "")] == ["0006"]
        got = b.get_tuple(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": b_id}}
        )
        assert got is not None and got.checkpoint["channel_values"]["items"] == stored
        assert _latest_items(b) == stored
    with PostgresSaver.from_conn_string(url, schema=schema) as fresh:
        assert _latest_items(fresh) == stored


async def test_the_async_saver_also_lets_the_store_win(pg_schema: tuple[str, str]) -> None:
    from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver

    url, schema = pg_schema
    conf: dict[str, Any] = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with (
        AsyncPostgresSaver.from_conn_string(url, schema=schema) as a,
        AsyncPostgresSaver.from_conn_string(url, schema=schema) as b,
    ):
        await a.setup()
        parent: dict[str, Any] = conf
        items: list[Any] = []
        for n in range(1, 7):
            # 0006: one item more, "a" in a's row, "b" in b's (same length and header)
            items = [*items, _item(99, "a")] if n == 6 else [_item(i) for i in range(n * 3)]
            cp = empty_checkpoint()
            cp["channel_values"] = {"items": items}
            cp["channel_versions"] = {"items": f"{n:04}"}
            if n == 6:
                mine = [*items[:-1], _item(99, "b")]
                b_cp = {**cp, "id": cp["id"] + "b", "channel_values": {"items": mine}}
                got = await b.aget_tuple(conf)  # b holds 0005
                assert got is not None and len(got.checkpoint["channel_values"]["items"]) == 15
                await a.aput(parent, cp, {"step": n}, {"items": f"{n:04}"})
                b_conf = await b.aput(parent, b_cp, {"step": n}, {"items": f"{n:04}"})
            else:
                parent = await a.aput(parent, cp, {"step": n}, {"items": f"{n:04}"})
        assert [link.version for _, link in b._chains.links("t", "")] == ["0006"]
        got = await b.aget_tuple(b_conf)
        assert got is not None and got.checkpoint["channel_values"]["items"] == items
