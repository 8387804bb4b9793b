"""A damaged byte in a stored delta row: a cold read raises, naming it, or reads the value exactly.

The chain's checksum covers the items of a rebuilt list, not its container
header (kept in the row's meta); a flipped header byte read back a prefix of
the message list, or None, without a word. Now the decode checks the value
ends where its bytes do, and every other damage raises ``CorruptCheckpointError``
(not a bare ``TypeError``) naming the thread, checkpoint and channel.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, TypedDict

import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg import sql

from langgraph_durable.checkpointers import CorruptCheckpointError
from langgraph_durable.checkpointers.postgres import PostgresSaver


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _reply(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage("a" * 200, id=str(uuid.uuid4()))]}


def test_each_damaged_meta_byte_is_refused_or_read_exactly(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    config: Any = {"configurable": {"thread_id": "t1"}}
    with PostgresSaver.from_conn_string(url, schema=schema) as saver:
        saver.setup()
        builder = StateGraph(State)
        builder.add_node("reply", _reply)
        builder.add_edge(START, "reply")
        builder.add_edge("reply", END)
        graph = builder.compile(checkpointer=saver)
        for i in range(12):
            graph.invoke({"messages": [HumanMessage("h" * 200, id=f"h{i}")]}, config)
        want = saver.get_tuple(config).checkpoint["channel_values"]["messages"]
    assert len(want) == 24
    table = sql.Identifier(schema, "checkpoint_blobs")
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            sql.SQL(
                "SELECT version, blob FROM {} WHERE channel = 'messages' AND type = 'delta'"
                " ORDER BY version DESC LIMIT 1"
            ).format(table)
        ).fetchone()
        assert row is not None
        version, blob = row
        outcomes = {"refused": 0, "exact": 0}
        for pos in range(min(len(blob), 40)):
            for flip in (0x01, 0x04, 0x80):
                bad = bytearray(blob)
                bad[pos] ^= flip
                conn.execute(
                    sql.SQL(
                        "UPDATE {} SET blob = %s WHERE channel = 'messages' AND version = %s"
                    ).format(table),
                    (bytes(bad), version),
                )
                with PostgresSaver.from_conn_string(url, schema=schema) as cold:
                    try:
                        got = cold.get_tuple(config)
                    except CorruptCheckpointError as exc:
                        assert (exc.thread_id, exc.channel) == ("t1", "messages")
                        outcomes["refused"] += 1
                    else:
                        assert got is not None
                        assert got.checkpoint["channel_values"]["messages"] == want, (pos, flip)
                        outcomes["exact"] += 1
        conn.execute(
            sql.SQL("UPDATE {} SET blob = %s WHERE channel = 'messages' AND version = %s").format(
                table
            ),
            (blob, version),
        )
    assert outcomes["refused"] > 0
