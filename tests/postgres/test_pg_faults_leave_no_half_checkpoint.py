"""Faults: a connection killed mid-put leaves nothing half-written and the pool
recovers; an undeserializable blob is reported precisely and stays local."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import sql
from psycopg_pool import ConnectionPool

from langgraph_durable.checkpointers import CorruptCheckpointError, StorageUnavailableError
from langgraph_durable.checkpointers.postgres import AsyncPostgresSaver, PostgresSaver


def _checkpoint(saver: PostgresSaver, value: object) -> tuple[dict, dict]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"data": value}
    cp["channel_versions"] = {"data": saver.get_next_version(None, None)}
    return cp, cp["channel_versions"]


def test_killed_connection_mid_put_leaves_nothing_and_pool_recovers(pg_schema) -> None:
    url, schema = pg_schema
    tid = f"t-{uuid.uuid4()}"
    config = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
    with ConnectionPool(url, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        saver = PostgresSaver(pool, schema=schema)
        saver.setup()
        cp, versions = _checkpoint(saver, ["payload"] * 100)
        # another transaction holds the row the put will insert, so the put
        # blocks inside its single statement (blobs already inserted by then)
        blocker = psycopg.connect(url)
        blocker.execute(
            sql.SQL(
                "INSERT INTO {}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint)"
                " VALUES (%s, '', %s, '{{}}')"
            ).format(sql.Identifier(schema)),
            (tid, cp["id"]),
        )
        errors: list[BaseException] = []

        def put() -> None:
            try:
                saver.put(config, cp, {"step": 1}, versions)
            except BaseException as exc:
                errors.append(exc)

        worker = threading.Thread(target=put)
        worker.start()
        with psycopg.connect(url, autocommit=True) as admin:
            for _ in range(100):
                row = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE %s",
                    ("%durable_waits%",),
                ).fetchone()
                if row:
                    break
                time.sleep(0.05)
            assert row, "the put never blocked"
            admin.execute("SELECT pg_terminate_backend(%s)", (row[0],))
        worker.join(10)
        blocker.rollback()
        blocker.close()
        assert len(errors) == 1 and isinstance(errors[0], StorageUnavailableError)
        assert errors[0].operation == "put"
        with psycopg.connect(url) as check:
            for table in ("checkpoints", "checkpoint_blobs"):
                n = check.execute(
                    sql.SQL("SELECT count(*) FROM {}.{} WHERE thread_id = %s").format(
                        sql.Identifier(schema), sql.Identifier(table)
                    ),
                    (tid,),
                ).fetchone()[0]
                assert n == 0, table
        assert saver.get_tuple(config) is None
        # the pool replaced the dead connection: the retry succeeds
        stored = saver.put(config, cp, {"step": 1}, versions)
        assert saver.get_tuple(stored).checkpoint["channel_values"]["data"] == ["payload"] * 100


async def test_undeserializable_blob_names_its_place_and_stays_local(pg_schema) -> None:
    url, schema = pg_schema
    async with AsyncPostgresSaver.from_conn_string(url, schema=schema) as saver:
        await saver.setup()
        bad, good = f"bad-{uuid.uuid4()}", f"good-{uuid.uuid4()}"
        stored = {}
        for tid in (bad, good):
            cp, versions = _checkpoint(saver, {"k": [1, 2, 3]})
            stored[tid] = await saver.aput(
                {"configurable": {"thread_id": tid, "checkpoint_ns": "ns1"}}, cp, {}, versions
            )
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(
                sql.SQL("UPDATE {}.checkpoint_blobs SET blob = %s WHERE thread_id = %s").format(
                    sql.Identifier(schema)
                ),
                (b"\xc1\xc1not-msgpack", bad),
            )
        with pytest.raises(CorruptCheckpointError) as err:
            await saver.aget_tuple(stored[bad])
        e = err.value
        assert (e.thread_id, e.checkpoint_ns, e.channel) == (bad, "ns1", "data")
        assert e.checkpoint_id == stored[bad]["configurable"]["checkpoint_id"]
        assert bad in str(e) and "data" in str(e)
        with pytest.raises(CorruptCheckpointError):
            [t async for t in saver.alist({"configurable": {"thread_id": bad}})]
        ok = await saver.aget_tuple(stored[good])
        assert ok.checkpoint["channel_values"]["data"] == {"k": [1, 2, 3]}
