"""The agent loop: act, step (with the time spent deciding), count episodes, save snapshots."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """Anything with `act(observation) -> action`; an optional `reset()` is called at the start
    of every episode."""

    def act(self, observation: Any) -> Any: ...


@dataclass
class RunStats:
    """What a run has done so far (kept up to date step by step, so it is right after an error)."""

    steps: int = 0
    episodes: int = 0
    started: float = field(default_factory=time.monotonic)
    snapshots: list[str] = field(default_factory=list)

    @property
    def steps_per_s(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.steps / elapsed if elapsed > 0 else 0.0


def episode_ended(terminated: bool, truncated: bool, info: dict[str, Any]) -> bool:
    """True when the step ended an episode: terminated, truncated, or (auto-reset and endless
    sessions) the environment restarted in the same step (`final_obs` in the info)."""
    return bool(terminated or truncated or "final_obs" in info)


def run_agent(
    env: Any,
    agent: Any,
    observation: Any,
    *,
    episodes: int | None = None,
    steps: int | None = None,
    save_every: int | None = None,
    stats: RunStats | None = None,
    out: Callable[[str], None] = print,
    progress_every_s: float = 10.0,
) -> RunStats:
    """Steps `env` (an auto-resetting session) with `agent` from `observation`.

    Stops after `episodes` finished episodes or `steps` steps, whichever comes first (neither:
    runs until interrupted). Each step carries `agent={"compute_s": seconds in act}`.

    Args:
        env: a session opened with `auto_reset=True` (an ending step returns the next
            episode's first observation).
        agent: has `act(observation)`; `reset()` when it has one, before every episode.
        observation: the first observation (after a reset or a resume).
        save_every: save a snapshot every that many steps (label "step <n>"), printing its id.
        stats: updated in place as the run goes (pass one to read it after an exception).
        out: where the progress lines go: one per episode, one per saved snapshot, and one
            every `progress_every_s` seconds without either.
    """
    stats = stats if stats is not None else RunStats()
    reset_agent = getattr(agent, "reset", None)
    act = agent.act
    episode_steps, episode_return = 0, 0.0
    last_line = time.monotonic()
    if callable(reset_agent):
        reset_agent()
    while (episodes is None or stats.episodes < episodes) and (steps is None or stats.steps < steps):
        started = time.perf_counter()
        action = act(observation)
        compute_s = time.perf_counter() - started
        observation, reward, terminated, truncated, info = env.step(action, agent={"compute_s": compute_s})
        stats.steps += 1
        episode_steps += 1
        episode_return += float(reward)
        if episode_ended(terminated, truncated, info):
            stats.episodes += 1
            out(f"episode {stats.episodes}: {episode_steps} steps, return {episode_return:g}")
            last_line = time.monotonic()
            episode_steps, episode_return = 0, 0.0
            if callable(reset_agent):
                reset_agent()
        if save_every and stats.steps % save_every == 0:
            saved = env.save_snapshot(f"step {stats.steps}")
            stats.snapshots.append(saved["id"])
            out(f"snapshot {saved['id']} saved at step {stats.steps} (go on with --resume {saved['id']})")
            last_line = time.monotonic()
        if time.monotonic() - last_line >= progress_every_s:
            out(f"step {stats.steps}: {stats.episodes} episodes done, {stats.steps_per_s:.0f} steps/s")
            last_line = time.monotonic()
    return stats
