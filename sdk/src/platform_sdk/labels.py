"""Labelled observations: names of the parts of an environment's flat observation.

An environment that defines `get_observation_labels()` returns `(name, start, stop)` triples:
entry `name` of an observation is `flat[start:stop]` of
`gymnasium.spaces.flatten(observation_space, observation)`. DeepMind Control tasks name their
observations this way (`joint_angles`, `velocity`, ...), and so do robots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

Label = tuple[str, int, int]


class LabelError(ValueError):
    """An environment's labels do not fit its observation space."""


def observation_labels(env: Any) -> list[Label]:
    """The environment's labels (through wrappers), checked; [] when it defines none.

    Raises:
        LabelError: `get_observation_labels()` raised, or a label is not a (name, start, stop)
            slice of the flat observation.
    """
    try:
        has = env.has_wrapper_attr("get_observation_labels")
    except AttributeError:  # not a gymnasium.Env
        has = hasattr(env, "get_observation_labels")
    if not has:
        return []
    getter = env.get_wrapper_attr("get_observation_labels") if hasattr(env, "get_wrapper_attr") else (
        env.get_observation_labels
    )
    try:
        labels = getter()
    except Exception as exc:  # noqa: BLE001 - the user's code: any failure is reported as one line
        raise LabelError(f"get_observation_labels() raised {type(exc).__name__}: {exc}") from None
    return check_labels(labels, spaces.flatdim(env.observation_space))


def check_labels(labels: Any, size: int) -> list[Label]:
    """`labels` as a list of (name, start, stop), each within a flat observation of `size`.

    Raises:
        LabelError: naming the first label that is malformed, out of range or repeated.
    """
    checked: list[Label] = []
    seen: set[str] = set()
    for label in labels or ():
        try:
            name, start, stop = label
            start, stop = int(start), int(stop)
        except (TypeError, ValueError):
            raise LabelError(f"observation label {label!r} is not a (name, start, stop) triple") from None
        if not isinstance(name, str) or not name:
            raise LabelError(f"observation label {label!r}: the name must be a non-empty string")
        if name in seen:
            raise LabelError(f"observation label {name!r} appears twice")
        if not 0 <= start < stop <= size:
            raise LabelError(
                f"observation label {name!r} covers [{start}, {stop}), outside the flat observation of size {size}"
            )
        seen.add(name)
        checked.append((name, start, stop))
    return checked


def labelled(observation: Any, space: spaces.Space[Any], labels: Sequence[Label]) -> dict[str, np.ndarray]:
    """Split `observation` (of `space`) by `labels`: {name: its part of the flat observation}.

    Raises:
        LabelError: there are no labels, or the observation does not fit the labels.
    """
    if not labels:
        raise LabelError("this environment names no parts of its observation (it has no get_observation_labels)")
    flat = np.asarray(spaces.flatten(space, observation)).ravel()
    parts: dict[str, np.ndarray] = {}
    for name, start, stop in labels:
        if stop > flat.size:
            raise LabelError(f"observation label {name!r} ends at {stop}, past the observation's {flat.size} values")
        parts[name] = flat[start:stop]
    return parts
