"""Review a tool call before it runs, the way LangChain's ``HumanInTheLoopMiddleware`` does.

``areview_tool_call`` asks a durable approval for one tool call (the action is
the tool's name, its ``args`` the call's), then acts on the decision:

* approve: the tool runs with the model's arguments;
* edit: the tool runs with the approver's arguments;
* reject: the tool does not run; the model gets a ``ToolMessage`` saying so
  (with the approver's message), marked ``status="error"``;
* respond: the tool does not run; the model gets the approver's text as the
  tool's result.

Everything an approval does applies: deadlines and escalation, the audit
trail, exactly-once decisions from ``aapprove()``/``aedit()`` or any
``Command(resume=...)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from langgraph_durable.interrupts._models import Decision, OnTimeout
from langgraph_durable.interrupts._request_calls_async import arequest_approval
from langgraph_durable.interrupts._shapes import DECISION_TYPES


def _options(
    tool: BaseTool,
    tool_call: ToolCall,
    allowed_decisions: Sequence[str],
    description: str | None,
    approvers: str | Iterable[str],
    timeout: timedelta | float | None,
    on_timeout: OnTimeout,
) -> dict[str, Any]:
    return {
        "action": tool_call.get("name") or tool.name,
        "description": description
        or f"Tool execution requires approval\n\nTool: {tool.name}\nArgs: {tool_call['args']}",
        "allowed_decisions": allowed_decisions,
        "approvers": approvers,
        "timeout": timeout,
        "on_timeout": on_timeout,
    }


def _not_run(tool_call: ToolCall, decision: Decision) -> ToolMessage:
    name = tool_call["name"]
    if decision.type == "respond":
        content = decision.response or ""
    elif decision.comment:
        content = f"User rejected the tool call for `{name}` with reason: {decision.comment}"
    elif decision.timed_out:
        content = f"The tool call for `{name}` was not approved in time; it was not executed."
    else:
        content = (
            f"User rejected the tool call for `{name}` with id {tool_call.get('id')}. "
            "The tool was not executed. Do not retry this tool call unless the user asks."
        )
    return ToolMessage(
        content=content,
        name=name,
        tool_call_id=str(tool_call.get("id") or ""),
        status="success" if decision.type == "respond" else "error",
    )


def _call(tool_call: ToolCall, decision: Decision) -> ToolCall:
    args = decision.edited if decision.type == "edit" else tool_call["args"]
    return {**tool_call, "args": dict(args or {}), "type": "tool_call"}


async def areview_tool_call(
    tool: BaseTool,
    tool_call: ToolCall,
    *,
    allowed_decisions: Sequence[str] = DECISION_TYPES,
    description: str | None = None,
    approvers: str | Iterable[str] = (),
    timeout: timedelta | float | None = None,
    on_timeout: OnTimeout = "reject",
) -> ToolMessage:
    """Ask for approval of ``tool_call``, then run it, run it edited, or answer the model.

    Call inside a node (the approval pauses the run); await the async form in ``async def``
    nodes, where it runs the tool's async call. Args are those of
    :func:`~langgraph_durable.interrupts.arequest_approval`; ``allowed_decisions``
    defaults to all four, as ``HumanInTheLoopMiddleware(interrupt_on={name: True})``.

    Returns:
        The ``ToolMessage`` for the model: the tool's result, or why it did not run.
    """
    decision = await arequest_approval(
        dict(tool_call["args"]),
        **_options(tool, tool_call, allowed_decisions, description, approvers, timeout, on_timeout),
    )
    if not decision.approved:
        return _not_run(tool_call, decision)
    result = await tool.ainvoke(_call(tool_call, decision))
    return result if isinstance(result, ToolMessage) else _as_message(tool_call, result)


def _as_message(tool_call: ToolCall, result: Any) -> ToolMessage:
    return ToolMessage(
        content=str(result), name=tool_call["name"], tool_call_id=str(tool_call.get("id") or "")
    )
