"""DeepMind Control Suite tasks as Gymnasium environments, in process (`adapters/dmc.py`)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from family_required import require_family

from platform_envs.adapters import dmc, dmc_state

suite = require_family("dm_control.suite", "dmc")  # after dmc, which sets MUJOCO_GL for dm_control

ALL_TASKS: list[tuple[str, str]] = list(suite.ALL_TASKS)
# Tasks whose episodes change their model (targets, terrain, gains) or whose model is random
SNAPSHOT_SAMPLE = [
    ("quadruped", "escape"),
    ("finger", "turn_hard"),
    ("point_mass", "hard"),
    ("lqr", "lqr_2_1"),
    ("manipulator", "insert_peg"),
    ("reacher", "hard"),
]


def _random_actions(env: dmc.DmControlEnv, count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(env.action_space.low, env.action_space.high) for _ in range(count)]


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Bit-identical observations."""
    return a.keys() == b.keys() and all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes() for k in a)


def _rollout(env: dmc.DmControlEnv, actions: list[np.ndarray]) -> list[tuple[Any, ...]]:
    result = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        result.append(({k: v.tobytes() for k, v in obs.items()}, reward, terminated, truncated, info))
    return result


@pytest.mark.parametrize(("domain", "task"), ALL_TASKS, ids=[f"{d}-{t}" for d, t in ALL_TASKS])
def test_every_suite_task_builds_resets_and_steps(domain: str, task: str) -> None:
    env = dmc.make_env(domain, task)
    try:
        assert env.spec is not None and env.spec.id == dmc.catalog_id(domain, task)
        assert isinstance(env.observation_space, gymnasium.spaces.Dict)
        assert all(
            space.dtype == np.float64 and space.shape for space in env.observation_space.spaces.values()
        )
        assert env.action_space.dtype == np.float64 and env.action_space.is_bounded()
        physics = env.physics
        assert env.metadata["control_rate"] == pytest.approx(
            1.0 / (physics.model.opt.timestep * env.metadata["substeps"])
        )
        assert len(env.metadata["action_names"]) == env.action_space.shape[0]

        obs, info = env.reset(seed=1)
        assert env.observation_space.contains(obs) and info == {}
        assert set(obs) == set(env.task.get_observation(physics))  # dm_control's own names
        time_before = physics.data.time
        actions = _random_actions(env, 3)
        first = _rollout(env, actions)
        for observation, reward, terminated, truncated, info in first:
            assert isinstance(reward, float) and np.isfinite(reward)
            assert terminated is False and truncated is False and info == {"discount": 1.0}
        assert physics.data.time == pytest.approx(time_before + 3 / env.metadata["control_rate"])
        again, _ = env.reset(seed=1)  # the same seed starts the same episode, whatever came before
        assert _same(again, obs)
        assert _rollout(env, actions) == first
    finally:
        env.close()


@pytest.mark.parametrize(
    ("domain", "task"), [("reacher", "hard"), ("point_mass", "hard"), ("quadruped", "escape")]
)
def test_a_seeded_reset_starts_as_suite_load_with_that_seed(domain: str, task: str) -> None:
    env = dmc.make_env(domain, task)
    reference = suite.load(domain, task, task_kwargs={"random": 3})
    try:
        expected = reference.reset().observation  # its RandomState seeded 3, as env.reset(seed=3)
        obs, _ = env.reset(seed=3)
        assert _same(obs, {k: np.asarray(v, np.float64).reshape(obs[k].shape) for k, v in expected.items()})
        other, _ = env.reset(seed=4)
        assert not _same(other, obs)  # the seed matters: these tasks start at random
    finally:
        env.close()
        reference.physics.free()


def test_lqr_draws_its_system_from_the_construction_seed() -> None:
    envs = [
        dmc.make_env("lqr", "lqr_2_1"),
        dmc.make_env("lqr", "lqr_2_1"),
        dmc.make_env("lqr", "lqr_2_1", random=9),
    ]
    try:
        stiffness = [env.physics.model.jnt_stiffness.copy() for env in envs]
        assert np.array_equal(stiffness[0], stiffness[1]) and not np.array_equal(stiffness[0], stiffness[2])
        actions = _random_actions(envs[0], 5)
        starts = [env.reset(seed=8)[0] for env in envs[:2]]
        assert _same(*starts)  # same seed, same start and trajectory in every instance
        assert _rollout(envs[0], actions) == _rollout(envs[1], actions)
    finally:
        for env in envs:
            env.close()


