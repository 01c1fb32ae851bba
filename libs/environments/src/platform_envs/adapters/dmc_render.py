"""Offscreen frames of a dm_control `Physics`: fast by default, the model's own look as a setting.

"fast" (the default) turns off what costs most on a CPU (Mesa's llvmpipe) and changes no
physics: no multisampling, an offscreen buffer of exactly the frame size, no shadows,
reflections or skybox (the background is black), spheres and capsules drawn with 16 slices
and 8 stacks instead of 28 and 16, and floor planes drawn as a coarse grid (a plane's third
size is only the spacing of the quads it is drawn with, for lighting). "full" keeps the
model's visual settings.

Measured on a shared 2-core CPU-only machine (EGL on Mesa llvmpipe), one 240x320 frame, best
of 5x10: 0.6-2 ms for most domains (cartpole 0.7-0.9, humanoid 2.0-2.2, humanoid_CMU 2.7-3.7),
dog 6-7 ms (its 34k-triangle skin), quadruped escape 10-13 ms (its height field); 17-73 ms at
full quality.

A `FrameRenderer` holds the camera (and through the physics, the GL context): render
resources, which are never pickled; a restored environment makes new ones at its first frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RENDER_QUALITIES: tuple[str, ...] = ("fast", "full")
# The grid spacing (m) floor planes are drawn with in "fast" quality (dm_control's floors use
# 0.1-0.2 m: many small quads, each lit per vertex, on every frame).
FAST_PLANE_SPACING = 2.0
FAST_SLICES, FAST_STACKS = 16, 8
_FAST_FLAGS = {"shadow": False, "reflection": False, "skybox": False}
_PLANE = 0  # mujoco.mjtGeom.mjGEOM_PLANE


def prepare_model(model: Any, quality: str, height: int, width: int) -> None:
    """Set `model`'s visual settings for `quality` before its first render context is made.

    Args:
        model: a dm_control `MjModel` (the physics' `model`).
        quality: "fast" or "full".
        height: frame height in pixels.
        width: frame width in pixels.
    """
    global_ = model.vis.global_
    if quality == "fast":
        visual_quality = model.vis.quality
        visual_quality.offsamples = 0
        visual_quality.numslices, visual_quality.numstacks = FAST_SLICES, FAST_STACKS
        global_.offwidth, global_.offheight = width, height
        sizes = model.geom_size
        for geom in np.flatnonzero(model.geom_type == _PLANE):
            if 0 < sizes[geom, 2] < FAST_PLANE_SPACING:
                sizes[geom, 2] = FAST_PLANE_SPACING
    else:
        global_.offwidth = max(int(global_.offwidth), width)
        global_.offheight = max(int(global_.offheight), height)


class FrameRenderer:
    """Renders RGB frames of one physics from one camera.

    Args:
        height: frame height in pixels.
        width: frame width in pixels.
        camera_id: a camera index or name; -1 is the free camera. A model with no camera
            renders from the free camera when `camera_id` is 0.
        quality: "fast" or "full".
    """

    def __init__(self, height: int, width: int, camera_id: int | str, quality: str) -> None:
        self.height = height
        self.width = width
        self.camera_id = camera_id
        self.quality = quality
        self._flags = dict(_FAST_FLAGS) if quality == "fast" else None
        self._camera: Any = None
        self._physics: Any = None

    def render(self, physics: Any) -> np.ndarray:
        """The current frame of `physics`: uint8, shape (height, width, 3)."""
        if self._camera is None or self._physics is not physics:
            self.close()
            from dm_control.mujoco import engine

            camera_id = self.camera_id
            if camera_id == 0 and physics.model.ncam == 0:
                camera_id = -1
            self._camera = engine.Camera(physics, self.height, self.width, camera_id)
            self._physics = physics
        frame: np.ndarray = self._camera.render(render_flag_overrides=self._flags)
        return frame

    def close(self) -> None:
        """Free the camera's scene (the GL context belongs to the physics)."""
        if self._camera is not None:
            self._camera._scene.free()  # as Physics.render does after each frame
        self._camera = None
        self._physics = None
