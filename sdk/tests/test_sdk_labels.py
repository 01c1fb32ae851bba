"""`platform_sdk.labels`: reading, checking and applying observation labels."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_sdk.labels import LabelError, check_labels, labelled, observation_labels


class _Labelled(gymnasium.Env):
    observation_space = gs.Dict({"position": gs.Box(-1, 1, (2,)), "velocity": gs.Box(-1, 1, (3,))})
    action_space = gs.Discrete(2)

    def __init__(self, labels: Any = None) -> None:
        self.labels = labels if labels is not None else [("position", 0, 2), ("velocity", 2, 5)]

    def get_observation_labels(self) -> Any:
        if isinstance(self.labels, Exception):
            raise self.labels
        return self.labels


def test_labels_are_read_through_wrappers() -> None:
    env = gymnasium.wrappers.PassiveEnvChecker(_Labelled())
    assert observation_labels(env) == [("position", 0, 2), ("velocity", 2, 5)]


def test_an_env_without_labels_has_none() -> None:
    assert observation_labels(gymnasium.make("CartPole-v1")) == []


def test_labelled_splits_the_flat_observation() -> None:
    env = _Labelled()
    observation = {"position": np.array([0.1, 0.2], np.float32), "velocity": np.array([1, 2, 3], np.float32)}
    parts = labelled(observation, env.observation_space, observation_labels(env))
    assert list(parts) == ["position", "velocity"]
    np.testing.assert_array_equal(parts["position"], observation["position"])
    np.testing.assert_array_equal(parts["velocity"], observation["velocity"])


@pytest.mark.parametrize(
    ("labels", "says"),
    [
        ([("position", 0, 2), ("position", 2, 5)], "appears twice"),
        ([("velocity", 2, 6)], "outside the flat observation of size 5"),
        ([("empty", 3, 3)], "outside"),
        ([("position", 0)], "not a (name, start, stop) triple"),
        ([(7, 0, 1)], "non-empty string"),
        (RuntimeError("no physics yet"), "get_observation_labels() raised RuntimeError: no physics yet"),
    ],
)
def test_bad_labels_are_named(labels: Any, says: str) -> None:
    with pytest.raises(LabelError, match=None) as caught:
        observation_labels(_Labelled(labels))
    assert says in str(caught.value)


def test_labelled_without_labels_says_so() -> None:
    with pytest.raises(LabelError, match="names no parts of its observation"):
        labelled(np.zeros(4), gs.Box(-1, 1, (4,)), [])


def test_check_labels_accepts_numpy_integers() -> None:
    assert check_labels([("a", np.int64(0), np.int32(4))], 4) == [("a", 0, 4)]