def test_the_random_kwarg_drives_unseeded_resets_and_no_seed_is_random() -> None:
    seeded = [dmc.make_env("reacher", "easy", random=5) for _ in range(2)]
    unseeded = [dmc.make_env("reacher", "easy") for _ in range(2)]
    try:
        a, b = (env.reset()[0] for env in seeded)
        assert _same(a, b)
        c, d = (env.reset()[0] for env in unseeded)  # seeded from the OS, as Gymnasium does
        assert not _same(c, d)
    finally:
        for env in seeded + unseeded:
            env.close()


def test_observation_labels_name_the_flat_observation_exactly() -> None:
    env = dmc.make_env("walker", "walk")
    try:
        obs, _ = env.reset(seed=0)
        flat = gymnasium.spaces.flatten(env.observation_space, obs)
        labels = env.get_observation_labels()
        assert [name for name, _, _ in labels] == ["height", "orientations", "velocity"]
        assert labels[0] == ("height", 0, 1)  # a scalar is shape (1,)
        assert env.observation_space["height"].shape == (1,)
        position = 0
        for name, start, stop in labels:  # contiguous, in order, covering everything
            assert start == position and stop > start
            assert np.array_equal(flat[start:stop], obs[name].ravel())
            position = stop
        assert position == flat.shape[0] == gymnasium.spaces.flatdim(env.observation_space)
    finally:
        env.close()


def test_substeps_set_the_control_rate_and_the_time_limit_stays_in_seconds() -> None:
    default = dmc.make_env("walker", "run")  # the task's own: 10 physics steps of 2.5 ms
    fine = dmc.make_env("walker", "run", substeps=2)
    try:
        assert default.metadata["substeps"] == 10 and default.metadata["control_rate"] == pytest.approx(40.0)
        assert fine.metadata["substeps"] == 2 and fine.metadata["control_rate"] == pytest.approx(200.0)
        assert fine.metadata["render_fps"] == 200 and fine.metadata["time_limit"] == pytest.approx(25.0)
        for env in (default, fine):
            env.reset(seed=0)
            env.step(np.zeros(env.action_space.shape))
        assert default.physics.data.time == pytest.approx(0.025)
        assert fine.physics.data.time == pytest.approx(0.005)
    finally:
        default.close()
        fine.close()


def test_the_time_limit_truncates_and_a_terminal_state_terminates() -> None:
    env = dmc.make_env("cartpole", "balance", time_limit=0.05)  # 5 decisions of 10 ms
    try:
        env.reset(seed=0)
        flags = [env.step(np.zeros(1))[2:4] for _ in range(5)]
        assert flags == [(False, False)] * 4 + [(False, True)]
        env.reset(seed=0)
        env.task.get_termination = lambda physics: 0.0  # a task that reached a terminal state
        _, _, terminated, truncated, info = env.step(np.zeros(1))
        assert (terminated, truncated, info) == (True, False, {"discount": 0.0})
    finally:
        env.close()
    unlimited = dmc.make_env("lqr", "lqr_2_1")
    assert unlimited.metadata["time_limit"] is None  # lqr runs until its state is near zero
    unlimited.close()


@pytest.mark.parametrize(("domain", "task"), SNAPSHOT_SAMPLE, ids=[f"{d}-{t}" for d, t in SNAPSHOT_SAMPLE])
def test_a_pickled_env_replays_bit_identically(domain: str, task: str) -> None:
    env = dmc.make_env(domain, task)
    try:
        env.reset(seed=4)
        actions = _random_actions(env, 30, seed=1)
        _rollout(env, actions[:10])
        env.render()  # render resources exist when it is pickled
        blob = pickle.dumps(env)
        assert len(blob) < 300_000  # model changes and state, not the 12 MB model
        frame = env.render()
        expected = _rollout(env, actions[10:])
        dmc_state.forget_built_models()  # the restore builds its model again (as in another process)
        restored = pickle.loads(blob)
        assert np.array_equal(restored.render(), frame)
        assert _rollout(restored, actions[10:]) == expected
        again = pickle.loads(blob)  # from the model remembered by the first pickling
        assert _rollout(again, actions[10:]) == expected
        blob2 = pickle.dumps(again)  # a restored env snapshots again
        assert _rollout(pickle.loads(blob2), _random_actions(env, 5)) == _rollout(
            again, _random_actions(env, 5)
        )
        restored.close()
        again.close()
    finally:
        env.close()


