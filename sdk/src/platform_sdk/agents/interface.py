"""The agent interface: what the loop calls on an agent, and the checks that name what is missing.

An agent is any object with

- `start(env, streams)`: once, before the first decision. `env` has `.env` (the catalog id),
  `.observation_space`, `.action_space` and `.metadata`; `streams` is how many sessions it drives.
- `act(observations, rewards, terminated, truncated, infos)`: one action per stream. Every
  argument is a list with one entry per stream; `rewards`, `terminated` and `truncated` are the
  outcome of that stream's previous action (`None`, `False`, `False` before its first); when an
  episode has ended the observation is already the next episode's first and the info carries
  `final_obs` and `final_info`.

and optionally `readouts()` (one dict of named numbers per stream about the last decision,
recorded with the step as `agent.<name>`), `finish(...)` (the arguments of `act`, once after the
last step: ended streams are not reset first), `save(path)` / `load(path)` (`load` comes after
`start`), `info()` (a dict for the run's summary) and a `max_streams` attribute (default 1).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

OPTIONAL_METHODS = ("readouts", "finish", "save", "load", "info")


@runtime_checkable
class Agent(Protocol):
    """The two methods every agent has (the optional ones are looked up by name)."""

    def start(self, env: Any, streams: int) -> None: ...

    def act(
        self,
        observations: list[Any],
        rewards: list[float | None],
        terminated: list[bool],
        truncated: list[bool],
        infos: list[dict[str, Any]],
    ) -> list[Any]: ...


class AgentError(ValueError):
    """An agent that does not keep the interface (a missing method, a wrong number of actions);
    the message says what to fix."""


def missing_methods(agent: object) -> list[str]:
    """The required methods `agent` lacks ("start", "act")."""
    return [name for name in ("start", "act") if not callable(getattr(agent, name, None))]


def optional_method(agent: object, name: str) -> Any:
    """The agent's optional method `name`, or None when it has none."""
    method = getattr(agent, name, None)
    return method if callable(method) else None


def max_streams(agent: object) -> int:
    """How many sessions the agent can drive at once (its `max_streams`, default 1).

    Raises:
        AgentError: `max_streams` is not a whole number of at least 1.
    """
    value = getattr(agent, "max_streams", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentError(f"{type(agent).__name__}.max_streams must be a whole number of at least 1, got {value!r}")
    return value


def agent_info(agent: object) -> dict[str, Any]:
    """What the agent's `info()` says (empty without one).

    Raises:
        AgentError: `info()` returned something other than a dict.
    """
    method = optional_method(agent, "info")
    if method is None:
        return {}
    value = method()
    if not isinstance(value, dict):
        raise AgentError(f"{type(agent).__name__}.info() must return a dict, got {type(value).__name__}")
    return value
