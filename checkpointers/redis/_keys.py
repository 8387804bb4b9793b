"""Key names of the Redis layout (no I/O).

Every key of one thread carries the same hash tag, ``{t:<escaped thread id>}``,
so a thread's keys live in one Redis Cluster slot and one Lua script may touch
them all. Thread ids are escaped so no id can end the tag early or collide
with another id: ``%`` ``{`` ``}`` become ``%25`` ``%7B`` ``%7D``. The ``t:``
inside the tag keeps it non-empty for the empty thread id (an empty tag would
hash the whole key and scatter the thread over slots).

Per thread (suffix after ``<prefix>:{t:...}:``), a fixed set of keys whatever
the number of namespaces, so a TTL refresh costs the same on every write:

=====  ==========  ==========================================================
``z``  sorted set  ``ns\\0cid``: checkpoints of one namespace in id order
``za`` sorted set  ``cid\\0ns``: checkpoints of the subgraph namespaces in id
                   order (layout 6; the root's are ``z``'s ``\\0cid`` range)
``c``  hash        ``ns\\0cid`` -> checkpoint record (Python-only msgpack)
``r``  hash        ``ns\\0cid`` -> refs the Lua scripts read (parent, blob
                   fields, index prefixes, populated and delta channels,
                   and since layout 6 the pending writes' ``task\\0idx``)
``b``  hash        ``ns\\0channel\\0version`` -> channel value
``x``  sorted set  ``key\\0value\\0cid\\0ns``: metadata index (JSON key/value;
                   not ``step``, checked on refs, nor ``schema_version``)
``w``  hash        ``ns\\0cid\\0task\\0idx`` -> pending write
``wi`` sorted set  members of ``w`` not (yet) listed in their checkpoint's refs:
                   all of them before layout 6, since then the writes
                   stored before their checkpoint (the put moves them)
``wt`` hash        ``ns\\0cid\\0task\\0interrupt`` -> indexed wait (deadline convention)
``wl`` sorted set  the members of ``wt`` (lex), to range by namespace/checkpoint
``wd`` sorted set  the members of ``wt`` with a deadline, scored by it (ms)
``dc`` hash        decision key -> decision JSON (approvals, compare-and-set)
``cl`` hash        interrupt id -> ``owner\0taken_ms\0done`` (sweeper claims)
``act`` hash       idempotency key -> activity result
=====  ==========  ==========================================================

Audit keys, in the thread's slot but outside that set (they outlive the
thread, see :meth:`Keys.audit`): ``au`` stream of audit entries, ``aud`` set of
the dedupe keys seen, ``auh`` hash of the audit chain's head (layout 7);
``ob`` hash of the notification outbox (event id -> event JSON).

Cross-thread keys (each in its own slot, written best-effort next to the
atomic thread write and reconciled by readers): thread registry shards
``{<prefix>:th:N}`` (sets) with their expiry hints ``{<prefix>:th:N}:exp``
(same slot; sorted sets scoring each thread a saver with a TTL registered by
when its keys may have expired: readers check those threads and drop the
gone ones), due-wait shards ``{<prefix>:ws:N}``, notification shards
``{<prefix>:ob:N}`` (due) and ``{<prefix>:obp:N}`` (parked), run index
``{<prefix>:r:<run>}``, schema-version sets ``{<prefix>:v:<version>}``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from langgraph_durable.checkpointers._errors import InvalidConfigError

SEP = "\x00"
THREAD_SUFFIXES = (
    "z",
    "za",
    "c",
    "r",
    "b",
    "x",
    "w",
    "wi",
    "wt",
    "wl",
    "wd",
    "dc",
    "cl",
    "act",
)
"""Order of a thread's keys in every script's KEYS (the Lua side relies on it)."""
SHARDS = 16
"""Fixed number of registry / due-wait shards; changing it is a layout step."""


def escape_tag(value: str) -> str:
    """Escape ``value`` so it can sit inside a hash tag and stay injective."""
    return value.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")


def check_prefix(prefix: str) -> str:
    """Return ``prefix`` if usable, else raise :class:`InvalidConfigError`."""
    if not isinstance(prefix, str) or not prefix:
        raise InvalidConfigError(field="prefix", reason="must be a non-empty string")
    if any(ch in prefix for ch in "{}\x00"):
        # a brace in the prefix would become the hash tag of every key
        raise InvalidConfigError(field="prefix", reason="must not contain '{', '}' or NUL")
    return prefix


def shard_of(thread_id: str) -> int:
    """The registry / due-wait shard a thread belongs to."""
    return zlib.crc32(thread_id.encode("utf-8")) % SHARDS


@dataclass(frozen=True)
class Keys:
    """Key names under one prefix."""

    prefix: str

    def thread(self, thread_id: str) -> list[str]:
        """The thread's keys, in :data:`THREAD_SUFFIXES` order."""
        base = f"{self.prefix}:{{t:{escape_tag(thread_id)}}}:"
        return [base + s for s in THREAD_SUFFIXES]

    def activities(self, thread_id: str) -> str:
        """Hash of the thread's activity results, in the thread's slot.

        One of :meth:`thread`'s keys, so every script's TTL refresh, delete and
        copy covers it with the rest of the thread.
        """
        return self.thread(thread_id)[THREAD_SUFFIXES.index("act")]

    def audit(self, thread_id: str) -> list[str]:
        """The thread's audit stream and its dedupe set, in the thread's slot.

        Not among :meth:`thread`'s keys on purpose: ``delete_thread``, TTL
        expiry and ``copy_thread`` leave the audit trail alone; only the
        retention call (``purge_audit``) deletes it.
        """
        base = f"{self.prefix}:{{t:{escape_tag(thread_id)}}}:"
        return [base + "au", base + "aud"]

    def audit_head(self, thread_id: str) -> str:
        """The hash holding the head of the thread's audit chain (layout step 7), same slot.

        It outlives the stream: a purge leaves it as the base the entries
        appended later chain from, counting what went.
        """
        return f"{self.prefix}:{{t:{escape_tag(thread_id)}}}:auh"

    def layout(self) -> str:
        """The layout version key."""
        return f"{self.prefix}:layout"

    def layout_lock(self) -> str:
        """The lock ``setup()`` holds while it applies layout steps."""
        return f"{self.prefix}:layout:lock"

    def registry(self, shard: int) -> str:
        """Set of thread ids (one shard)."""
        return f"{{{self.prefix}:th:{shard}}}"

    def registry_expiry(self, shard: int) -> str:
        """Sorted set: thread id -> when (ms) its keys may have expired (same slot as the shard)."""
        return f"{{{self.prefix}:th:{shard}}}:exp"

    def registry_generation(self) -> str:
        """Counter that every removal from a registry (thread, run, version) bumps first.

        A saver skips registrations it sent recently; a put reads the counter
        and, when it moved, registers again what it skipped (another saver or
        process may have removed it meanwhile).
        """
        return f"{self.prefix}:regen"

    def registries(self) -> list[str]:
        """Every registry shard."""
        return [self.registry(i) for i in range(SHARDS)]

    def wait_shard(self, shard: int) -> str:
        """Sorted set of ``thread\\0field`` scored by deadline (ms, +inf if none)."""
        return f"{{{self.prefix}:ws:{shard}}}"

    def wait_shards(self) -> list[str]:
        """Every due-wait shard."""
        return [self.wait_shard(i) for i in range(SHARDS)]

    def resume_shard(self, shard: int) -> str:
        """Sorted set of ``thread\0interrupt id`` with a recorded decision, scored by its time.

        A sweeper finishes the resumes their deciders did not (crash): entries a
        lease old are claimed; entries whose wait is gone are dropped.
        """
        return f"{{{self.prefix}:wr:{shard}}}"

    def resume_shards(self) -> list[str]:
        """Every resume-pending shard."""
        return [self.resume_shard(i) for i in range(SHARDS)]

    def outbox(self, thread_id: str) -> str:
        """Hash of the thread's notification events (event id -> JSON), in the thread's slot.

        Not among :meth:`thread`'s keys: like the audit trail, an event outlives
        the thread it is about (a decision announced after the thread is deleted).
        """
        return f"{self.prefix}:{{t:{escape_tag(thread_id)}}}:ob"

    def outbox_shard(self, shard: int) -> str:
        """Sorted set of ``thread\0event id`` scored by when the event is due (ms).

        Added before the script that may store the event (so an event is never
        missing from it); an entry whose event is delivered, parked or was
        never stored is dropped by the claim that finds it so.
        """
        return f"{{{self.prefix}:ob:{shard}}}"

    def outbox_parked(self, shard: int) -> str:
        """Sorted set of ``thread\0event id`` of parked events, scored by when (ms)."""
        return f"{{{self.prefix}:obp:{shard}}}"

    def outbox_delivered(self, shard: int) -> str:
        """Sorted set of ``thread\\0event id`` of delivered events, scored by when (ms).

        Written after the script that marks an event delivered (a purge reads it).
        """
        return f"{{{self.prefix}:obd:{shard}}}"

    def run(self, run_id: str) -> str:
        """Set of thread ids that hold checkpoints of ``run_id``."""
        return f"{{{self.prefix}:r:{escape_tag(run_id)}}}"

    def version(self, schema_version: int) -> str:
        """Set of thread ids holding checkpoints written at ``schema_version``."""
        return f"{{{self.prefix}:v:{int(schema_version)}}}"
