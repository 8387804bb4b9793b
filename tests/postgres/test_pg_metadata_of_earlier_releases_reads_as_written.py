"""Rows of earlier releases read back without the saver's ``schema_version`` key.

Earlier releases wrote every checkpoint's schema version into its metadata too
(jsonb, and the exact encoding when jsonb could not hold the metadata), over
any value of the caller's. Reads leave that key out where it equals the row's
``schema_version`` column; rows written now hold no key of the saver's, and a
``schema_version`` key of the caller's is stored in the exact encoding with a
mark, so it reads back whatever its value. A row langgraph-checkpoint-postgres
writes keeps a ``schema_version`` key of its own unless it is the integer of
the row's column (0).
"""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver as OfficialSaver
from psycopg.types.json import Jsonb

from langgraph_durable.checkpointers import default_serde
from langgraph_durable.checkpointers.postgres import PostgresSaver, _sql
from langgraph_durable.migrations import StateMigrations

_INSERT = """
INSERT INTO {s}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata,
                             metadata_exact, schema_version)
VALUES (%(thread)s, '', %(id)s, %(checkpoint)s, %(metadata)s, %(exact)s, %(version)s)"""


def _old_row(
    conn: psycopg.Connection[Any], schema: str, thread: str, metadata: dict[str, Any], exact: bool
) -> dict[str, Any]:
    """A checkpoint row as an earlier release wrote it: its version in the metadata too."""
    cp = empty_checkpoint()
    tagged = {**metadata, "schema_version": 1}
    blob = None
    if exact:
        type_, data = default_serde().dumps_typed(tagged)
        blob = type_.encode() + b":" + data
    conn.execute(
        _sql.render(_INSERT, schema),
        {
            "thread": thread,
            "id": cp["id"],
            "checkpoint": Jsonb(cp),
            # a \u0000 is why a row had exact metadata: jsonb kept a lossy copy
            "metadata": Jsonb(
                {k: v.replace("\x00", "") if isinstance(v, str) else v for k, v in tagged.items()}
            ),
            "exact": blob,
            "version": 1,
        },
    )
    return {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cp["id"]}}


def test_rows_of_an_earlier_release_read_back_as_the_caller_wrote_them(
    pg_schema: tuple[str, str],
) -> None:
    url, schema = pg_schema
    with PostgresSaver.from_conn_string(
        url, schema=schema, migrations=StateMigrations(version=1)
    ) as saver:
        saver.setup()
        with psycopg.connect(url, autocommit=True) as conn:
            plain = _old_row(conn, schema, "t-plain", {"source": "loop", "step": 3}, exact=False)
            nul = _old_row(conn, schema, "t-nul", {"source": "loop", "note": "a\x00b"}, exact=True)
        assert saver.get_tuple(plain).metadata == {"source": "loop", "step": 3}
        assert saver.get_tuple(nul).metadata == {"source": "loop", "note": "a\x00b"}
        listed = list(saver.list(None))
        assert sorted(t.metadata.get("step", -1) for t in listed) == [-1, 3]
        assert all("schema_version" not in t.metadata for t in listed)
        assert saver.schema_version(plain) == saver.schema_version(nul) == 1
        # a filter matches the metadata as read
        assert list(saver.list(None, filter={"schema_version": 1})) == []
        assert [t.config for t in saver.list(None, filter={"step": 3})] == [plain]
        # a row written now holds no key of the saver's
        config = {"configurable": {"thread_id": "t-new", "checkpoint_ns": ""}}
        new = saver.put(config, empty_checkpoint(), {"step": 1}, {})
        assert saver.get_tuple(new).metadata == {"step": 1}
        with psycopg.connect(url) as conn:
            stored = conn.execute(
                _sql.render(
                    "SELECT metadata, schema_version FROM {s}.checkpoints "
                    "WHERE thread_id = 't-new'",
                    schema,
                )
            ).fetchone()
        assert stored == ({"step": 1}, 1)
        # the caller's own key, even equal to the column, reads back
        own = {"configurable": {"thread_id": "t-own", "checkpoint_ns": ""}}
        mine = saver.put(own, empty_checkpoint(), {"step": 2, "schema_version": 1}, {})
        assert saver.get_tuple(mine).metadata == {"step": 2, "schema_version": 1}
        assert [t.config for t in saver.list(None, filter={"schema_version": 1})] == [mine]


def test_the_official_savers_rows_keep_a_schema_version_key_of_their_own(
    pg_schema: tuple[str, str],
) -> None:
    url, schema = pg_schema
    config = {"configurable": {"thread_id": "t-official", "checkpoint_ns": ""}}
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        options = f"-c search_path={schema}"
        with psycopg.connect(url, autocommit=True, options=options) as conn:
            official = OfficialSaver(conn)
            stored = official.put(config, empty_checkpoint(), {"step": 1, "schema_version": 7}, {})
            other = {"configurable": {"thread_id": "t-official-2", "checkpoint_ns": ""}}
            text = official.put(other, empty_checkpoint(), {"schema_version": "2024-06"}, {})
        assert saver.get_tuple(stored).metadata == {"step": 1, "schema_version": 7}
        assert saver.get_tuple(text).metadata == {"schema_version": "2024-06"}
