"""Frames of the Menagerie robot scenes (platform_envs.robots.fast_frames): every scene renders in
"fast" and "full" quality; fast frames look like the model's own drawing (simplified meshes, a
finite floor lined up with the infinite one); the block, green ball, bins and target show in
their colours where they are; rendering never changes the physics or the model; and the mesh
simplification keeps a mesh's shape."""

from __future__ import annotations

import colorsys
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_envs.adapters.mujoco_rendering import configure_scene
from platform_envs.robots import make_env
from platform_envs.robots.fast_frames import (
    FACE_BUDGET,
    FrameRenderer,
    cluster_mesh,
    drawing_model,
    simplified_meshes,
)
from platform_envs.robots.pick_place_scene import BALL_COLOR, BIN_COLOR, BLOCK_COLOR

ARMS = ("franka_emika_panda", "ufactory_xarm7")
HUMANOIDS = ("unitree_h1", "unitree_g1", "booster_t1")
SCENES = [(arm, task) for arm in ARMS for task in ("reach", "pick_place")] + [
    ("unitree_h1", "stand"),
    ("unitree_g1", "walk"),
    ("booster_t1", "stand"),
]
HEIGHT, WIDTH = 240, 320
# what drawing reads from a model: rendering must leave these as they are
_DRAWN_FIELDS = (
    "geom_size",
    "geom_rgba",
    "mesh_vert",
    "mesh_face",
    "mesh_facenum",
    "mesh_normal",
    "mesh_graphadr",
)


@pytest.fixture(autouse=True, scope="module")
def _robots_here() -> None:
    root = os.environ.get("MENAGERIE_ROOT")
    robots = ARMS + HUMANOIDS
    if not root or not all(Path(root, robot).is_dir() for robot in robots):
        pytest.fail(
            f"the frame tests need the Menagerie robots {', '.join(robots)}: set MENAGERIE_ROOT to a local "
            f"copy of Menagerie (now {root!r}; the repo's conftest.py uses ../shared/menagerie when it is there)"
        )


def _viewpoint(env: Any) -> Any:
    """A camera on the scene: the arms' default (fixed) camera, a free camera on a humanoid's torso."""
    import mujoco

    camera = mujoco.MjvCamera()
    if env.model.ncam:
        camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        camera.fixedcamid = 0
    else:
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        camera.lookat[:] = env.data.xpos[1]
        camera.distance, camera.azimuth, camera.elevation = 3.5, 135.0, -15.0
    return camera


def _frame(renderer: FrameRenderer, env: Any, camera: Any) -> np.ndarray:
    renderer.update_scene(env.data, camera=camera)
    return renderer.render().copy()


def _pixel_of(env: Any, point: np.ndarray, camera: int = 0) -> tuple[int, int]:
    """(row, column) where fixed camera `camera` sees world `point` in a HEIGHTxWIDTH frame."""
    position, axes = env.data.cam_xpos[camera], env.data.cam_xmat[camera].reshape(3, 3)
    x, y, z = axes.T @ (np.asarray(point) - position)  # the camera looks along its -z, y up
    focal = (HEIGHT / 2) / np.tan(np.radians(env.model.cam_fovy[camera]) / 2)
    return int(round(HEIGHT / 2 - focal * y / -z)), int(round(WIDTH / 2 + focal * x / -z))


def _hue_at(frame: np.ndarray, pixel: tuple[int, int]) -> tuple[float, float]:
    """(hue in degrees, saturation) of the median colour of the 3x3 pixels around `pixel`."""
    row, column = pixel
    patch = frame[row - 1 : row + 2, column - 1 : column + 2].reshape(-1, 3)
    red, green, blue = np.median(patch, axis=0) / 255.0
    hue, _, saturation = colorsys.rgb_to_hls(red, green, blue)
    return hue * 360.0, saturation


