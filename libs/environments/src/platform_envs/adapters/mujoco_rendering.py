"""Headless MuJoCo rendering: the OpenGL back-end choice and a fast offscreen renderer.

MuJoCo picks its OpenGL back-end from `MUJOCO_GL` when it is imported, so
`select_gl_backend()` must run first: it keeps a user's `MUJOCO_GL`, else takes EGL when
libEGL can open a display (Mesa's software renderer on a CPU-only machine, the GPU where
one exists), else OSMesa. Importing this module imports no MuJoCo.

"fast" render quality (the default) turns off shadows, reflections, the skybox and
multisampling and draws ground planes coarsely; "full" keeps the model's own settings. A
240x320 frame of the 11 Gymnasium tasks took 0.7-4.9 ms "fast" and 3-99 ms "full" (median,
Mesa llvmpipe through EGL on 2 busy CPU cores).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import functools
import os
import weakref
from typing import Any

import numpy as np

from platform_envs.errors import EnvError

RENDER_QUALITIES: tuple[str, ...] = ("fast", "full")
_NATIVE_MODES = ("rgb_array", "depth_array", "rgbd_tuple")
_INSTALL_HINT = (
    "install Mesa's EGL or OSMesa libraries (as root: scripts/install_system_deps.sh, or "
    "apt-get install libegl1 libegl-mesa0 libgl1 libosmesa6)"
)
# EGL constants (EGL/eglext.h)
_EGL_PLATFORM_DEVICE_EXT = 0x313F
_MAX_EGL_DEVICES = 16
_CAMERA_FIELDS = (
    "type",
    "fixedcamid",
    "trackbodyid",
    "lookat",
    "distance",
    "azimuth",
    "elevation",
    "orthographic",
)
_QUALITY_MARK = "_platform_render_quality"  # set on each Gymnasium viewer once its scene is set


_open_renderers: weakref.WeakSet[HeadlessMujocoRenderer] = weakref.WeakSet()
_exit_hook_registered = False


class MujocoError(EnvError):
    """A MuJoCo adapter cannot build or render an environment; the message says how to fix it."""


def select_gl_backend() -> str:
    """Set `MUJOCO_GL` for headless rendering unless the user set it; returns the back-end.

    Call before MuJoCo is imported (MuJoCo reads `MUJOCO_GL` at import; Gymnasium's renderer
    reads it again whenever it opens a context).
    """
    chosen = os.environ.get("MUJOCO_GL", "").strip()
    if chosen:
        return chosen
    backend = "egl" if egl_works() else "osmesa"
    os.environ["MUJOCO_GL"] = backend
    return backend


@functools.cache
def egl_works() -> bool:
    """True when libEGL loads and initialises a display on some EGL device (GPU or software)."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("EGL") or "libEGL.so.1")
    except OSError:
        return False
    get_proc = lib.eglGetProcAddress
    get_proc.restype = ctypes.c_void_p
    get_proc.argtypes = [ctypes.c_char_p]
    query_address = get_proc(b"eglQueryDevicesEXT")
    display_address = get_proc(b"eglGetPlatformDisplayEXT")
    if not query_address or not display_address:
        return False
    query_devices = ctypes.CFUNCTYPE(
        ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)
    )(query_address)
    get_display = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p)(
        display_address
    )
    initialize = lib.eglInitialize
    initialize.restype = ctypes.c_uint
    initialize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    devices = (ctypes.c_void_p * _MAX_EGL_DEVICES)()
    count = ctypes.c_int(0)
    if not query_devices(_MAX_EGL_DEVICES, devices, ctypes.byref(count)):
        return False
    major, minor = ctypes.c_int(), ctypes.c_int()
    for device in devices[: count.value]:
        display = get_display(_EGL_PLATFORM_DEVICE_EXT, device, None)
        # left initialised: MuJoCo initialises the same display again (a no-op) when it renders
        if display and initialize(display, ctypes.byref(major), ctypes.byref(minor)):
            return True
    return False


def prepare_model(model: Any, quality: str, height: int, width: int) -> None:
    """Set `model`'s visual settings for `quality` before its first render context is made.

    "fast": no multisampling, an offscreen buffer of exactly the frame size, and ground planes
    drawn as 4x4 tiles instead of fine grids (a plane's third size is its rendering grid's
    spacing, which only finer shadows and lighting use: a 20x20 plane at 0.125 is 100k
    quads, most of a software-rendered frame's time). "full": as is. Only what rendering
    uses changes, never the physics.
    """
    import mujoco

    check_quality(quality)
    if quality == "fast":
        model.vis.quality.offsamples = 0
        model.vis.global_.offwidth = width
        model.vis.global_.offheight = height
        planes = model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE
        size = model.geom_size[planes]
        size[:, 2] = np.maximum(size[:, 2], size[:, :2].max(axis=1) / 2)
        model.geom_size[planes] = size


