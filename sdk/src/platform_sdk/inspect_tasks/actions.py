"""The model's action: the `act` tool it calls, checking what it answered against the action
space, and the default action taken when it gives no valid one."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from platform_sdk.inspect_tasks.observation_text import action_space_text, array_text, number_text

ACT = "act"


@dataclass(frozen=True)
class CheckedAction:
    """An answer checked against the action space: `action` to step with, or `problem` (None
    when the answer is valid) to say back to the model."""

    action: Any = None
    problem: str | None = None


def act_tool(space: spaces.Space[Any], names: Sequence[str] = ()) -> ToolInfo:
    """The `act` tool: one parameter, `action`, typed after the action space."""
    description = action_space_text(space, names)
    if isinstance(space, spaces.Discrete):
        first = int(space.start)
        param = ToolParam(type="integer", description=description, minimum=first, maximum=first + int(space.n) - 1)
    else:
        item = "number" if isinstance(space, spaces.Box) and not np.issubdtype(space.dtype, np.integer) else "integer"
        param = ToolParam(type="array", description=description, items=ToolParam(type=item))
    return ToolInfo(name=ACT, description="Take one action in the environment.",
                    parameters=ToolParams(properties={"action": param}, required=["action"]))


def _as_list(value: Any) -> Any:
    """A JSON text of a list (as some models send arrays) decoded; anything else as it is."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _whole(value: Any) -> int | None:
    """`value` as an int when it is a whole number (5, 5.0, "5"), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def check_action(value: Any, space: spaces.Space[Any]) -> CheckedAction:
    """The model's `action` argument as an action of `space`, or the reason it is not one."""
    expected = f"expected {action_space_text(space)}"
    if isinstance(space, spaces.Discrete):
        number = _whole(value)
        if number is None or not space.contains(np.int64(number)):
            return CheckedAction(problem=f"{json.dumps(value)} is not a valid action: {expected}")
        return CheckedAction(action=number)
    value = _as_list(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]  # a one-dimensional action given as a number
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return CheckedAction(problem=f"{json.dumps(value)} is not a valid action: {expected}")
    shape = space.shape or ()
    size = int(np.prod(shape))
    if len(value) != size:
        return CheckedAction(problem=f"the action has {len(value)} values, the environment takes {size}: {expected}")
    if not all(math.isfinite(v) for v in value):
        return CheckedAction(problem=f"{json.dumps(value)} is not a valid action: its values must be finite")
    if isinstance(space, spaces.Box):
        action = np.asarray(value, dtype=space.dtype).reshape(shape)
        if not np.issubdtype(space.dtype, np.integer) or all(float(v).is_integer() for v in value):
            if space.contains(action):
                return CheckedAction(action=action)
        return CheckedAction(problem=f"{array_text(value)} is outside the action space: {expected}")
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        if all(float(v).is_integer() for v in value):
            action = np.asarray(value, dtype=space.dtype).reshape(shape)
            if space.contains(action):
                return CheckedAction(action=action)
        return CheckedAction(problem=f"{array_text(value)} is outside the action space: {expected}")
    return CheckedAction(problem=f"the action space {space} is not supported")


def default_action(space: spaces.Space[Any]) -> Any:
    """The action taken when the model gives no valid one: the first choice of a Discrete or
    MultiDiscrete space, zeros (clipped into the bounds) for a Box, zeros for MultiBinary."""
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high).astype(space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        return np.asarray(space.start, dtype=space.dtype).reshape(space.shape)
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    raise ValueError(f"the action space {space} is not supported")


def action_text(action: Any) -> str:
    """An action as the model would write it."""
    values = np.asarray(action)
    return number_text(values.item()) if values.ndim == 0 else array_text(values)
