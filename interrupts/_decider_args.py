"""The arguments every decision and operator call shares, held once.

``aapprove``, ``areject``, ``aedit``, ``arespond``, ``aextend``, ``areassign``,
``acancel`` and ``aremind`` (and their sync twins) each take who decides
(``by``, ``roles``), why (``comment``), which approval (``approval_id``), the
clock and the authorization policy. Each public call keeps its own documented
signature and gathers these into one :class:`DeciderArgs` that the flows take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from langgraph_durable.interrupts._authz import Authorize
from langgraph_durable.interrupts._clock import Clock
from langgraph_durable.interrupts._inputs import decider_args


@dataclass(frozen=True)
class DeciderArgs:
    """Who acts on a waiting approval, and under which policy.

    Attributes:
        by: The decider or operator.
        comment: Why, kept in the record.
        approval_id: Which approval, when the thread has several pending.
        roles: Roles the decider holds.
        clock: Time source for the record and the resumed run.
        authorize: The policy in force (already resolved against the graph).
    """

    by: str
    comment: str | None
    approval_id: str | None
    roles: Sequence[str]
    clock: Clock | None
    authorize: Authorize | None

    def checked(self) -> DeciderArgs:
        """The same arguments, checked and normalised by :func:`._inputs.decider_args`.

        Raises:
            InvalidInput: an argument is not text every backend stores.
        """
        by, comment, roles, approval_id = decider_args(
            by=self.by,
            comment=self.comment,
            roles=self.roles,
            approval_id=self.approval_id,
            id_parameter="approval_id",
        )
        return replace(self, by=by, comment=comment, roles=roles, approval_id=approval_id)

    def as_kwargs(self) -> dict[str, Any]:
        """The arguments as keywords (``by=``, ``comment=``, ... ``authorize=``)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}
