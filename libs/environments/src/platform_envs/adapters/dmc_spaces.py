"""Gymnasium spaces of a dm_control task, and the names of the parts of its flat observation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces


def observation_space(spec: Mapping[str, Any]) -> spaces.Dict:
    """A `Dict` of float64 `Box`es named as the spec (a scalar is shape (1,)); keys sorted."""
    boxes: dict[str, spaces.Space[Any]] = {}
    for name, array_spec in spec.items():
        shape = tuple(array_spec.shape) or (1,)
        boxes[name] = spaces.Box(*_bounds(array_spec, shape), shape=shape, dtype=np.float64)
    return spaces.Dict(boxes)  # sorts its keys, as a Dict rebuilt from the protocol does


def action_space(spec: Any) -> spaces.Box:
    """A float64 `Box` with the bounds of the task's action spec."""
    shape = tuple(spec.shape)
    return spaces.Box(*_bounds(spec, shape), shape=shape, dtype=np.float64)


def action_names(physics: Any, space: spaces.Box) -> list[str]:
    """The actuators' names (actions drive the actuators in order), or action_<i>."""
    model = physics.model
    if space.shape != (model.nu,):
        return [f"action_{i}" for i in range(int(np.prod(space.shape)))]
    return [model.id2name(i, "actuator") or f"actuator_{i}" for i in range(model.nu)]


def observation_labels(space: spaces.Dict) -> list[tuple[str, int, int]]:
    """(name, start, stop) of each entry of `space` in `gymnasium.spaces.flatten(space, obs)`."""
    labels, start = [], 0
    for name, entry in space.spaces.items():
        stop = start + spaces.flatdim(entry)
        labels.append((name, start, stop))
        start = stop
    return labels


def _bounds(spec: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    low = np.broadcast_to(np.asarray(getattr(spec, "minimum", -np.inf), np.float64), shape)
    high = np.broadcast_to(np.asarray(getattr(spec, "maximum", np.inf), np.float64), shape)
    return low, high
