"""The environment server's spec carries the episode step limit (`max_episode_steps`): from a
Gymnasium TimeLimit, the platform's robots (time_limit x control rate), DeepMind Control's time
limit and an environment's own `max_episode_steps`; unset in endless sessions and without one."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
from family_required import require_family
from gymnasium.wrappers import TimeLimit

from platform_envs.world_change_timeline import checked_timeline, with_timeline
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.spec import build_spec, max_episode_steps
from simulusion.env.v1 import environment_pb2 as env_pb
from test_envs_robots_base import SliderEnv


def limit_of(spec: env_pb.SpecResponse) -> int | None:
    """The limit a client reads (as RemoteEnv does), after a trip over the wire."""
    answer = env_pb.SpecResponse.FromString(spec.SerializeToString())
    return answer.max_episode_steps if answer.HasField("max_episode_steps") else None


class _OwnLimit(gym.Env[int, int]):
    """An environment counting its own steps, like the Atari adapter (inf: none)."""

    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, limit: Any) -> None:
        self.max_episode_steps = limit

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, False, False, {}


def test_a_gymnasium_time_limit() -> None:
    env, env_id = build_env(gym_id="CartPole-v1")
    assert limit_of(build_spec(env, env_id)) == 500
    env, env_id = build_env(gym_id="CartPole-v1", kwargs={"max_episode_steps": 40})
    assert limit_of(build_spec(env, env_id)) == 40
    assert limit_of(EnvInstance(gym.Wrapper(env), env_id).spec) == 40  # under another wrapper


def test_endless_sessions_and_environments_without_a_limit_leave_it_unset() -> None:
    env, env_id = build_env(gym_id="CartPole-v1", endless=True)
    assert limit_of(build_spec(env, env_id, endless=True)) is None
    assert limit_of(build_spec(_OwnLimit(None), "own")) is None
    assert limit_of(build_spec(gym.make("CartPole-v1", max_episode_steps=-1), "cartpole")) is None


def test_an_environments_own_limit_and_the_smallest_of_several() -> None:
    assert max_episode_steps(_OwnLimit(27_000)) == 27_000
    assert max_episode_steps(_OwnLimit(math.inf)) is None
    assert max_episode_steps(_OwnLimit(True)) is None
    assert max_episode_steps(TimeLimit(_OwnLimit(100), 30)) == 30
    assert max_episode_steps(TimeLimit(TimeLimit(_OwnLimit(100), 300), 200)) == 100


def test_the_platforms_robots_give_time_limit_times_control_rate() -> None:
    robot = SliderEnv(substeps=4, time_limit=0.1)  # 50 decisions a second
    assert robot.max_episode_steps == 5
    assert limit_of(build_spec(robot, "slider")) == 5
    timeline = checked_timeline(robot, [{"at": 3, "change": "mass", "body": "box", "scale": 2.0}], "slider")
    assert limit_of(build_spec(with_timeline(robot, timeline), "slider")) == 5
    assert limit_of(build_spec(SliderEnv(time_limit=None), "slider")) is None
    assert limit_of(build_spec(SliderEnv(time_limit=math.inf), "slider")) is None


def test_deepmind_control_gives_its_tasks_time_limit() -> None:
    require_family("dm_control", "dmc")
    from platform_envs.adapters import dmc

    env = dmc.make_env("cartpole", "balance")  # 10 s at 100 decisions a second
    assert env.max_episode_steps == 1000 and limit_of(build_spec(env, "dmc-cartpole-balance")) == 1000
    assert dmc.make_env("cartpole", "balance", time_limit=0.5).max_episode_steps == 50
    assert dmc.make_env("cartpole", "balance", time_limit=math.inf).max_episode_steps is None
