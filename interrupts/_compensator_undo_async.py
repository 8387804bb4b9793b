"""The compensation node's body, written once: undo one step with retries.

The sync module (:mod:`._compensator_undo`) is generated from this one by
``tools/async_to_sync.py``; :meth:`Compensator.run` runs the generated
``undo_step`` and :meth:`Compensator.arun` runs :func:`aundo_step`. The policy
(which step, what the report says) is the compensator's and shared by both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from langgraph_durable.interrupts._activity import arun_once
from langgraph_durable.interrupts._audit import anode_audit
from langgraph_durable.interrupts._telemetry import traced, undo_attributes, undo_failed

if TYPE_CHECKING:
    from langgraph_durable.interrupts._compensator import Compensator


async def aundo_step(compensator: Compensator, state: Any, config: RunnableConfig) -> Any:
    """Undo one step (with retries), or ask a human, or finish."""
    result, plan = compensator._begin(state, config)
    if plan is None:
        return result
    with traced("compensation.undo", undo_attributes(plan)):
        done = await _aattempts(compensator, plan)
    await anode_audit(config, **compensator._audit(plan, done))
    return done


async def _aattempts(compensator: Compensator, plan: Any) -> Command[Any]:
    saga, step, ctx, fn, key, pass_key = plan
    attempts = 0
    while True:
        attempts += 1
        try:
            await arun_once(
                fn,
                key=key,
                args=list(step["args"]),
                kwargs=dict(step["kwargs"]),
                pass_key=pass_key,
                ctx=ctx,
            )
            return compensator._done(step, attempts)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            undo_failed(step, exc, attempts)
            if attempts >= compensator.max_attempts:
                return compensator._exhausted(saga, step, exc, attempts, ctx)
        await compensator.asleep(compensator.backoff.delay(attempts))
