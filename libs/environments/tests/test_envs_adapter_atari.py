"""The Atari adapter in process (`platform_envs.adapters.atari`): spaces, dynamics, snapshots."""

from __future__ import annotations

import sys
import tomllib
from typing import Any

import gymnasium
import numpy as np
import pytest
from family_required import require_family
from builtin_catalog import builtin_catalog_file
from gymnasium.utils.env_checker import check_env
from platform_envs.adapters import atari_emulator
from platform_envs.adapters.atari import AtariError, make_env
from platform_sdk.server import snapshots

ale_py = require_family("ale_py", "atari")
gymnasium.register_envs(ale_py)

ATARI_TOML = builtin_catalog_file("atari.toml")

Step = tuple[bytes, float, bool, bool, dict[str, Any], bytes]


def _steps(env: gymnasium.Env, actions: list[int]) -> list[Step]:
    """Step through `actions` (observation and frame as bytes), resetting from np_random at episode ends."""
    result = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        result.append((obs.tobytes(), reward, terminated, truncated, info, env.render().tobytes()))
        if terminated or truncated:
            obs, info = env.reset()
            result.append((obs.tobytes(), 0.0, False, False, info, env.render().tobytes()))
    return result


def _random_actions(n: int, count: int, seed: int = 0) -> list[int]:
    return [int(a) for a in np.random.default_rng(seed).integers(n, size=count)]


@pytest.mark.filterwarnings("ignore:.*not having a spec:UserWarning")  # check_env: made without gym.make
def test_spaces_metadata_and_render() -> None:
    env = make_env("pong")
    assert env.observation_space == gymnasium.spaces.Box(0, 255, (210, 160, 3), np.uint8)
    assert env.action_space == gymnasium.spaces.Discrete(6)
    assert env.metadata["action_names"] == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
    assert env.metadata["control_rate"] == env.metadata["render_fps"] == 15.0
    assert env.metadata["max_episode_steps"] == 27_000
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["lives"] == 0
    frame = env.render()
    assert frame.shape == (210, 160, 3) and frame.dtype == np.uint8 and np.array_equal(frame, obs)
    obs, reward, terminated, truncated, info = env.step(2)
    assert env.observation_space.contains(obs) and np.array_equal(env.render(), obs)
    # render() is the observation, so it says so: the server then renders no recorded frame.
    assert env.render_is_observation is True
    assert make_env("pong", render_mode=None).render_is_observation is False
    assert isinstance(reward, float) and (terminated, truncated) == (False, False)
    assert info["episode_frame_number"] > 0
    full = make_env("breakout", full_action_space=True)
    assert full.action_space.n == 18 and len(full.metadata["action_names"]) == 18
    assert make_env("breakout").metadata["action_names"] == ["NOOP", "FIRE", "RIGHT", "LEFT"]
    check_env(make_env("breakout"), skip_render_check=False)
    with pytest.warns(UserWarning, match="render\\(\\) without a render_mode"):
        assert make_env("pong", render_mode=None).render() is None
    env.close()
    with pytest.raises(AtariError, match="closed"):
        env.step(0)


def test_without_stickiness_it_is_alepy_v5_frame_for_frame() -> None:
    """With repeat_action_probability 0 both are deterministic: the same screens and rewards."""
    ours = make_env("pong", repeat_action_probability=0.0)
    theirs = gymnasium.make("ALE/Pong-v5", repeat_action_probability=0.0)
    obs, _ = ours.reset(seed=1)
    ref, _ = theirs.reset(seed=2)
    assert np.array_equal(obs, ref)
    for action in _random_actions(6, 250):
        obs, reward, terminated, _, _ = ours.step(action)
        ref, ref_reward, ref_terminated, _, _ = theirs.step(action)
        assert np.array_equal(obs, ref) and reward == ref_reward and terminated == ref_terminated
    # probability 1: the first action (NOOP after a reset) sticks for ever
    always = make_env("pong", repeat_action_probability=1.0)
    always.reset(seed=3)
    theirs.reset(seed=4)
    for action in _random_actions(6, 40, seed=5):
        assert np.array_equal(always.step(action)[0], theirs.step(0)[0])
    assert always.frames_repeated == always.frames_emulated == 160


def test_frameskip_sets_control_rate_time_limit_and_dynamics() -> None:
    two = make_env("breakout", frameskip=2, repeat_action_probability=0.0)
    four = make_env("breakout", frameskip=4, repeat_action_probability=0.0)
    assert two.metadata["control_rate"] == two.metadata["render_fps"] == 30.0
    assert two.max_episode_steps == 54_000 and make_env("breakout", frameskip=5).max_episode_steps == 21_600
    two.reset(seed=0)
    _, info = four.reset(seed=0)
    start = info["episode_frame_number"]
    for action in [1, 2, 2, 3, 0, 3, 1, 2]:  # two steps of 2 frames = one step of 4 frames
        two.step(action)
        obs2, *_ = two.step(action)
        obs4, _, _, _, info = four.step(action)
        assert np.array_equal(obs2, obs4)
        assert info["episode_frame_number"] - start == four.frames_emulated
    assert two.frames_emulated == four.frames_emulated == 32  # in 16 and 8 steps


