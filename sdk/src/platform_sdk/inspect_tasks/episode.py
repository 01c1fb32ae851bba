"""One sample's episode: a recorded session of the environment, reset with the sample's seed,
played by the model one decision at a time until it ends or `max_steps`.

The SDK's client blocks, so every call to the platform runs in a worker thread: samples played
at once do not hold up one another's model calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, Content, ContentText, Model

from platform_sdk.agents.loop import episode_success
from platform_sdk.client.remote_env import RemoteEnv, connect
from platform_sdk.client.settings import resolve_url
from platform_sdk.inspect_tasks.actions import ACT, act_tool, action_text
from platform_sdk.inspect_tasks.conversation import Conversation
from platform_sdk.inspect_tasks.decisions import Decision, answer_calls, decide
from platform_sdk.inspect_tasks.frames import frame_content
from platform_sdk.inspect_tasks.observation_text import action_space_text, number_text, observation_text
from platform_sdk.inspect_tasks.outcome import EpisodeOutcome
from platform_sdk.inspect_tasks.settings import EpisodeSettings

T = TypeVar("T")
NO_FRAME_MODES = frozenset({None, "human", "ansi"})


async def _blocking(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))


def renders_frames(env: RemoteEnv) -> bool:
    """Whether the environment renders frames (one whose render mode is none or text does not:
    its model gets the observation's text alone)."""
    return env.render_mode not in NO_FRAME_MODES


def rules_text(settings: EpisodeSettings, env: RemoteEnv, names: list[str]) -> str:
    """The system message: the environment, what an action is, how the episode goes."""
    repeat = f" Each action is taken for {settings.action_repeat} steps." if settings.action_repeat > 1 else ""
    changes = (" The world may change during the episode (the environment's world_changes): keep watching "
               "what your actions do." if settings.kwargs.get("world_changes") else "")
    return (
        f"You are the agent in the environment '{env.env}' of the Simulusion platform, playing one episode. "
        f"Each turn you get the current observation; answer by calling the {ACT} tool with one action. "
        f"The action is {action_space_text(env.action_space, names)}\n"
        f"The goal is the largest total reward. The episode ends when the environment ends it, or after "
        f"{settings.max_steps} steps.{repeat}{changes}"
    )


class EpisodePlayer:
    """Plays one episode of `settings` with `model`, keeping its outcome in `outcome` and its
    messages in `messages` (the sample's)."""

    def __init__(self, settings: EpisodeSettings, model: Model, outcome: EpisodeOutcome, show_frames: bool) -> None:
        self.settings = settings
        self.model = model
        self.outcome = outcome
        self.show_frames = show_frames

    async def play(self, seed: int, messages: list[Any]) -> None:
        settings, outcome = self.settings, self.outcome
        outcome.env, outcome.seed = settings.env, seed
        env = await _blocking(connect, settings.env, url=settings.url, kwargs=settings.kwargs or None,
                              record=True, record_frames=True)
        try:
            outcome.session_id = outcome.recording_id = env.session_id
            outcome.replay = f"{resolve_url(settings.url)}/recordings/{env.session_id}"
            names = [str(name) for name in env.metadata.get("action_names") or []]
            messages.insert(0, ChatMessageSystem(content=rules_text(settings, env, names)))
            conversation = Conversation(messages, settings.history)
            observation, info = await _blocking(env.reset, seed=seed)
            await self._loop(env, conversation, names, observation, info)
            if settings.kwargs.get("world_changes"):
                outcome.world_changes_applied = (await _blocking(env.world_changes))["applied"]
        finally:
            await _blocking(env.close)

    async def _loop(self, env: RemoteEnv, conversation: Conversation, names: list[str], observation: Any,
                    info: dict[str, Any]) -> None:
        settings, outcome = self.settings, self.outcome
        tool = act_tool(env.action_space, names)
        labels = env.get_observation_labels()
        note = ""
        while outcome.steps < settings.max_steps:
            conversation.begin_turn(ChatMessageUser(
                content=await self._observation_content(env, observation, labels, note)))
            decision = await decide(self.model, tool, conversation, env.action_space, settings.invalid_tries, names)
            outcome.decisions += 1
            outcome.model_calls += decision.model_calls
            outcome.invalid_actions += decision.invalid
            outcome.default_actions += int(decision.defaulted)
            observation, info, reward, ended = await self._take(env, decision)
            result = f"reward {number_text(reward)}; return so far {number_text(outcome.episode_return)}"
            if ended:
                result += f"; the episode ended ({'terminated' if outcome.terminated else 'truncated'})"
            answer_calls(conversation, decision, result)
            note = (f"You gave no valid action after {settings.invalid_tries} answers: the default action "
                    f"{action_text(decision.action)} was taken ({result}).\n" if decision.defaulted else "")
            if ended:
                return
        outcome.stopped_at_max_steps = True

    async def _observation_content(self, env: RemoteEnv, observation: Any, labels: list[tuple[str, int, int]],
                                   note: str) -> list[Content]:
        text = observation_text(observation, env.observation_space, labels)
        content: list[Content] = [ContentText(text=f"{note}Step {self.outcome.steps}. Observation:\n{text}")]
        if self.show_frames and renders_frames(env):
            content.append(frame_content(await _blocking(env.render_jpeg)))
            self.outcome.frames_shown += 1
        return content

    async def _take(self, env: RemoteEnv, decision: Decision) -> tuple[Any, dict[str, Any], float, bool]:
        """Take the decision's action for up to action_repeat steps (fewer when the episode or
        max_steps ends first); the first step records the decision's agent data."""
        outcome = self.outcome
        agent: dict[str, Any] | None = {"compute_s": decision.seconds, "invalid": decision.invalid,
                                        "default_action": decision.defaulted}
        total = 0.0
        observation: Any = None
        info: dict[str, Any] = {}
        for _ in range(self.settings.action_repeat):
            observation, reward, terminated, truncated, info = await _blocking(env.step, decision.action, agent=agent)
            agent = None
            total += float(reward)
            outcome.steps += 1
            outcome.episode_return += float(reward)
            outcome.terminated, outcome.truncated = bool(terminated), bool(truncated)
            success = episode_success(info)
            if success is not None:
                outcome.success = success
            if terminated or truncated or outcome.steps >= self.settings.max_steps:
                break
        return observation, info, total, outcome.terminated or outcome.truncated
