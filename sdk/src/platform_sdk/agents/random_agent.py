"""The `random` agent: samples the action space, seeded."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym


class RandomAgent:
    """Picks every action uniformly from `action_space`; with `seed`, the same actions each run.

    It samples its own copy of the space, so the env's `action_space` RNG is left alone.
    """

    def __init__(self, action_space: gym.Space[Any], seed: int | None = None) -> None:
        self.action_space = copy.deepcopy(action_space)
        self.action_space.seed(seed)

    def act(self, observation: Any) -> Any:
        action = self.action_space.sample()
        if isinstance(self.action_space, gym.spaces.Discrete):
            return int(action)  # the SDK's fast path for discrete actions
        return action
