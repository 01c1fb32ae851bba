"""The `SpecResponse` of a hosted environment: its id, spaces, render mode, metadata, labels
and episode step limit (`max_episode_steps`)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from gymnasium import Wrapper
from gymnasium.wrappers import TimeLimit
from platform_contracts.spaces import UnsupportedSpaceError, space_to_proto
from platform_contracts.values import datamap_from_dict
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.labels import LabelError, observation_labels
from platform_sdk.server.errors import StartupError


def build_spec(env: Any, env_id: str, *, endless: bool = False) -> env_pb.SpecResponse:
    """The spec of one environment (`num_envs` 1).

    Raises:
        StartupError: the environment's spaces cannot be carried by the protocol, or its
            observation labels do not fit its observation space.
    """
    try:
        spec = env_pb.SpecResponse(
            env_id=env_id,
            observation_space=space_to_proto(env.observation_space),
            action_space=space_to_proto(env.action_space),
            render_mode=getattr(env, "render_mode", None) or "",
            metadata=datamap_from_dict(spec_metadata(env)),
            num_envs=1,
            endless=endless,
        )
        limit = None if endless else max_episode_steps(env)
        if limit is not None:
            spec.max_episode_steps = limit
        for name, start, stop in observation_labels(env):
            spec.observation_labels.add(name=name, start=start, stop=stop)
    except (UnsupportedSpaceError, LabelError) as exc:
        raise StartupError(f"{env_id}: {exc}") from None
    return spec


def max_episode_steps(env: Any) -> int | None:
    """The steps after which `env` truncates an episode; None for no limit or none known.

    The limits found: each Gymnasium `TimeLimit` in its wrapper chain, and the unwrapped
    environment's own `max_episode_steps` (the platform's robots: time_limit x control rate;
    DeepMind Control: the task's time limit; Atari: its frame limit), when it is an integer
    >= 1 (None or infinity: no limit). The smallest of them ends an episode first.
    """
    limits: list[Any] = []
    layer = env
    while isinstance(layer, Wrapper):
        if isinstance(layer, TimeLimit):
            limits.append(getattr(layer, "_max_episode_steps", None))
        layer = layer.env
    limits.append(getattr(layer, "max_episode_steps", None))
    steps = [int(limit) for limit in limits if _is_step_count(limit)]
    return min(steps) if steps else None


def _is_step_count(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return math.isfinite(number) and number.is_integer() and 1 <= number <= 2**32 - 1


def spec_metadata(env: Any) -> dict[str, Any]:
    """The JSON-able parts of `env.metadata`, with `control_rate` (decisions per second) added
    from the environment's time step (`dt`, or classic control's `tau`) when it sets none."""
    metadata = jsonable_metadata(getattr(env, "metadata", None) or {})
    if "control_rate" not in metadata:
        unwrapped = getattr(env, "unwrapped", env)
        for name in ("dt", "tau"):
            step = getattr(unwrapped, name, None)
            if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
                metadata["control_rate"] = 1.0 / float(step)
                break
    return metadata


def jsonable_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able parts of `env.metadata` (numbers, strings, lists and dicts of them)."""
    result: dict[str, Any] = {}
    for key, value in metadata.items():
        ok, clean = _jsonable(value)
        if ok and isinstance(key, str):
            result[key] = clean
    return result


def _jsonable(value: Any) -> tuple[bool, Any]:
    if value is None or isinstance(value, (bool, int, str)):
        return True, value
    if isinstance(value, float):
        return math.isfinite(value), value
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # NumPy scalars
        return _jsonable(value.item())
    if isinstance(value, (list, tuple)):
        items = [_jsonable(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, Mapping):
        pairs = {k: _jsonable(v) for k, v in value.items()}
        return all(isinstance(k, str) and ok for k, (ok, _) in pairs.items()), {
            k: v for k, (_, v) in pairs.items()
        }
    return False, None
