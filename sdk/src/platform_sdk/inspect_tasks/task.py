"""`platform_sdk/episodes`: N episodes of a platform environment, one sample each."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import mean, stderr

from platform_sdk.inspect_tasks.scorers import episode_return, episode_steps
from platform_sdk.inspect_tasks.settings import EpisodeSettings
from platform_sdk.inspect_tasks.solver import play_episode


def _mapping(value: Any, name: str) -> dict[str, Any]:
    """A task argument that is a mapping: as given, or as JSON text (`-T kwargs='{...}'`)."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise TypeError(f"{name}: expected a mapping (JSON object), got {value!r}")
    return value


def _changes(value: Any) -> list[Any] | None:
    """world_changes: a list of changes, or its JSON text."""
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, list):
        raise TypeError(f"world_changes: expected a list of changes (docs/world-changes.md), got {value!r}")
    return value


def episode_samples(env: str, episodes: int, seed: int) -> MemoryDataset:
    """One sample per episode, seeded seed, seed+1, ..."""
    if episodes < 1:
        raise ValueError(f"episodes={episodes}: it must be 1 or more")
    samples = [
        Sample(id=f"seed-{seed + i}", input=f"Play one episode of the environment '{env}' (seed {seed + i}).",
               metadata={"env": env, "seed": seed + i})
        for i in range(episodes)
    ]
    return MemoryDataset(samples, name=f"{env}-episodes")


@task
def episodes(
    env: str = "cartpole",
    episodes: int = 3,
    seed: int = 0,
    max_steps: int = 100,
    world_changes: list[Any] | str | None = None,
    kwargs: dict[str, Any] | str | None = None,
    url: str | None = None,
    frames: str = "auto",
    action_repeat: int = 1,
    invalid_tries: int = 3,
    history: int = 4,
) -> Task:
    """Episodes of a platform environment played by the model, scored on return, success and steps.

    Args:
        env: the catalog id (GET /v0/envs lists them).
        episodes: how many episodes (samples), seeded seed, seed+1, ...
        seed: the first episode's seed.
        max_steps: an episode is stopped after this many steps (a cap on model calls too).
        world_changes: the environment's timeline of changes (docs/world-changes.md), a list or JSON.
        kwargs: the environment's other arguments, a mapping or JSON.
        url: the platform; default PLATFORM_URL. The token is PLATFORM_TOKEN's (never an argument,
            so it is not in the log).
        frames: "auto" (frames for models whose provider takes images), "on" or "off".
        action_repeat: steps each chosen action is taken for.
        invalid_tries: answers per decision before the default action is taken.
        history: earlier decisions shown to the model with the current observation.
    """
    arguments = _mapping(kwargs, "kwargs")
    changes = _changes(world_changes)
    if changes:
        arguments["world_changes"] = changes
    settings = EpisodeSettings(env=env, kwargs=arguments, url=url, max_steps=int(max_steps), frames=frames,
                               action_repeat=int(action_repeat), invalid_tries=int(invalid_tries),
                               history=int(history))
    return Task(
        dataset=episode_samples(env, int(episodes), int(seed)),
        solver=play_episode(settings),
        scorer=[episode_return(), episode_steps()],
        # every score's metrics, the solver's success score among them (scorers.success_score)
        metrics=[mean(), stderr()],
        metadata={"env": env, "kwargs": arguments, "max_steps": settings.max_steps},
    )
