"""Schemas laid out by ``PostgresSaver.setup()`` once, emptied and handed to the next test.

Applying every layout step to a fresh schema takes about half a second, and
most tests that run on Postgres want nothing but a set-up schema of their own.
A test that asks for one gets a schema no other test holds: a fresh one set up
the first time, else one an earlier test had, emptied of every row (the
layout bookkeeping excepted) and its identity sequences restarted. A schema
whose structure a test changed (a table, trigger, function or grant added,
dropped or altered, a constraint added: its catalog fingerprint differs from
what ``setup()`` left) is dropped, never handed on; so is any schema if emptying it fails (it
needs a superuser to pass the audit log's triggers). Tests that need a schema
never set up, a partitioned one, or to set up with options keep ``pg_schema``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from langgraph_durable.checkpointers.postgres import PostgresSaver

# what setup() records about itself: kept when a schema is emptied
_BOOKKEEPING = ("langgraph_durable_layout", "checkpoint_migrations")

# the schema's structure: relations, columns, triggers, functions, grants,
# constraints, indexes, defaults and policies
_RELATIONS = "SELECT array_agg(oid) FROM pg_class WHERE relnamespace = %(s)s::regnamespace"
_FINGERPRINT = """
SELECT md5(concat_ws('|',
  (SELECT nspacl::text FROM pg_namespace WHERE oid = %(s)s::regnamespace),
  (SELECT string_agg(concat_ws(':', relname, relkind, relacl::text, relrowsecurity), ','
                     ORDER BY relname)
     FROM pg_class WHERE oid = ANY(%(rels)s::oid[])),
  (SELECT string_agg(concat_ws(':', attrelid::regclass::text, attname, atttypid, attnotnull),
                     ',' ORDER BY attrelid::regclass::text, attnum)
     FROM pg_attribute
    WHERE attrelid = ANY(%(rels)s::oid[]) AND attnum > 0 AND NOT attisdropped),
  (SELECT string_agg(concat_ws(':', tgname, tgenabled), ',' ORDER BY tgname)
     FROM pg_trigger WHERE tgrelid = ANY(%(rels)s::oid[])),
  (SELECT string_agg(concat_ws(':', proname, proacl::text, prosecdef, md5(prosrc)), ','
                     ORDER BY proname)
     FROM pg_proc WHERE pronamespace = %(s)s::regnamespace),
  (SELECT string_agg(concat_ws(':', conrelid::regclass::text, conname,
                               pg_get_constraintdef(oid)), ','
                     ORDER BY conrelid::regclass::text, conname)
     FROM pg_constraint WHERE conrelid = ANY(%(rels)s::oid[])),
  (SELECT string_agg(pg_get_indexdef(indexrelid), ',' ORDER BY indexrelid::regclass::text)
     FROM pg_index WHERE indrelid = ANY(%(rels)s::oid[])),
  (SELECT string_agg(concat_ws(':', adrelid::regclass::text, adnum,
                               pg_get_expr(adbin, adrelid)), ','
                     ORDER BY adrelid::regclass::text, adnum)
     FROM pg_attrdef WHERE adrelid = ANY(%(rels)s::oid[])),
  (SELECT string_agg(polname, ',' ORDER BY polname)
     FROM pg_policy WHERE polrelid = ANY(%(rels)s::oid[]))
))"""

_TABLES = """
SELECT tablename FROM pg_tables WHERE schemaname = %(s)s AND NOT tablename = ANY(%(keep)s)
ORDER BY tablename"""
_SEQUENCES = "SELECT sequencename FROM pg_sequences WHERE schemaname = %(s)s"


def _fingerprint(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> str:
    rels = conn.execute(_RELATIONS, {"s": schema}).fetchone()
    assert rels is not None
    row = conn.execute(_FINGERPRINT, {"s": schema, "rels": rels[0] or []}).fetchone()
    assert row is not None
    return str(row[0])


def _drop(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@dataclass
class SetUpSchemas:
    """The session's set-up schemas on one server: the idle ones, and the fingerprint of each."""

    url: str
    idle: list[str] = field(default_factory=list)
    pristine: dict[str, str] = field(default_factory=dict)

    def take(self) -> str:
        """A set-up, empty schema that no test holds."""
        if self.idle:
            return self.idle.pop()
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            with PostgresSaver.from_conn_string(self.url, schema=schema, pool_size=None) as saver:
                saver.setup()
            with psycopg.connect(self.url, autocommit=True) as conn:
                self.pristine[schema] = _fingerprint(conn, schema)
        except BaseException:
            _drop(self.url, schema)
            raise
        return schema

    def give_back(self, schema: str) -> None:
        """Empty ``schema`` for the next test, or drop it if it is not as setup() left it."""
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                if _fingerprint(conn, schema) != self.pristine.get(schema):
                    raise LookupError(f"{schema} was changed by its test")
                with conn.transaction():
                    # the audit log's triggers refuse deletes: not fired for a replica
                    conn.execute("SET LOCAL session_replication_role = replica")
                    params = {"s": schema, "keep": list(_BOOKKEEPING)}
                    for (table,) in conn.execute(_TABLES, params).fetchall():
                        conn.execute(
                            sql.SQL("DELETE FROM {}").format(sql.Identifier(schema, table))
                        )
                    for (sequence,) in conn.execute(_SEQUENCES, {"s": schema}).fetchall():
                        conn.execute(
                            sql.SQL("ALTER SEQUENCE {} RESTART").format(
                                sql.Identifier(schema, sequence)
                            )
                        )
        except (psycopg.Error, LookupError):
            self.pristine.pop(schema, None)
            _drop(self.url, schema)
            return
        self.idle.append(schema)

    def close(self) -> None:
        """Drop every schema of the session."""
        for schema in self.idle:
            _drop(self.url, schema)
        self.idle.clear()
