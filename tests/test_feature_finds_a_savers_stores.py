"""``checkpointers.feature`` finds the part of a saver that implements a protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_durable.checkpointers import (
    STORE_ATTRIBUTES,
    AsyncDecisionStore,
    AuditLog,
    DecisionStore,
    LeaseStore,
    Outbox,
    VerifiableAudit,
    WaitClaims,
    WaitIndex,
    feature,
)
from langgraph_durable.checkpointers.postgres import PostgresSaver
from langgraph_durable.checkpointers.redis import RedisSaver
from langgraph_durable.interrupts import approve, pending_approvals
from langgraph_durable.migrations import MigrationsError, StateMigrations, upgrade_all
from tests._approval_graphs import review_graph
from tests._backends import BACKENDS, POSTGRES


class _Decisions:
    """A third-party decision store: the DecisionStore protocol, nothing else."""

    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], dict[str, Any]] = {}

    def record_decision(
        self, *, thread_id: str, key: str, decision: dict[str, Any], audit: Any = None
    ) -> dict[str, Any]:
        return self.stored.setdefault((thread_id, key), decision)

    def get_decisions(self, *, thread_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {k: self.stored[(thread_id, k)] for k in keys if (thread_id, k) in self.stored}

    def count_decisions(self, *, thread_id: str, keys: Sequence[str]) -> int:
        return len(self.get_decisions(thread_id=thread_id, keys=keys))


class _SaverWithDecisions(InMemorySaver, _Decisions):
    """A saver implementing the protocol on itself."""

    def __init__(self) -> None:
        InMemorySaver.__init__(self)
        _Decisions.__init__(self)


class _SaverHoldingDecisions(InMemorySaver):
    """A saver holding the store as an attribute, as the langgraph-durable savers do."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = _Decisions()


def test_a_saver_implementing_the_protocol_is_its_own_store() -> None:
    saver = _SaverWithDecisions()
    assert feature(saver, DecisionStore) is saver
    assert feature(saver, AsyncDecisionStore) is None


def test_a_store_held_as_an_attribute_is_found() -> None:
    saver = _SaverHoldingDecisions()
    assert feature(saver, DecisionStore) is saver.decisions
    assert feature(saver, WaitIndex) is None
    assert "decisions" in STORE_ATTRIBUTES


def test_a_saver_without_the_feature_has_none() -> None:
    assert feature(InMemorySaver(), DecisionStore) is None
    assert feature(InMemorySaver(), Outbox) is None
    assert feature(None, DecisionStore) is None


def test_an_approval_is_recorded_in_a_store_held_as_an_attribute() -> None:
    saver = _SaverHoldingDecisions()
    graph = review_graph(saver)
    graph.invoke({"amount": 5}, _cfg("t"))
    assert [p.thread_id for p in pending_approvals(saver)] == ["t"]
    assert approve(graph, _cfg("t"), by="ops")["approved"] is True
    # the decision went to the saver's store, not to the in-process fallback
    assert [k[0] for k in saver.decisions.stored] == ["t"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_of_our_savers_has_every_store(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == POSTGRES:
        url, schema = request.getfixturevalue("pg_schema")
        opened: Any = PostgresSaver.from_conn_string(url, schema=schema)
    else:
        url, prefix = request.getfixturevalue("redis_prefix")
        opened = RedisSaver.from_conn_string(url, prefix=prefix)
    with opened as saver:
        saver.setup()
        for proto in (
            WaitIndex,
            WaitClaims,
            DecisionStore,
            AuditLog,
            VerifiableAudit,
            LeaseStore,
            Outbox,
        ):
            assert feature(saver, proto) is not None, proto.__name__
        # upgrade_all finds the saver's migration store (nothing to upgrade here)
        assert upgrade_all(saver, StateMigrations(version=1)).upgraded == 0


def test_upgrade_all_refuses_a_saver_without_a_migration_store() -> None:
    with pytest.raises(MigrationsError, match="InMemorySaver does not support upgrade_all"):
        upgrade_all(InMemorySaver(), StateMigrations(version=1))


def _cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}
