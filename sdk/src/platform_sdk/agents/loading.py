"""Turning `--agent random` or `--agent module:factory` into agents."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from platform_sdk.agents.random_agent import RandomAgent

AgentFactory = Callable[[Any], Any]
"""Called with the session (a `gymnasium.Env`); returns an agent."""


class AgentLoadError(ValueError):
    """An agent that cannot be loaded or built; the message says what to fix."""


def load_agent(spec: str, seed: int | None = None) -> AgentFactory:
    """The factory named by `spec`: "random" or "module:factory" (a dotted attribute path).

    The module is imported with the current folder first on `sys.path`, so an agent in
    `./my_agent.py` loads as `my_agent:make_agent`. `seed` seeds the random agent.

    Raises:
        AgentLoadError: a malformed spec, a module that does not import, a missing or
            non-callable factory.
    """
    if spec == "random":
        return lambda env: RandomAgent(env.action_space, seed)
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise AgentLoadError(f"expected 'random' or 'module:factory' (e.g. my_agent:make_agent), got {spec!r}")
    module = _import(module_name)
    factory: Any = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise AgentLoadError(f"module {module_name!r} ({module.__file__}) has no {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise AgentLoadError(f"{spec} is a {type(factory).__name__}, not a function that takes the env")
    agent_factory: Callable[[Any], Any] = factory
    return agent_factory


def build_agent(factory: AgentFactory, env: Any, spec: str) -> Any:
    """Calls `factory(env)` and checks that the result can `act`.

    Raises:
        AgentLoadError: the factory raised, or returned something without `act(observation)`.
    """
    try:
        agent = factory(env)
    except Exception as exc:  # any failure of the user's factory is reported in one line
        raise AgentLoadError(f"the agent factory {spec} failed: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(agent, "act", None)):
        raise AgentLoadError(f"{spec} returned a {type(agent).__name__}, which has no act(observation) method")
    return agent


def _import(module_name: str) -> Any:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise AgentLoadError(f"no module named {exc.name!r} in {cwd} or the installed packages") from None
        raise AgentLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a broken agent module is reported in one line
        raise AgentLoadError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
