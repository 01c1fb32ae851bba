"""Built-in agents to compare yours against: `RandomAgent` and `ScriptedAgent`.

Both are their own factories (`--agent platform_sdk.agents.builtin:RandomAgent`), take their
settings as keyword arguments and drive any number of streams.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from platform_sdk.agents.interface import AgentError

TEACHER_KEY = "teacher_action"  # what an environment with a teacher puts in every info


class RandomAgent:
    """Samples each action uniformly from the action space; the same actions for the same `seed`.

    It samples its own copy of the space, so the session's `action_space` RNG is left alone.
    """

    max_streams = 1024

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed
        self.space: gym.Space[Any] | None = None

    def start(self, env: Any, streams: int) -> None:
        self.space = copy.deepcopy(env.action_space)
        self.space.seed(self.seed)

    def act(self, observations: list[Any], rewards: list[float | None], terminated: list[bool],
            truncated: list[bool], infos: list[dict[str, Any]]) -> list[Any]:
        assert self.space is not None, "start() comes first"
        if isinstance(self.space, gym.spaces.Discrete):
            return [int(self.space.sample()) for _ in observations]
        return [self.space.sample() for _ in observations]

    def info(self) -> dict[str, Any]:
        return {"agent": "random", "seed": self.seed}


class ScriptedAgent:
    """Acts from a script, not from learning.

    - With no settings it follows the environment's teacher: the `teacher_action` every info
      of an environment with a teacher carries (the Menagerie pick and place tasks under hand
      control). A step without one is refused: the agent answers a random action and reports
      `refused` = 1, which the run's summary counts.
    - `actions=[a0, a1, ...]` plays those actions in turn, over and over (each stream from the
      first); `action=a` plays one action always. Actions are given as JSON would give them
      (numbers or lists of numbers) and are converted to the action space.
    """

    max_streams = 1024

    def __init__(self, actions: Sequence[Any] | None = None, action: Any = None, seed: int | None = 0) -> None:
        if actions is not None and action is not None:
            raise AgentError("give ScriptedAgent either actions=[...] or action=..., not both")
        if actions is not None and len(actions) == 0:
            raise AgentError("ScriptedAgent's actions=[] is empty: give at least one action")
        self.script: list[Any] | None = list(actions) if actions is not None else (
            [action] if action is not None else None)
        self.seed = seed
        self.space: gym.Space[Any] | None = None
        self._cycles: list[Iterator[Any]] = []
        self._refused: list[bool] = []

    def start(self, env: Any, streams: int) -> None:
        self.space = copy.deepcopy(env.action_space)
        self.space.seed(self.seed)
        if self.script is not None:
            converted = [self._convert(action, index) for index, action in enumerate(self.script)]
            self._cycles = [itertools.cycle(converted) for _ in range(streams)]
        self._refused = [False] * streams

    def act(self, observations: list[Any], rewards: list[float | None], terminated: list[bool],
            truncated: list[bool], infos: list[dict[str, Any]]) -> list[Any]:
        assert self.space is not None, "start() comes first"
        if self._cycles:
            return [next(cycle) for cycle in self._cycles]
        actions = []
        for i, info in enumerate(infos):
            suggestion = info.get(TEACHER_KEY)
            self._refused[i] = suggestion is None
            actions.append(self.space.sample() if suggestion is None else self._convert(suggestion, None))
        return actions

    def readouts(self) -> list[dict[str, Any]]:
        return [{"refused": refused} for refused in self._refused]

    def info(self) -> dict[str, Any]:
        return {"agent": "scripted", "follows": "a fixed script" if self.script is not None else "the teacher"}

    def _convert(self, action: Any, index: int | None) -> Any:
        assert self.space is not None
        space = self.space
        if isinstance(space, gym.spaces.Discrete):
            value: Any = int(action)
        else:
            value = np.asarray(action, dtype=space.dtype) if space.dtype is not None else action
        if not space.contains(value):
            where = f"actions[{index}]" if index is not None else "the teacher's action"
            raise AgentError(f"ScriptedAgent: {where} = {action!r} is not in the action space {space}")
        return value
