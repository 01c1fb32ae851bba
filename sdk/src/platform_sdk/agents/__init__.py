"""Agents: your code, playing the platform's environments (docs/agents.md).

The interface is in `platform_sdk.agents.interface` (`start(env, streams)` and
`act(observations, rewards, terminated, truncated, infos)`, each argument a list with one
entry per stream, plus optional `readouts`, `finish`, `save`/`load`, `info` and
`max_streams`). `platform_sdk.agents.loop.run_episodes` drives an agent from your own code,
`python -m platform_sdk.agents.run` from the command line, `python -m
platform_sdk.agents.compare` branches several agents from one moment, and
`platform_sdk.agents.builtin` has `RandomAgent` and `ScriptedAgent`. For agents that want them:
schedules (`ConstantSchedule`, `LinearSchedule`, `PiecewiseSchedule`, `ExponentialSchedule`) and a
running observation normalizer (`RunningNormalizer`).
"""

from __future__ import annotations

from platform_sdk.agents.builtin import RandomAgent, ScriptedAgent
from platform_sdk.agents.interface import Agent, AgentError
from platform_sdk.agents.loading import AgentLoadError, load_agent, load_factory
from platform_sdk.agents.loop import AgentLoop, EpisodeRecord, run_episodes
from platform_sdk.agents.normalizer import RunningNormalizer
from platform_sdk.agents.schedules import ConstantSchedule, ExponentialSchedule, LinearSchedule, PiecewiseSchedule

__all__ = [
    "Agent",
    "AgentError",
    "AgentLoadError",
    "AgentLoop",
    "ConstantSchedule",
    "EpisodeRecord",
    "ExponentialSchedule",
    "LinearSchedule",
    "PiecewiseSchedule",
    "RandomAgent",
    "RunningNormalizer",
    "ScriptedAgent",
    "load_agent",
    "load_factory",
    "run_episodes",
]
