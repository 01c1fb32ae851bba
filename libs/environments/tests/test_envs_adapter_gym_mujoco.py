"""Gymnasium's MuJoCo tasks in process (`platform_envs.adapters.gym_mujoco`, `mujoco_rendering`)."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import tomllib
from typing import Any

import gymnasium
import numpy as np
import pytest
from family_required import require_family
from builtin_catalog import builtin_catalog_file
from gymnasium.utils.env_checker import check_env
from platform_envs.adapters import mujoco_rendering
from platform_envs.adapters.gym_mujoco import INSTALL_COMMAND, TASKS, make_env, task_name
from platform_envs.adapters.mujoco_rendering import MujocoError, select_gl_backend
from platform_sdk.server import snapshots

mujoco = require_family("mujoco", "mujoco")

TOML = builtin_catalog_file("gymnasium_mujoco.toml")
CATALOG_IDS = {
    "ant": "Ant",
    "halfcheetah": "HalfCheetah",
    "hopper": "Hopper",
    "humanoid": "Humanoid",
    "humanoidstandup": "HumanoidStandup",
    "inverted-double-pendulum": "InvertedDoublePendulum",
    "inverted-pendulum": "InvertedPendulum",
    "pusher": "Pusher",
    "reacher": "Reacher",
    "swimmer": "Swimmer",
    "walker2d": "Walker2d",
}
FAST_OFF = (
    mujoco.mjtRndFlag.mjRND_SHADOW,
    mujoco.mjtRndFlag.mjRND_REFLECTION,
    mujoco.mjtRndFlag.mjRND_SKYBOX,
)


def _actions(env: gymnasium.Env, count: int, seed: int = 0) -> list[np.ndarray]:
    space = env.action_space
    rng = np.random.default_rng(seed)
    return [rng.uniform(space.low, space.high).astype(space.dtype) for _ in range(count)]


def _steps(env: gymnasium.Env, actions: list[np.ndarray], render: bool = False) -> list[tuple[Any, ...]]:
    """Step through `actions`, resetting without a seed (from env.np_random) at episode ends."""
    result: list[tuple[Any, ...]] = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        frame = env.render().tobytes() if render else b""
        result.append((obs.tobytes(), reward, terminated, truncated, frame))
        if terminated or truncated:
            obs, _ = env.reset()
            result.append((obs.tobytes(),))
    return result


def test_catalog_entries_name_every_task() -> None:
    entries = tomllib.loads(TOML.read_text())["envs"]
    assert {key: entry["kwargs"]["task"] for key, entry in entries.items()} == CATALOG_IDS
    assert {entry["factory"] for entry in entries.values()} == {"platform_envs.adapters.gym_mujoco:make_env"}
    assert sorted(CATALOG_IDS.values()) == sorted(TASKS)
    for key, task in CATALOG_IDS.items():
        assert task_name(key) == task_name(task.lower()) == task_name(f"{task}-v5") == task


def test_bad_arguments_raise_mujoco_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MujocoError, match="unknown Gymnasium MuJoCo task 'Cheetah'.*HalfCheetah"):
        make_env("Cheetah")
    with pytest.raises(MujocoError, match="render_quality must be one of fast, full"):
        make_env(render_quality="best")
    with pytest.raises(MujocoError, match="frame_skip must be a positive integer"):
        make_env(frame_skip=0)
    with pytest.raises(MujocoError, match="render_size=\\(height, width\\)"):
        make_env(width=64)
    with pytest.raises(MujocoError, match="render_size must be \\(height, width\\)"):
        make_env(render_size=(240,))
    monkeypatch.setitem(sys.modules, "mujoco", None)  # as if MuJoCo were not installed
    with pytest.raises(MujocoError, match=re.escape(f"need MuJoCo: {INSTALL_COMMAND}")):
        make_env("Hopper")


def test_metadata_and_frame_skip_set_the_control_rate() -> None:
    env = make_env("HalfCheetah", render_mode=None)
    base = env.unwrapped
    assert base.model.opt.timestep == 0.01 and base.frame_skip == 5
    assert env.metadata["control_rate"] == pytest.approx(20.0) == 1.0 / base.dt
    assert env.metadata["render_fps"] == 20 and env.metadata["frame_skip"] == 5
    assert env.metadata["action_names"] == ["bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"]
    assert env.metadata["render_size"] == [240, 320] and env.metadata["render_quality"] == "fast"
    assert "human" not in env.metadata["render_modes"]  # headless: no window to open
    slower = make_env("HalfCheetah", frame_skip=10, render_mode=None)
    assert slower.unwrapped.frame_skip == 10
    assert slower.metadata["control_rate"] == pytest.approx(10.0) and slower.metadata["render_fps"] == 10
    # the step really covers 10 physics steps: twice the simulated time of the default
    env.reset(seed=0)
    slower.reset(seed=0)
    env.step(np.zeros(6, np.float32))
    slower.step(np.zeros(6, np.float32))
    assert slower.unwrapped.data.time == pytest.approx(2 * env.unwrapped.data.time) == pytest.approx(0.1)
    # unnamed actuators are named after the joints they drive
    assert make_env("Hopper", render_mode=None).metadata["action_names"] == [
        "thigh_joint",
        "leg_joint",
        "foot_joint",
    ]
    assert make_env("Humanoid", frame_skip=2, render_mode=None).metadata["control_rate"] == pytest.approx(
        1 / 0.006
    )


def test_fast_and_full_quality_render_the_same_physics() -> None:
    fast, full = make_env("Ant"), make_env("Ant", render_quality="full", render_size=(96, 128))
    actions = _actions(fast, 8)
    frames = {}
    for quality, env in (("fast", fast), ("full", full)):
        env.reset(seed=3)
        trajectory = [step[:4] for step in _steps(env, actions)]
        frames[quality] = env.render()
        frames[quality + "-trajectory"] = trajectory
    # "fast" changes only what rendering uses: the physics are the same bit for bit
    assert frames["fast-trajectory"] == frames["full-trajectory"]
    assert frames["fast"].shape == (240, 320, 3) and frames["full"].shape == (96, 128, 3)
    for frame in (frames["fast"], frames["full"]):
        assert frame.dtype == np.uint8 and frame.std() > 10  # not blank
    fast_viewer, full_viewer = fast.unwrapped.mujoco_renderer.viewer, full.unwrapped.mujoco_renderer.viewer
    assert all(fast_viewer.scn.flags[flag] == 0 for flag in FAST_OFF)
    assert all(full_viewer.scn.flags[flag] == 1 for flag in FAST_OFF)
    assert (
        fast.unwrapped.model.vis.quality.offsamples == 0 and full.unwrapped.model.vis.quality.offsamples == 4
    )
    fast.close()
    full.close()


def test_restore_replays_steps_resets_and_frames_bit_for_bit() -> None:
    env = make_env("InvertedPendulum")  # falls within a few random steps: resets from np_random
    obs, info = env.reset(seed=5)
    env.render()  # the viewer (and its free camera) exist when the snapshot is taken
    actions = _actions(env, 25, seed=1)
    _steps(env, actions[:3])
    snapshot = snapshots.capture(env, obs, info)
    first = _steps(env, actions, render=True)
    assert any(len(step) == 1 for step in first)  # an episode ended and reset from the env's RNG
    restored, _, _ = snapshots.restore(snapshot)
    assert restored.unwrapped.mujoco_renderer.viewer is None  # left out, re-created on render
    assert _steps(restored, actions, render=True) == first
    env.close()
    restored.close()


def test_renderers_are_left_out_of_snapshots() -> None:
    env = make_env("Reacher")
    env.reset(seed=0)
    env.render()
    base = env.unwrapped
    viewer = base.mujoco_renderer.viewer
    assert snapshots.is_render_resource(viewer)
    assert snapshots.is_render_resource(viewer.con) and snapshots.is_render_resource(viewer.opengl_context)
    assert not snapshots.is_render_resource(base.mujoco_renderer.renderer)  # kept: holds the camera config
    renderer = object.__new__(mujoco.Renderer)  # its type is what counts (no GL context needed)
    renderer._mjr_context = renderer._gl_context = None  # what its close() frees
    assert snapshots.is_render_resource(renderer)
    base.extra_renderer = renderer  # an env holding MuJoCo's own renderer still snapshots
    restored, _, _ = snapshots.restore(snapshots.capture(env))
    assert restored.unwrapped.extra_renderer is None
    assert np.array_equal(restored.render(), env.render())
    env.close()
    restored.close()


def test_closing_one_env_leaves_another_env_rendering() -> None:
    first, second = make_env("Swimmer"), make_env("Swimmer")
    first.reset(seed=0)
    second.reset(seed=0)
    before = second.render()
    assert np.array_equal(first.render(), before)  # two GL contexts, rendered in turn
    first.close()
    del first
    gc.collect()
    after = second.render()
    assert np.array_equal(after, before) and after.std() > 10
    second.close()


def test_gl_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert select_gl_backend() == "osmesa"  # a user's choice is kept
    monkeypatch.delenv("MUJOCO_GL")
    expected = "egl" if mujoco_rendering.egl_works() else "osmesa"
    assert select_gl_backend() == expected == os.environ["MUJOCO_GL"]
    # in a fresh process: chosen before, and without, importing MuJoCo
    code = (
        "import sys; from platform_envs.adapters.gym_mujoco import make_env; "
        "from platform_envs.adapters.mujoco_rendering import select_gl_backend; "
        "print(select_gl_backend(), 'mujoco' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == [expected, "False"], out.stderr


def test_render_is_fast_by_default() -> None:
    """Loose bound (the CI machine is shared): ~2-5 ms a 240x320 frame on 2 CPU cores."""
    import time

    env = make_env("HalfCheetah")
    env.reset(seed=0)
    env.render()
    start = time.perf_counter()
    for _ in range(10):
        env.render()
    assert (time.perf_counter() - start) / 10 < 0.025
    env.close()


@pytest.mark.filterwarnings("ignore:.*infinity:UserWarning")  # Gymnasium's own unbounded observations
def test_gymnasium_env_checker_passes_render_modes_included() -> None:
    env = make_env("Hopper")
    check_env(env, skip_render_check=False)
    env.close()
