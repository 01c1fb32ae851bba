"""Build the environment to host: `gymnasium.make(id)` or a `module:function` factory.

Endless environments (the platform's `endless` kwarg, taken off the kwargs before this) are
built without time limits: Gymnasium ids with `max_episode_steps=-1` (no `TimeLimit`), the
catalog's adapters with the kwarg that turns their own limit off (`ENDLESS_FACTORY_KWARGS`),
and any `TimeLimit` wrapper left in what a factory returns is taken out.
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from platform_sdk.server.errors import StartupError

RENDER_MODE = "rgb_array"
# The kwargs that turn off the time limit of the catalog's adapters (gym_mujoco passes its
# kwargs to gymnasium.make, where max_episode_steps=-1 means no TimeLimit).
ENDLESS_FACTORY_KWARGS: dict[str, dict[str, Any]] = {
    "platform_envs.adapters.dmc:make_env": {"time_limit": math.inf},
    "platform_envs.adapters.gym_mujoco:make_env": {"max_episode_steps": -1},
    "platform_envs.adapters.atari:make_env": {"max_episode_steps": math.inf},
    "platform_envs.doom:make_env": {"max_episode_steps": math.inf},
}
ENDLESS_GYM_KWARGS: dict[str, Any] = {"max_episode_steps": -1}


def build_env(
    gym_id: str = "",
    factory: str = "",
    paths: Sequence[str] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    endless: bool = False,
) -> tuple[Any, str]:
    """Build the environment; returns it and its id.

    With `gym_id`, `gymnasium.make(gym_id, render_mode="rgb_array", **kwargs)`. With `factory`
    ("module:function", the module imported with each of `paths` first on sys.path),
    `function(render_mode="rgb_array", **kwargs)`, or `function(**kwargs)` when it takes no
    render_mode. A `render_mode` in `kwargs` wins in both cases. `endless`: without time
    limits (see the module docstring).

    Raises:
        StartupError: the id is unknown, the factory cannot be imported, raises, or does not
            return an environment; `endless` with kwargs that set a time limit.
    """
    kwargs = dict(kwargs or {})
    if bool(gym_id) == bool(factory):
        raise StartupError("give exactly one of --gym-id and --factory")
    if endless:
        _add_endless_kwargs(kwargs, ENDLESS_GYM_KWARGS if gym_id else ENDLESS_FACTORY_KWARGS.get(factory, {}))
    if gym_id:
        env = _make(gym_id, kwargs)
        env_id = gym_id
    else:
        env = _call_factory(factory, paths, kwargs)
        spec = getattr(env, "spec", None)
        env_id = getattr(spec, "id", None) or factory
    if endless:
        env = without_time_limits(env)
    for name in ("reset", "step", "action_space", "observation_space"):
        if not hasattr(env, name):
            source = gym_id or f"factory {factory}"
            raise StartupError(
                f"{source} returned {type(env).__name__}, which is not a Gymnasium environment"
            )
    return env, env_id


def _add_endless_kwargs(kwargs: dict[str, Any], endless_kwargs: Mapping[str, Any]) -> None:
    for name, value in endless_kwargs.items():
        if name in kwargs:
            raise StartupError(f"an endless environment has no time limit: drop {name} from the kwargs")
        kwargs[name] = value


def without_time_limits(env: Any) -> Any:
    """`env` with every Gymnasium `TimeLimit` wrapper taken out of its wrapper chain."""
    from gymnasium import Wrapper
    from gymnasium.wrappers import TimeLimit

    while isinstance(env, TimeLimit):
        env = env.env
    wrapper = env
    while isinstance(wrapper, Wrapper):
        if isinstance(wrapper.env, TimeLimit):
            wrapper.env = wrapper.env.env
        else:
            wrapper = wrapper.env
    return env


def _make(gym_id: str, kwargs: dict[str, Any]) -> Any:
    import gymnasium

    kwargs.setdefault("render_mode", RENDER_MODE)
    try:
        return gymnasium.make(gym_id, **kwargs)
    except Exception as exc:  # noqa: BLE001 - user code may raise anything; reported in one line
        raise StartupError(f"cannot make {gym_id!r}: {_one_line(exc)}") from None


def _call_factory(factory: str, paths: Sequence[str], kwargs: dict[str, Any]) -> Any:
    module_name, sep, attr = factory.partition(":")
    if not sep or not module_name or not attr:
        raise StartupError(f"--factory must be 'module:function', not {factory!r}")
    for path in reversed(paths):
        sys.path.insert(0, path)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - user code may raise anything; reported in one line
        raise StartupError(f"cannot import {module_name!r} for factory {factory}: {_one_line(exc)}") from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise StartupError(f"factory {factory}: {module_name} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise StartupError(f"factory {factory} is not callable")
    pass_render_mode = "render_mode" not in kwargs and _accepts_render_mode(target)
    try:
        if pass_render_mode:
            try:
                return target(render_mode=RENDER_MODE, **kwargs)
            except TypeError as exc:
                if "render_mode" not in str(exc):
                    raise
        return target(**kwargs)
    except Exception as exc:  # noqa: BLE001 - user code may raise anything; reported in one line
        raise StartupError(f"factory {factory} raised {_one_line(exc)}") from None


def _accepts_render_mode(function: Any) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True  # unknown: try it, fall back on TypeError
    return any(p.name == "render_mode" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
