"""Observations and spaces as text for a model: what it sees each turn and what it may answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from platform_sdk.labels import Label, labelled

# Observations with more values than this are not written out (an image: the frame shows it).
MAX_TEXT_VALUES = 256
# Bounds of a Box action are listed one by one up to this many dimensions.
MAX_LISTED_BOUNDS = 32


def number_text(value: Any) -> str:
    """A number as short text: integers as they are, others with 4 significant digits."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    number = float(value)
    if np.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.4g}"


def array_text(values: Any) -> str:
    """A flat list of numbers as `[a, b, c]`."""
    return "[" + ", ".join(number_text(v) for v in np.asarray(values).ravel()) + "]"


def observation_text(observation: Any, space: spaces.Space[Any], labels: Sequence[Label] = ()) -> str:
    """The observation as text: by the environment's labels when it names its parts, per key for
    a Dict space, else the values; a large one (an image) is only described."""
    if labels:
        parts = labelled(observation, space, labels)
        return "\n".join(f"{name}: {array_text(values)}" for name, values in parts.items())
    if isinstance(space, spaces.Dict):
        return "\n".join(f"{key}: {observation_text(observation[key], sub)}" for key, sub in space.spaces.items())
    if isinstance(space, spaces.Tuple):
        return "\n".join(f"{i}: {observation_text(observation[i], sub)}" for i, sub in enumerate(space.spaces))
    if isinstance(space, spaces.Discrete):
        return number_text(observation)
    values = np.asarray(observation)
    if values.size > MAX_TEXT_VALUES:
        return f"an array of shape {list(values.shape)} ({values.dtype}), not written out: the frame shows it"
    return array_text(values)


def bounds_text(low: np.ndarray, high: np.ndarray, names: Sequence[str]) -> str:
    """A Box's bounds: one line per dimension (named when the environment names them), or one
    range when every dimension shares it or there are too many to list."""
    if low.size and np.all(low == low.flat[0]) and np.all(high == high.flat[0]) and len(names) != low.size:
        return f"each within [{number_text(low.flat[0])}, {number_text(high.flat[0])}]"
    if low.size > MAX_LISTED_BOUNDS:
        return f"within [{array_text(low)}, {array_text(high)}] element by element"
    lines = [
        f"  {i}{f' ({names[i]})' if len(names) == low.size else ''}: within [{number_text(lo)}, {number_text(hi)}]"
        for i, (lo, hi) in enumerate(zip(low.ravel(), high.ravel(), strict=True))
    ]
    return "by position:\n" + "\n".join(lines)


def action_space_text(space: spaces.Space[Any], names: Sequence[str] = ()) -> str:
    """What the `act` tool's `action` must be, with the environment's action names if it has them."""
    if isinstance(space, spaces.Discrete):
        first, last = int(space.start), int(space.start + space.n - 1)
        text = f"one integer from {first} to {last}"
        if len(names) == space.n:
            text += ":\n" + "\n".join(f"  {first + i}: {name}" for i, name in enumerate(names))
        return text
    if isinstance(space, spaces.Box):
        low, high = np.asarray(space.low).ravel(), np.asarray(space.high).ravel()
        kind = "integers" if np.issubdtype(space.dtype, np.integer) else "numbers"
        return f"a list of {low.size} {kind}, {bounds_text(low, high, names)}"
    if isinstance(space, spaces.MultiDiscrete):
        sizes = np.asarray(space.nvec).ravel()
        starts = np.asarray(space.start).ravel()
        lines = [f"  {i}{f' ({names[i]})' if len(names) == sizes.size else ''}: from {int(s)} to {int(s + n - 1)}"
                 for i, (s, n) in enumerate(zip(starts, sizes, strict=True))]
        return f"a list of {sizes.size} integers, by position:\n" + "\n".join(lines)
    if isinstance(space, spaces.MultiBinary):
        return f"a list of {int(np.prod(space.n))} values, each 0 or 1"
    raise ValueError(f"the action space {space} cannot be described to a model: only Discrete, Box, "
                     "MultiDiscrete and MultiBinary actions are supported")
