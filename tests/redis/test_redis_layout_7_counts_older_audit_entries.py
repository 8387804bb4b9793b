"""Layout step 7 on a prefix whose streams an older release wrote: older entries are counted.

Before step 7 an audit entry was a plain ``XADD`` of its JSON. Stream entries
cannot be rewritten in place, so the step leaves them as they are: the
thread's next append creates its chain head, which counts them, and the chain
follows. ``verify_audit`` then checks their number (one removed is found), not
their content; entries appended since are linked and fully checked.
"""

from __future__ import annotations

import json

import redis

from langgraph_durable.checkpointers import audit_entry
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.checkpointers.redis._decision_ops import entry_json
from langgraph_durable.checkpointers.redis._keys import Keys
from langgraph_durable.interrupts import audit_log, purge_audit, verify_audit
from langgraph_durable.migrations.redis import latest_version
from tests._approval_graphs import T0


def _entry(actor: str, outcome: str) -> dict[str, object]:
    return audit_entry(at=T0, thread_id="t1", actor=actor, action="approve", outcome=outcome)


def _at_layout_6(raw: redis.Redis, prefix: str) -> None:
    keys = Keys(prefix)
    raw.set(keys.layout(), 6)
    for actor, outcome in (("eve", "not_authorized"), ("olga", "recorded")):
        raw.xadd(keys.audit("t1")[0], {"e": entry_json(_entry(actor, outcome))})


def test_older_entries_are_counted_and_new_ones_chained(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    _at_layout_6(raw, prefix)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        assert int(raw.get(Keys(prefix).layout())) == latest_version()
        before = verify_audit(saver, "t1")
        assert before.intact and before.entries == 2 and before.legacy == 2
        saver.audit.append_audit(entries=[_entry("mia", "recorded")])
        after = verify_audit(saver, "t1")
        assert after.intact and after.entries == 3 and after.legacy == 2
        assert after.head_position == 3
        assert "2 older entries counted, not hashed" in after.summary()
        assert [e.actor for e in audit_log(saver, thread_id="t1")] == ["eve", "olga", "mia"]


def test_a_removed_older_entry_is_found(redis_prefix: tuple[str, str], raw: redis.Redis) -> None:
    url, prefix = redis_prefix
    _at_layout_6(raw, prefix)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        saver.audit.append_audit(entries=[_entry("mia", "recorded")])
        stream = Keys(prefix).audit("t1")[0]
        first_id = raw.xrange(stream)[0][0]
        raw.xdel(stream, first_id)
        broken = verify_audit(saver, "t1").broken
        assert broken is not None and broken.problem == "missing"
        assert "1 of the 2 entries from before the chain" in broken.detail


def test_purge_leaves_a_base_the_next_entries_verify_from(
    redis_prefix: tuple[str, str], raw: redis.Redis
) -> None:
    url, prefix = redis_prefix
    _at_layout_6(raw, prefix)
    with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
        saver.setup()
        saver.audit.append_audit(entries=[_entry("mia", "recorded")])
        assert purge_audit(saver, thread_id="t1") == 3
        gone = verify_audit(saver, "t1")
        assert gone.intact and gone.entries == 0 and gone.legacy == 0 and gone.purged == 3
        saver.audit.append_audit(entries=[_entry("noor", "recorded")])
        later = verify_audit(saver, "t1")
        assert later.intact and later.entries == 1 and later.head_position == 4
        head = raw.hgetall(Keys(prefix).audit_head("t1"))
        assert json.loads(raw.xrange(Keys(prefix).audit("t1")[0])[0][1][b"e"])["actor"] == "noor"
        assert int(head[b"bn"]) == 3 and int(head[b"pn"]) == 3