def _hue_distance(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _hue_of(rgba: tuple[float, ...]) -> float:
    return colorsys.rgb_to_hls(*rgba[:3])[0] * 360.0


@pytest.mark.parametrize(("robot", "task"), SCENES)
def test_fast_frames_of_every_scene_look_like_the_models_own_drawing(robot: str, task: str) -> None:
    import mujoco  # after platform_sdk has chosen the headless GL back-end

    env = make_env(robot, task)
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
    assert frame.std() > 10  # a picture, not a blank
    camera = _viewpoint(env)
    fast = FrameRenderer(env.model, HEIGHT, WIDTH, "fast")
    own = FrameRenderer(env.model, HEIGHT, WIDTH, "full")  # the model's meshes and infinite floor...
    configure_scene(own.scene, "fast")  # ...with fast quality's scene flags (no shadows)...
    own.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = 1  # ...but the sky, which fast frames keep
    try:
        simplified, unsimplified = _frame(fast, env, camera), _frame(own, env, camera)
    finally:
        fast.close()
        own.close()
        env.close()
    # the same picture but for mesh edges: a floor texture off by half a tile differs by about 7
    difference = np.abs(simplified.astype(np.int16) - unsimplified).mean()
    assert difference < 2.5, (
        f"{robot} {task}: fast frame differs from the model's drawing by {difference:.2f}"
    )


@pytest.mark.parametrize("quality", ["fast", "full"])
@pytest.mark.parametrize("robot", ARMS)
def test_pick_place_frames_show_the_block_ball_and_bins_in_their_colours(robot: str, quality: str) -> None:
    env = make_env(robot, "pick_place", render_quality=quality)
    env.reset(seed=0)
    frame = env.render()
    env.close()
    assert isinstance(frame, np.ndarray) and frame.shape == (HEIGHT, WIDTH, 3)
    model, data = env.model, env.data
    for name, rgba in (("block", BLOCK_COLOR), ("ball", BALL_COLOR), ("bin_0_floor", BIN_COLOR)):
        pixel = _pixel_of(env, data.geom_xpos[model.geom(name).id])
        assert 0 < pixel[0] < HEIGHT - 1 and 0 < pixel[1] < WIDTH - 1, (
            f"{name} is out of the default camera's view"
        )
        hue, saturation = _hue_at(frame, pixel)
        assert saturation > 0.3, (
            f"{robot} {quality}: the {name} at {pixel} is grey (saturation {saturation:.2f})"
        )
        assert _hue_distance(hue, _hue_of(rgba)) < 30, (
            f"{robot} {quality}: the {name} at {pixel} has hue {hue:.0f}"
        )


@pytest.mark.parametrize("quality", ["fast", "full"])
@pytest.mark.parametrize("robot", ARMS)
def test_reach_frames_show_the_red_target(robot: str, quality: str) -> None:
    env = make_env(robot, "reach", render_quality=quality)
    env.reset(seed=0)
    frame = env.render()
    env.close()
    assert isinstance(frame, np.ndarray)
    pixel = _pixel_of(env, env.data.geom_xpos[env.model.geom("target").id])
    hue, saturation = _hue_at(frame, pixel)
    assert saturation > 0.3 and _hue_distance(hue, 0.0) < 30, (
        f"{robot} {quality}: the target at {pixel} has hue {hue:.0f}, saturation {saturation:.2f}"
    )


@pytest.mark.parametrize(("robot", "task"), [("franka_emika_panda", "pick_place"), ("unitree_g1", "walk")])
def test_rendering_never_changes_the_physics_or_the_model(robot: str, task: str) -> None:
    def trajectory(render_quality: str, render: bool) -> tuple[list[np.ndarray], list[float]]:
        env = make_env(robot, task, render_quality=render_quality)
        observation, _ = env.reset(seed=3)
        env.action_space.seed(3)
        model_before = {name: np.array(getattr(env.model, name)) for name in _DRAWN_FIELDS}
        observations, rewards = [observation], []
        for _ in range(15):
            if render:
                env.render()
            observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            observations.append(observation)
            rewards.append(reward)
            if terminated or truncated:
                break
        for name, before in model_before.items():
            assert np.array_equal(getattr(env.model, name), before), f"rendering changed model.{name}"
        env.close()
        return observations, rewards

    unrendered = trajectory("fast", render=False)
    for quality in ("fast", "full"):
        rendered = trajectory(quality, render=True)
        assert len(rendered[0]) == len(unrendered[0])
        assert all(np.array_equal(a, b) for a, b in zip(rendered[0], unrendered[0], strict=True)), quality
        assert rendered[1] == unrendered[1], quality


def test_simplified_meshes_keep_near_the_budget_and_leave_the_model_alone() -> None:
    env = make_env("unitree_g1", "stand")
    model = env.model
    before = {name: np.array(getattr(model, name)) for name in _DRAWN_FIELDS}
    edits = simplified_meshes(model)
    drawing = drawing_model(model, "fast")
    assert drawing_model(model, "full") is model
    for name, value in before.items():
        assert np.array_equal(getattr(model, name), value), f"simplifying changed model.{name}"
    assert edits and simplified_meshes(model) is edits  # cached by content
    drawn = {
        int(mesh)
        for mesh, group in zip(model.geom_dataid, model.geom_group, strict=True)
        if group < 3 and mesh >= 0
    }
    faces = sum(int(drawing.mesh_facenum[mesh]) for mesh in drawn)
    assert faces < 2 * FACE_BUDGET < sum(int(model.mesh_facenum[mesh]) for mesh in drawn)
    floor = model.geom("floor").id
    assert (model.geom_size[floor, :2] == 0).all() and (drawing.geom_size[floor, :2] > 50).all()
    env.close()


def test_cluster_mesh_simplifies_a_sphere_keeping_its_shape() -> None:
    vertices, faces = _uv_sphere(120, 60)  # 14k triangles, unit radius
    cell = 0.15
    kept, normals, tris = cluster_mesh(vertices, faces, cell)
    assert 100 < len(tris) < len(faces) / 10
    assert tris.min() == 0 and tris.max() == len(kept) - 1  # every vertex used, every index valid
    assert (
        (tris[:, 0] != tris[:, 1]).all()
        and (tris[:, 1] != tris[:, 2]).all()
        and (tris[:, 0] != tris[:, 2]).all()
    )
    radius = np.linalg.norm(kept, axis=1)
    assert np.abs(radius - 1.0).max() < cell
    assert np.allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-5)
    assert (np.sum(normals * kept, axis=1) > 0).all()  # normals point out
    corners = kept[tris].astype(np.float64)
    facing = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    assert (np.sum(facing * corners.mean(axis=1), axis=1) > 0).mean() > 0.97  # the winding kept


def _uv_sphere(slices: int, stacks: int) -> tuple[np.ndarray, np.ndarray]:
    """A unit sphere's vertices and outward-wound triangles."""
    theta = np.linspace(0, np.pi, stacks + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, slices, endpoint=False)
    ring = np.stack(
        [
            np.outer(np.sin(theta), np.cos(phi)),
            np.outer(np.sin(theta), np.sin(phi)),
            np.outer(np.cos(theta), np.ones(slices)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    vertices = np.concatenate([[[0.0, 0.0, 1.0]], ring, [[0.0, 0.0, -1.0]]])
    south = len(vertices) - 1
    faces = []
    for j in range(slices):
        k = (j + 1) % slices
        faces.append((0, 1 + j, 1 + k))
        for i in range(stacks - 2):
            a, b = 1 + i * slices + j, 1 + i * slices + k
            c, d = a + slices, b + slices
            faces += [(a, c, d), (a, d, b)]
        last = 1 + (stacks - 2) * slices
        faces.append((south, last + k, last + j))
    return vertices, np.array(faces)
