"""A scripted "model" for testing Inspect tasks offline, registered through this package's
`inspect_ai` entry point as the model API `scripted_agent`.

`--model scripted_agent/<script>` answers the platform's episode task (platform_sdk/episodes)
on CartPole without any model service; each answer carries its token usage (so Inspect never
counts tokens itself, which would fetch tokenizer data). Scripts:

- `balance`: calls `act` with the action that pushes the cart under the pole, read from the
  observation text (cart position, velocity, pole angle, angular velocity);
- `first-invalid`: answers each new observation with an action out of range (`act(action=7)`),
  then, told it was invalid, with `balance`'s action;
- `no-tool`: answers in words, never calling the tool.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

SCRIPTS = ("balance", "first-invalid", "no-tool")
_OBSERVATION = re.compile(r"Observation:\s*\[([^\]]*)\]")


def balancing_action(messages: list[ChatMessage]) -> int:
    """Push right (1) when the pole falls right (its angle plus half its angular velocity), else
    left (0), from the latest observation in `messages`."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageUser) and (found := _OBSERVATION.search(message.text)):
            _, _, angle, angular_velocity = (float(v) for v in found.group(1).split(","))
            return 1 if angle + 0.5 * angular_velocity > 0 else 0
    raise ValueError("scripted_agent: no CartPole observation in the messages")


def _usage(messages: list[ChatMessage], answer: str) -> ModelUsage:
    given = sum(len(message.text) for message in messages) // 4
    return ModelUsage(input_tokens=given, output_tokens=len(answer) // 4 + 1, total_tokens=given + len(answer) // 4 + 1)


@modelapi(name="scripted_agent")
class ScriptedAgentAPI(ModelAPI):
    """Answers by the script its model name gives (SCRIPTS)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in SCRIPTS:
            raise ValueError(f"scripted_agent/{model_name}: choose one of {', '.join(SCRIPTS)}")
        self.calls = 0

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        if self.model_name == "no-tool":
            return self._say("I would push the cart left.", input)
        action = balancing_action(input)
        told_invalid = isinstance(input[-1], ChatMessageTool) and input[-1].error is not None
        if self.model_name == "first-invalid" and not told_invalid:
            action = 7
        call = ToolCall(id=f"call-{self.calls}", function="act", arguments={"action": action})
        message = ChatMessageAssistant(content="", tool_calls=[call], model=self.model_name, source="generate")
        output = ModelOutput.from_message(message, stop_reason="tool_calls")
        output.model = self.model_name
        output.usage = _usage(input, str(action))
        return output

    def _say(self, text: str, input: list[ChatMessage]) -> ModelOutput:
        output = ModelOutput.from_content(model=self.model_name, content=text)
        output.usage = _usage(input, text)
        return output
