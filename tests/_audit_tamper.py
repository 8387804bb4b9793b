"""Edits of a stored audit trail made past the library, as an attacker would make them.

On Postgres they run as the superuser with ``session_replication_role =
replica``, which skips the triggers: what only a superuser (or an owner who
drops the triggers) can do. On Redis they are plain commands on the keys,
which any client without an ACL can send.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import psycopg
from psycopg import sql

from langgraph_durable.checkpointers.redis._audit import seq_of


class PostgresTamper:
    """Edits of one schema's ``durable_audit`` rows, triggers skipped."""

    def __init__(self, url: str, schema: str) -> None:
        self.url = url
        self.table = sql.Identifier(schema, "durable_audit")
        self.heads = sql.Identifier(schema, "durable_audit_heads")
        self.digest = sql.Identifier(schema, "durable_audit_digest")

    def _run(self, query: sql.Composable, params: Any = None) -> None:
        with psycopg.connect(self.url) as conn, conn.transaction():
            conn.execute("SET LOCAL session_replication_role = replica")
            conn.execute(query, params)

    def alter(self, thread_id: str, seq: int) -> None:
        """Change who made the entry, keeping its link."""
        self._run(
            sql.SQL("UPDATE {} SET actor = 'mallory' WHERE seq = %s").format(self.table), [seq]
        )

    def delete(self, thread_id: str, seq: int) -> None:
        """Remove the entry."""
        self._run(sql.SQL("DELETE FROM {} WHERE seq = %s").format(self.table), [seq])

    def rewrite(self, thread_id: str, seq: int) -> None:
        """Replace the entry by one naming someone else, keeping its seq, position and link."""
        self._run(
            sql.SQL(
                "WITH old AS (DELETE FROM {t} WHERE seq = %(seq)s RETURNING *)"
                " INSERT INTO {t} OVERRIDING SYSTEM VALUE"
                " SELECT seq, at, recorded_at, thread_id, checkpoint_ns, approval_id, item,"
                " 'mallory', action, fingerprint, outcome, reason, dedupe_key, pos, link FROM old"
            ).format(t=self.table),
            {"seq": seq},
        )

    def forge(self, thread_id: str, *, linked: bool) -> None:
        """Insert a decision entry; ``linked``: with the next position and a correct link."""
        if not linked:
            self._run(
                sql.SQL(
                    "INSERT INTO {} (at, thread_id, actor, action, outcome)"
                    " VALUES (now(), %s, 'mallory', 'approve', 'recorded')"
                ).format(self.table),
                [thread_id],
            )
            return
        self._run(
            sql.SQL(
                "INSERT INTO {t} (at, recorded_at, thread_id, actor, action, outcome, pos, link)"
                " SELECT now(), now(), h.thread_id, 'mallory', 'approve', 'recorded', h.pos + 1,"
                "   sha256(h.link || {d}(now(), now(), h.thread_id, '', NULL, NULL, 'mallory',"
                "   'approve', NULL, 'recorded', NULL, NULL))"
                " FROM {h} AS h WHERE h.thread_id = %s"
            ).format(t=self.table, h=self.heads, d=self.digest),
            [thread_id],
        )


class RedisTamper:
    """Edits of one thread's audit stream with plain commands."""

    def __init__(self, client: Any, saver: Any) -> None:
        self.client = client
        self.keys = saver.core.keys

    def _ids(self, thread_id: str) -> dict[int, bytes]:
        stream = self.keys.audit(thread_id)[0]
        return {seq_of(i.decode()): i for i, _ in self.client.xrange(stream)}

    def alter(self, thread_id: str, seq: int) -> None:
        """Rebuild the stream (same ids) with the entry's actor changed, its link kept."""
        stream = self.keys.audit(thread_id)[0]
        entries = self.client.xrange(stream)
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(stream)
        for stream_id, fields in entries:
            if seq_of(stream_id.decode()) == seq:
                e = json.loads(fields[b"e"])
                fields = {**fields, b"e": json.dumps({**e, "actor": "mallory"})}
            pipe.xadd(stream, fields, id=stream_id)
        pipe.execute()

    def delete(self, thread_id: str, seq: int) -> None:
        """XDEL the entry."""
        self.client.xdel(self.keys.audit(thread_id)[0], self._ids(thread_id)[seq])

    def forge(self, thread_id: str, *, linked: bool) -> None:
        """XADD a decision entry; ``linked``: with the next position and a correct link."""
        stream = self.keys.audit(thread_id)[0]
        last = json.loads(self.client.xrevrange(stream, count=1)[0][1][b"e"])
        body = json.dumps({**last, "actor": "mallory", "outcome": "recorded"})
        fields: dict[str, Any] = {"e": body}
        if linked:
            head = self.client.hgetall(self.keys.audit_head(thread_id))
            prev = bytes.fromhex(head[b"h"].decode())
            digest = hashlib.sha256(body.encode()).digest()
            fields["n"] = int(head[b"n"]) + 1
            fields["h"] = hashlib.sha256(prev + digest).hexdigest()
        self.client.xadd(stream, fields)
