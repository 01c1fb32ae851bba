"""The parts of `play_back` that need no platform: recorded actions rebuilt for their space (Dict,
Tuple, nested), recorded arrays read back exactly from their JSON, and what counts as a match."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from platform_sdk.recordings import PlayBackError, PlayedStep
from platform_sdk.recordings.episode_play_back import _actions, _array, _same_reward

SPACE = gym.spaces.Tuple([
    gym.spaces.Discrete(3),
    gym.spaces.Dict({"arm": gym.spaces.Dict({"joints": gym.spaces.Box(-1, 1, (2,), np.float32)}),
                     "grip": gym.spaces.MultiBinary(1)}),
])


def test_nested_actions_are_rebuilt_from_their_arrays() -> None:
    arrays = {
        "rewards": np.zeros(2),
        "actions.0": np.array([2, 0], dtype=np.int64),
        "actions.1.arm.joints": np.array([[0.5, -0.5], [0.25, 0.0]], dtype=np.float32),
        "actions.1.grip": np.array([[1], [0]], dtype=np.int8),
    }
    first, second = _actions(arrays, SPACE, "s-1", 0)
    assert first[0] == 2 and isinstance(first[0], int)
    np.testing.assert_array_equal(first[1]["arm"]["joints"], [0.5, -0.5])
    assert first[1]["arm"]["joints"].dtype == np.float32 and first[1]["grip"].dtype == np.int8
    assert SPACE.contains(first) and SPACE.contains(second)


def test_a_missing_action_array_is_named() -> None:
    with pytest.raises(PlayBackError, match="has no array 'actions.1.grip'"):
        _actions({"rewards": np.zeros(1), "actions.0": np.array([1]),
                  "actions.1.arm.joints": np.zeros((1, 2), np.float32)}, SPACE, "s-1", 0)


def test_arrays_come_back_exactly_and_nan_rewards_match() -> None:
    rewards = _array({"dtype": "<f8", "shape": [3], "data": [0.1, "nan", "-inf"]})
    assert rewards[0] == 0.1 and math.isnan(rewards[1]) and rewards[2] == -math.inf
    assert _array({"dtype": "<f4", "shape": [1, 2], "data": [[0.1, 2.5]]}).tolist() == [
        [float(np.float32(0.1)), 2.5]]
    assert _same_reward(float("nan"), float("nan")) and not _same_reward(1.0, 1.0 + 1e-12)


def test_a_step_without_a_recorded_digest_is_not_held_against_it() -> None:
    assert PlayedStep(1, 1.0, 1.0, True, None).match
    assert not PlayedStep(1, 1.0, 1.0, True, False).match
    assert not PlayedStep(1, 1.0, 0.0, False, True).match
    assert not PlayedStep(1, 1.0, 1.0, True, True, flags_match=False).match
