"""Agents that drive a platform session, and `python -m platform_sdk.agents.run`, the runner.

An agent is any object with `act(observation) -> action` and, optionally, `reset()` (called
at the start of every episode). `RandomAgent` samples the action space; `load_agent` turns
`"random"` or `"module:factory"` into a function that builds an agent for a session.
"""

from __future__ import annotations

from platform_sdk.agents.loading import AgentLoadError, load_agent
from platform_sdk.agents.loop import Agent, RunStats, run_agent
from platform_sdk.agents.random_agent import RandomAgent

__all__ = ["Agent", "AgentLoadError", "RandomAgent", "RunStats", "load_agent", "run_agent"]