def test_sticky_actions_match_alepy_v5_in_distribution() -> None:
    env = make_env("pong")
    env.reset(seed=7)
    for action in _random_actions(6, 1000, seed=8):
        if any(env.step(action)[2:4]):
            env.reset()
    rate = env.frames_repeated / env.frames_emulated
    # 4000 frames but where a game ended mid-step; the bound is ~4.4 standard deviations
    assert 3900 < env.frames_emulated <= 4000 and abs(rate - 0.25) < 0.03
    ours, theirs = make_env("pong"), gymnasium.make("ALE/Pong-v5")
    stats = {}
    for name, candidate in (("ours", ours), ("ale", theirs)):
        candidate.action_space.seed(0)
        episodes = [_random_episode(candidate, seed) for seed in (11, 12, 13)]
        stats[name] = np.mean(episodes, axis=0)
    # A random policy loses Pong about 21-0 (a return near -20.5) in ~800 steps.
    for ret, length in stats.values():
        assert -21.0 <= ret <= -18.0 and 600 < length < 1200, stats
    assert abs(stats["ours"][1] - stats["ale"][1]) < 0.2 * stats["ale"][1], stats


def _random_episode(env: gymnasium.Env, seed: int) -> tuple[float, int]:
    env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        total, steps, done = total + reward, steps + 1, terminated or truncated
    return total, steps


def test_same_seed_same_trajectory_other_seed_another() -> None:
    actions = _random_actions(6, 120, seed=1)
    first, second = make_env("pong"), make_env("pong")
    first.reset(seed=42)
    second.reset(seed=42)
    trajectory = _steps(first, actions)
    assert _steps(second, actions) == trajectory
    first.reset(seed=42)  # a seeded reset of a used environment starts over exactly
    assert _steps(first, actions) == trajectory
    first.reset(seed=43)
    assert _steps(first, actions) != trajectory


def test_snapshot_restore_replays_bit_for_bit_sticky_actions_and_time_limit_included() -> None:
    env = make_env("breakout", max_episode_steps=70)
    obs, info = env.reset(seed=5)
    _steps(env, [1] + _random_actions(4, 20, seed=2))
    assert snapshots.capture(env).size < 40_000  # its screen and emulator state are compressed
    snapshot = snapshots.capture(env, obs, info)
    actions = _random_actions(4, 100, seed=3)
    first = _steps(env, actions)
    assert sum(step[3] for step in first) == 1  # crossed the 70-step limit, then reset from np_random
    counters = (env.frames_emulated, env.frames_repeated)
    restored, *_ = snapshots.restore(snapshot)
    screen = restored.render()
    assert _steps(restored, actions) == first
    assert (restored.frames_emulated, restored.frames_repeated) == counters
    env.close()  # its emulator goes back to the pool; the next restore reuses it
    again, *_ = snapshots.restore(snapshot)
    assert np.array_equal(again.render(), screen)
    assert _steps(again, actions) == first


def test_the_sticking_previous_action_survives_a_restore() -> None:
    """With p = 0.9 the action before the snapshot (RIGHT) keeps moving the paddle after it."""
    env = make_env("pong", repeat_action_probability=0.9)
    env.reset(seed=0)
    _steps(env, [0] * 20 + [2] * 3)  # RIGHT moves the paddle up (not yet at the top)
    snapshot = snapshots.capture(env)
    first = _steps(env, [0] * 6)
    restored, *_ = snapshots.restore(snapshot)
    assert _steps(restored, [0] * 6) == first
    still = make_env("pong", repeat_action_probability=0.9)  # the same with NOOP before
    still.reset(seed=0)
    _steps(still, [0] * 23)
    assert [step[0] for step in _steps(still, [0] * 6)] != [step[0] for step in first]


def test_game_names_and_bad_settings() -> None:
    assert make_env("space-invaders").game == make_env("SpaceInvaders").game == "space_invaders"
    with pytest.raises(
        AtariError, match=r"unknown Atari game 'pongg': did you mean pong\b.*breakout"
    ) as caught:
        make_env("pongg")
    assert "ale_py.roms.get_all_rom_ids()" in str(caught.value) and isinstance(caught.value, ValueError)
    with pytest.raises(AtariError, match="unknown Atari game 'zzz': valid games include pong, breakout"):
        make_env("zzz")
    for kwargs, message in (
        ({"frameskip": 0}, "frameskip must be an int >= 1"),
        ({"repeat_action_probability": 1.5}, r"repeat_action_probability must be in \[0, 1\]"),
        ({"max_episode_steps": 0}, "max_episode_steps must be an int >= 1"),
        ({"render_mode": "human"}, "render_mode must be 'rgb_array' or None"),
        ({"mode": 99}, r"pong has no mode 99; its modes are \[0, 1\]"),
    ):
        with pytest.raises(AtariError, match=message):
            make_env("pong", **kwargs)
    env = make_env("pong")
    env.reset(seed=0)
    for action in (6, -1, 1.5, "x"):
        with pytest.raises(AtariError, match=r"pong: action .* is not in Discrete\(6\)"):
            env.step(action)


def test_missing_ale_py_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ale_py", None)  # what `import ale_py` does when it is absent
    with pytest.raises(AtariError, match=r"pip install 'platform-envs\[atari\]'"):
        make_env("pong")


def test_every_builtin_catalog_entry_builds_and_steps() -> None:
    entries = tomllib.loads(ATARI_TOML.read_text())["envs"]
    assert {"pong", "breakout"} <= set(entries)
    for env_id, entry in entries.items():
        assert entry["factory"] == "platform_envs.adapters.atari:make_env" and entry["description"], env_id
        env = make_env(**entry["kwargs"])
        obs, _ = env.reset(seed=0)
        assert env.step(0)[0].shape == obs.shape == (210, 160, 3), env_id
        env.close()
    assert set(atari_emulator.game_ids()) >= {entry["kwargs"]["game"] for entry in entries.values()}
