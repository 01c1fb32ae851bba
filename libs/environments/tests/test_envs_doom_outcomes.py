"""How Doom episodes end (`info["outcome"]`), each in a scripted episode, and the time limits:
the scenario's own, `max_episode_steps`, and none (the platform's endless sessions)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from doom_required import require_vizdoom
from platform_envs.doom import DoomEnv, make_env
from platform_sdk.server.factory import build_env
from platform_sdk.server.spec import max_episode_steps

require_vizdoom()

NOOP = 0


Chooser = Callable[[dict[str, Any], dict[str, Any]], int]


def _play(env: DoomEnv, choose: Chooser, limit: int = 2000) -> tuple[int, float, bool, bool, dict[str, Any]]:
    """Step with `choose(obs, info)` until the episode ends; (steps, return, terminated, truncated,
    info), and the last observation in `info["obs"]`."""
    obs, info = env.reset(seed=4)
    total = 0.0
    for steps in range(1, limit + 1):
        obs, reward, terminated, truncated, info = env.step(choose(obs, info))
        total += reward
        if terminated or truncated:
            return steps, total, terminated, truncated, {**info, "obs": obs}
    raise AssertionError(f"no end in {limit} steps")


def _noop(obs: dict[str, Any], info: dict[str, Any]) -> int:
    return NOOP


@pytest.mark.parametrize("scenario", ["defend_the_center", "health_gathering"])
def test_standing_still_until_dead_is_outcome_died(scenario: str) -> None:
    env = make_env(scenario)
    steps, _, terminated, truncated, info = _play(env, _noop)
    assert (terminated, truncated, info["outcome"]) == (True, False, "died")
    # the last observation is the last frame drawn, with the variables' final values
    assert info["obs"]["variables"][env.variable_names.index("HEALTH")] <= 0
    assert steps < env.max_episode_steps
    env.close()


def test_shooting_basics_monster_is_outcome_completed() -> None:
    env = make_env("basic", labels=True, variables=["POSITION_Y"])

    def aim(obs: dict[str, Any], info: dict[str, Any]) -> int:
        # strafe until the monster is straight ahead (facing +x, left is +y), then shoot
        monster = next(label for label in info["labels"] if label["name"] == "Cacodemon")
        offset = monster["object_position_y"] - float(obs["variables"][-1])
        return 1 if offset > 8 else 2 if offset < -8 else 3  # MOVE_LEFT, MOVE_RIGHT, ATTACK

    steps, total, terminated, truncated, info = _play(env, aim)
    assert (terminated, truncated, info["outcome"]) == (True, False, "completed")
    assert total > 0 and steps < 40  # +101 for the kill outweighs -1 a tic
    env.close()


def test_basics_own_time_limit_is_outcome_timeout() -> None:
    env = make_env("basic")
    assert env.max_episode_steps == 75  # its 300 tics at 4 a step, what the spec reports
    assert max_episode_steps(env) == 75
    steps, total, terminated, truncated, info = _play(env, _noop)
    assert (steps, terminated, truncated, info["outcome"]) == (75, False, True, "timeout")
    assert total == -300  # -1 a tic
    env.close()


def test_max_episode_steps_replaces_the_scenarios_limit() -> None:
    short = make_env("basic", max_episode_steps=5)
    steps, _, terminated, truncated, info = _play(short, _noop)
    assert (steps, terminated, truncated, info["outcome"]) == (5, False, True, "timeout")
    assert short.metadata["max_episode_steps"] == 5
    short.close()
    long = make_env("basic", max_episode_steps=100)
    steps, *_ = _play(long, _noop)
    assert steps == 100  # past basic's own 75
    long.close()


def test_an_ended_episode_needs_a_reset() -> None:
    env = make_env("basic", max_episode_steps=2)
    _play(env, _noop)
    with pytest.raises(ValueError, match="reset first"):
        env.step(NOOP)
    env.reset(seed=1)
    env.step(NOOP)
    env.close()


def test_endless_doom_has_no_time_limit() -> None:
    env, _ = build_env(factory="platform_envs.doom:make_env", kwargs={"scenario": "basic"}, endless=True)
    assert env.max_episode_steps == math.inf and env.metadata["max_episode_steps"] is None
    assert max_episode_steps(env) is None
    env.reset(seed=0)
    for _ in range(200):  # basic alone would time out after 75
        _, _, terminated, truncated, info = env.step(NOOP)
        assert not (terminated or truncated) and "outcome" not in info
    env.close()
