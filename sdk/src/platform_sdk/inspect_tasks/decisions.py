"""One decision: ask the model for an action until it gives a valid one, saying back what was
wrong with each answer, or fall back to the default action after `invalid_tries` answers."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gymnasium import spaces
from inspect_ai.model import ChatMessageTool, ChatMessageUser, Model
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

from platform_sdk.inspect_tasks.actions import ACT, check_action, default_action
from platform_sdk.inspect_tasks.conversation import Conversation
from platform_sdk.inspect_tasks.observation_text import action_space_text

ONE_ACTION = "ignored: one action per turn, the first call was taken"


@dataclass
class Decision:
    """The action to take; `call` is the tool call it came from (None: the default action),
    whose result is said once the action is taken (with `extra_calls`, ignored)."""

    action: Any
    call: ToolCall | None
    extra_calls: list[ToolCall] = field(default_factory=list)
    invalid: int = 0
    model_calls: int = 0
    seconds: float = 0.0

    @property
    def defaulted(self) -> bool:
        return self.call is None


def _tool_error(call: ToolCall, problem: str) -> ChatMessageTool:
    return ChatMessageTool(content=problem, tool_call_id=call.id, function=call.function,
                           error=ToolCallError("parsing", problem))


def _problem(call: ToolCall, space: spaces.Space[Any]) -> tuple[Any, str | None]:
    """The action of a tool call, or what is wrong with the call."""
    if call.function != ACT:
        return None, f"there is no tool {call.function!r}: call {ACT}(action)"
    if call.parse_error:
        return None, f"the call's arguments could not be read: {call.parse_error}"
    if "action" not in call.arguments:
        return None, f"the call has no 'action' argument: call {ACT}(action)"
    checked = check_action(call.arguments["action"], space)
    return checked.action, checked.problem


async def decide(model: Model, tool: ToolInfo, conversation: Conversation, space: spaces.Space[Any],
                 tries: int, names: Sequence[str] = ()) -> Decision:
    """Ask `model` (its window of `conversation`) for an action of `space`, up to `tries` times."""
    started = time.monotonic()
    decision = Decision(action=None, call=None)
    for _ in range(tries):
        output = await model.generate(conversation.window(), tools=[tool], tool_choice="auto")
        decision.model_calls += 1
        conversation.add(output.message)
        calls = list(output.message.tool_calls or [])
        if not calls:
            decision.invalid += 1
            conversation.add(ChatMessageUser(
                content=f"No action was taken: answer by calling {ACT}(action), where action is "
                        f"{action_space_text(space, names)}"))
            continue
        first, extra = calls[0], calls[1:]
        action, problem = _problem(first, space)
        if problem is None:
            decision.action, decision.call, decision.extra_calls = action, first, extra
            break
        decision.invalid += 1
        conversation.add(_tool_error(first, problem))
        for call in extra:
            conversation.add(_tool_error(call, ONE_ACTION))
    else:
        decision.action = default_action(space)
    decision.seconds = time.monotonic() - started
    return decision


def answer_calls(conversation: Conversation, decision: Decision, result: str) -> None:
    """Say the taken action's result to its tool call (and refuse the extra ones)."""
    if decision.call is None:
        return
    conversation.add(ChatMessageTool(content=result, tool_call_id=decision.call.id, function=decision.call.function))
    for call in decision.extra_calls:
        conversation.add(_tool_error(call, ONE_ACTION))