def configure_scene(scene: Any, quality: str) -> None:
    """Set a new `MjvScene`'s render flags for `quality` ("fast": no shadow, reflection, skybox)."""
    import mujoco

    check_quality(quality)
    if quality == "fast":
        for flag in (
            mujoco.mjtRndFlag.mjRND_SHADOW,
            mujoco.mjtRndFlag.mjRND_REFLECTION,
            mujoco.mjtRndFlag.mjRND_SKYBOX,
        ):
            scene.flags[flag] = 0


def check_quality(quality: str) -> None:
    if quality not in RENDER_QUALITIES:
        raise MujocoError(f"render_quality must be one of {', '.join(RENDER_QUALITIES)}, not {quality!r}")


class HeadlessMujocoRenderer:
    """Stands in for a Gymnasium `MujocoRenderer` (`env.unwrapped.mujoco_renderer`).

    It renders through the wrapped renderer's viewers, sets each new viewer's scene for the
    render quality, makes the viewer's GL context current before every frame (another
    viewer being freed releases the thread's context), and pickles without its viewers
    (they are re-created at the next render) but with their camera, so a restored
    environment renders the same frames as the original (Gymnasium aims a new viewer's
    free camera at the bodies where they are when it is made).

    Args:
        renderer: the environment's Gymnasium `MujocoRenderer`.
        quality: "fast" or "full".
    """

    def __init__(self, renderer: Any, quality: str) -> None:
        check_quality(quality)
        self.renderer = renderer
        self.quality = quality
        self.camera: dict[str, Any] | None = None  # the camera a new viewer starts with

    @property
    def viewer(self) -> Any:
        return self.renderer.viewer

    def render(self, render_mode: str | None) -> Any:
        if render_mode not in _NATIVE_MODES:
            return self.renderer.render(render_mode)  # "human": a window, as Gymnasium does it
        try:
            viewer = self.renderer._get_viewer(render_mode=render_mode)
        except Exception as exc:  # GL back-ends fail with many error types
            backend = os.environ.get("MUJOCO_GL", "")
            raise MujocoError(
                f"cannot open an offscreen OpenGL context with MUJOCO_GL={backend!r} "
                f"({type(exc).__name__}: {exc}): {_INSTALL_HINT}"
            ) from exc
        if getattr(viewer, _QUALITY_MARK, None) != self.quality:
            configure_scene(viewer.scn, self.quality)
            if self.camera is not None:
                set_camera(viewer.cam, self.camera)
            setattr(viewer, _QUALITY_MARK, self.quality)
            _close_at_exit(self)
        viewer.make_context_current()
        return viewer.render(render_mode=render_mode, camera_id=self.renderer.camera_id)

    def close(self) -> None:
        """Free the viewers' GL resources and contexts; a later render opens new ones.

        Each viewer's MuJoCo render context is freed while its own GL context is current:
        freed later (when garbage collected), it would delete the GL objects of whichever
        context is current then, such as another environment's viewer.
        """
        viewers = self.renderer._viewers
        for viewer in viewers.values():
            if viewer is None:
                continue
            try:
                viewer.make_context_current()
                viewer.con.free()
            finally:
                viewer.close()
        viewers.clear()
        self.renderer.viewer = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit, EGL may be gone already
            self.close()

    def __getstate__(self) -> dict[str, Any]:
        inner = object.__new__(type(self.renderer))
        inner.__dict__.update(self.renderer.__dict__, _viewers={}, viewer=None)
        viewer = self.renderer.viewer
        camera = camera_state(viewer.cam) if viewer is not None else self.camera
        return {"renderer": inner, "quality": self.quality, "camera": camera}


def _close_at_exit(renderer: HeadlessMujocoRenderer) -> None:
    """Close `renderer` at exit before MuJoCo's EGL clean-up (registered earlier, so run later)."""
    global _exit_hook_registered
    _open_renderers.add(renderer)
    if not _exit_hook_registered:
        _exit_hook_registered = True
        atexit.register(_close_open_renderers)


def _close_open_renderers() -> None:
    for renderer in list(_open_renderers):
        with contextlib.suppress(Exception):
            renderer.close()


def camera_state(camera: Any) -> dict[str, Any]:
    """An `MjvCamera`'s settings as a picklable dict."""
    state = {name: getattr(camera, name) for name in _CAMERA_FIELDS}
    state["type"] = int(state["type"])
    state["lookat"] = [float(v) for v in camera.lookat]
    return state


def set_camera(camera: Any, state: dict[str, Any]) -> None:
    """Set an `MjvCamera` from `camera_state`'s dict."""
    for name in _CAMERA_FIELDS:
        if name != "lookat":
            setattr(camera, name, state[name])
    camera.lookat[:] = state["lookat"]
