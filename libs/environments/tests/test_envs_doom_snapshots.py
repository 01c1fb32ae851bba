"""Doom seeding and snapshots: the same seed and actions replay exactly, and a pickled
environment (what the environment server's snapshots are) restores by replaying its episode,
then plays on exactly as the uninterrupted one, screens included."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from doom_required import require_vizdoom
from platform_envs.doom import DoomEnv, make_env
from platform_sdk.server import snapshots
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

require_vizdoom()

SCENARIOS = ["basic", "defend_the_center", "health_gathering", "deathmatch", "freedoom-e1m1"]
Step = tuple[dict[str, bytes], float, bool, bool, dict[str, Any], bytes]


def _actions(env: DoomEnv, count: int, seed: int, avoid: tuple[int, ...] = ()) -> list[int]:
    allowed = [a for a in range(int(env.action_space.n)) if a not in avoid]
    return [int(a) for a in np.random.default_rng(seed).choice(allowed, size=count)]


def _steps(env: DoomEnv, actions: list[int]) -> list[Step]:
    """Step through `actions` (observations and frames as bytes), stopping at an episode's end."""
    result = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        frame = env.render()
        assert frame is not None
        result.append(({k: v.tobytes() for k, v in obs.items()}, reward, terminated, truncated, info, frame.tobytes()))
        if terminated or truncated:
            break
    return result


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_same_seed_and_actions_replay_exactly(scenario: str) -> None:
    first, second = make_env(scenario, action_set="full"), make_env(scenario, action_set="full")
    actions = _actions(first, 60, seed=1)
    first.reset(seed=3)
    first.step(0)
    first.reset(seed=9)  # an episode abandoned first: what the game did before does not matter
    _steps(first, actions[:30])
    obs_a, info_a = first.reset(seed=7)
    obs_b, info_b = second.reset(seed=7)
    assert all(np.array_equal(obs_a[k], obs_b[k]) for k in obs_a) and info_a == info_b
    assert _steps(first, actions) == _steps(second, actions)
    first.close()
    second.close()


def test_different_seeds_play_differently() -> None:
    env = make_env("deathmatch")
    actions = _actions(env, 40, seed=2)
    env.reset(seed=1)
    one = _steps(env, actions)
    env.reset(seed=2)
    assert _steps(env, actions) != one
    env.close()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_snapshot_restores_mid_episode_and_plays_on_exactly(scenario: str) -> None:
    env = make_env(scenario, depth=True, variables=["POSITION_X", "POSITION_Y", "ANGLE"])
    attack = tuple(i for i, name in enumerate(env.metadata["action_names"]) if name == "ATTACK")
    before = _actions(env, 25, seed=5, avoid=attack if scenario == "basic" else ())  # basic: no kill yet
    after = _actions(env, 40, seed=6)
    env.reset(seed=11)
    assert len(_steps(env, before)) == len(before)
    snapshot = snapshots.capture(env)
    expected = _steps(env, after)
    for _ in range(2):
        restored, _, _ = snapshots.restore(snapshot)
        assert isinstance(restored, DoomEnv)
        assert restored.last_restore_seconds is not None and 0 < restored.last_restore_seconds < 5
        assert _steps(restored, after) == expected
        restored.close()
    env.close()


def test_labels_restore_too() -> None:
    env = make_env("defend_the_center", labels=True, depth=True)
    env.reset(seed=2)
    _steps(env, _actions(env, 20, seed=3))
    data = pickle.dumps(env)
    after = _actions(env, 30, seed=4)
    expected = _steps(env, after)
    assert any(info["labels"] for *_, info, _ in expected)
    restored = pickle.loads(data)
    assert _steps(restored, after) == expected
    restored.close()
    env.close()


def test_a_snapshot_at_an_episodes_end_restores_that_end() -> None:
    env = make_env("basic", max_episode_steps=6)
    env.reset(seed=0)
    last = _steps(env, [1, 1, 2, 1, 2, 1])[-1]
    assert last[3] and last[4]["outcome"] == "timeout"
    restored = pickle.loads(pickle.dumps(env))
    frame = restored.render()
    assert frame is not None and frame.tobytes() == last[5]
    with pytest.raises(ValueError, match="reset first"):
        restored.step(0)
    obs, _ = restored.reset(seed=0)
    other = make_env("basic")
    assert obs["screen"].tobytes() == other.reset(seed=0)[0]["screen"].tobytes()
    other.close()
    restored.close()
    env.close()


def test_a_snapshot_before_any_reset_or_after_close_restores_as_such() -> None:
    made = make_env("basic")
    fresh = pickle.loads(pickle.dumps(made))
    made.close()
    assert fresh.last_restore_seconds is not None
    with pytest.raises(ValueError, match="reset first"):
        fresh.step(0)
    fresh.reset(seed=0)
    fresh.close()
    closed = make_env("basic")
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.loads(pickle.dumps(closed)).reset()


def test_a_snapshot_is_small_and_restoring_is_a_replay() -> None:
    env = make_env("health_gathering")
    env.reset(seed=0)
    _steps(env, [3] * 5)  # forward
    short = pickle.dumps(env)
    _steps(env, [1, 3, 2, 3] * 20)
    long = pickle.dumps(env)
    assert len(short) < 5_000 and len(long) < len(short) + 2_000  # the seed and the actions
    env.close()


def test_the_environment_servers_restore_says_how_long_the_replay_took() -> None:
    env, env_id = build_env(factory="platform_envs.doom:make_env", kwargs={"scenario": "basic", "max_episode_steps": 1000})
    instance = EnvInstance(env, env_id)
    assert not instance.handle(env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=3))).HasField("error")
    noop = env_pb.StepRequest(action=pb.Value(discrete=0))  # basic's NOOP: no kill, the episode goes on
    for steps in (10, 190):  # 10 steps, then 200
        for _ in range(steps):
            stepped = instance.handle(env_pb.EnvRequest(id=2, step=noop))
            assert not stepped.HasField("error") and not stepped.step.terminated and not stepped.step.truncated
        handle = instance.handle(env_pb.EnvRequest(id=3, snapshot=env_pb.SnapshotRequest())).snapshot.handle
        restored = instance.handle(env_pb.EnvRequest(id=4, restore=env_pb.RestoreRequest(handle=handle))).restore
        replay = instance.env.unwrapped.last_restore_seconds  # the restored environment's own replay
        assert restored.HasField("seconds") and 0 < replay <= restored.seconds < 10
    instance.close()