def test_a_snapshot_restores_in_another_process() -> None:
    env = dmc.make_env("quadruped", "escape")
    try:
        env.reset(seed=2)
        actions = _random_actions(env, 8)
        blob = pickle.dumps(env)
        expected = _rollout(env, actions)
    finally:
        env.close()
    code = (
        "import pickle, sys\n"
        "env = pickle.loads(sys.stdin.buffer.read())\n"
        "actions = pickle.loads(bytes.fromhex(sys.argv[1]))\n"
        "out = [env.step(a) for a in actions]\n"
        "sys.stdout.buffer.write(pickle.dumps([({k: v.tobytes() for k, v in o.items()}, r, t, u, i) for o, r, t, u, i in out]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, pickle.dumps(actions).hex()],
        input=blob,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert pickle.loads(result.stdout) == expected


def test_frames_fast_by_default_full_on_request() -> None:
    fast = dmc.make_env("cartpole", "swingup")
    full = dmc.make_env("cartpole", "swingup", render_quality="full")
    small = dmc.make_env("cartpole", "swingup", render_size=(120, 160), camera_id=-1)
    silent = dmc.make_env("cartpole", "swingup", render_mode=None)
    try:
        for env in (fast, full, small, silent):
            env.reset(seed=0)
        frame = fast.render()
        assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.std() > 5
        assert np.array_equal(frame, fast.render())  # deterministic
        full_frame = full.render()
        assert full_frame.shape == (240, 320, 3) and not np.array_equal(full_frame, frame)
        assert (frame[:40] == 0).all() and not (full_frame[:40] == 0).all()  # no skybox when fast
        assert small.render().shape == (120, 160, 3)
        assert silent.render() is None
    finally:
        for env in (fast, full, small, silent):
            env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"domain": "nope", "task": "x"}, "unknown DeepMind Control domain 'nope'; domains: acrobot"),
        (
            {"domain": "cartpole", "task": "fly"},
            "unknown task 'fly' of domain 'cartpole'; its tasks: balance",
        ),
        ({"domain": "cartpole", "task": "swingup", "substeps": 0}, "substeps must be an int >= 1"),
        ({"domain": "cartpole", "task": "swingup", "time_limit": -1}, "time_limit must be seconds > 0"),
        (
            {"domain": "cartpole", "task": "swingup", "camera_id": 7},
            r"camera_id must be -1 \(free\) or in \[0, 2\)",
        ),
        ({"domain": "cartpole", "task": "swingup", "camera_id": "nope"}, "no camera named 'nope'"),
        (
            {"domain": "cartpole", "task": "swingup", "render_mode": "human"},
            "render_mode must be 'rgb_array'",
        ),
        (
            {"domain": "cartpole", "task": "swingup", "render_quality": "best"},
            "render_quality must be one of",
        ),
        ({"domain": "cartpole", "task": "swingup", "random": "x"}, "random .* must be an int"),
        ({"domain": "cartpole", "task": "swingup", "flavour": 1}, "bad task kwargs"),
    ],
)
def test_bad_settings_raise_a_clear_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(dmc.DmControlError, match=message):
        dmc.make_env(**kwargs)


def test_dashes_read_as_underscores_and_a_closed_env_says_so() -> None:
    env = dmc.make_env("ball-in-cup", "catch")
    assert env.spec is not None and env.spec.id == "dmc-ball-in-cup-catch"
    env.close()
    env.close()  # idempotent
    with pytest.raises(dmc.DmControlError, match="ball_in_cup/catch: the environment is closed"):
        env.reset(seed=0)


def test_stepping_before_reset_is_an_error() -> None:
    env = dmc.make_env("pendulum", "swingup")
    try:
        with pytest.raises(dmc.DmControlError, match="call reset first"):
            env.step(np.zeros(1))
    finally:
        env.close()


def test_without_dm_control_the_error_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dm_control", None)  # `import dm_control` now raises ImportError
    with pytest.raises(dmc.DmControlError, match=r"pip install 'platform-envs\[dmc\]'"):
        dmc.make_env("cartpole", "swingup")


def test_gymnasium_check_env_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    env = dmc.make_env("finger", "turn_easy")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error")
            warnings.filterwarnings("ignore", message=".*infinity")  # dm_control observations are unbounded
            check_env(env, skip_render_check=False)
    finally:
        env.close()
