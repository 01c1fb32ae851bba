"""Turning `--agent module:function` and its settings into an agent."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from platform_sdk.agents.interface import missing_methods

AgentFactory = Callable[..., Any]
"""Called with the agent's settings as keyword arguments; returns an agent."""


class AgentLoadError(ValueError):
    """An agent that cannot be loaded or built; the message says what to fix."""


def load_factory(spec: str) -> AgentFactory:
    """The factory named by `spec`, "module:function" (the function may be a dotted path).

    The module is imported with the current folder first on `sys.path`, so an agent in
    `./my_agent.py` loads as `my_agent:make`.

    Raises:
        AgentLoadError: a malformed spec, a module that does not import, a missing or
            non-callable factory.
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise AgentLoadError(f"expected module:function (e.g. my_agent:make), got {spec!r}")
    module = _import(module_name)
    factory: Any = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise AgentLoadError(f"module {module_name!r} ({module.__file__}) has no {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise AgentLoadError(f"{spec} is a {type(factory).__name__}, not a function that makes an agent")
    made: AgentFactory = factory
    return made


def build_agent(factory: AgentFactory, settings: Mapping[str, Any], spec: str) -> Any:
    """Calls `factory(**settings)` and checks that the result has `start` and `act`.

    Raises:
        AgentLoadError: the factory raised (a wrong setting's TypeError included), or returned
            something without `start(env, streams)` and `act(...)`.
    """
    try:
        agent = factory(**settings)
    except Exception as exc:  # any failure of the user's factory is reported in one line
        raise AgentLoadError(f"the agent factory {spec} failed: {type(exc).__name__}: {exc}") from exc
    missing = missing_methods(agent)
    if missing:
        raise AgentLoadError(f"{spec} returned a {type(agent).__name__}, which has no "
                             f"{' and no '.join(name + '()' for name in missing)} method")
    return agent


def load_agent(spec: str, settings: Mapping[str, Any] | None = None) -> Any:
    """`build_agent(load_factory(spec), settings or {}, spec)`."""
    return build_agent(load_factory(spec), settings or {}, spec)


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
