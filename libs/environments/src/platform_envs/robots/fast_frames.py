"""Frames of the Menagerie robot scenes, and what "fast" render quality draws in them.

On a machine without a GPU, MuJoCo renders through Mesa's software rasteriser (llvmpipe),
which lights every triangle's three vertices once per light: the Menagerie robots' visual
meshes (86k-393k triangles) and MuJoCo's infinite ground plane (always a 200x200 grid of quads
out to the far clip) took 15-45 ms a 240x320 frame. "fast" quality draws the same scene with
far less geometry, so frames look like the model's own (same geoms, materials, colours, lights
and camera) at a few milliseconds:

- meshes are drawn simplified: their triangles clustered on a grid (vertex clustering: the
  vertices in a cell merge at their mean, triangles that collapse are dropped) to about
  `FACE_BUDGET` triangles for all drawn meshes together, the cell the same for every mesh (so
  detail follows size) but never more than a quarter of a mesh's own size (so small parts keep
  their shape); meshes with texture coordinates are kept as they are;
- an infinite ground plane is drawn as a finite one as far as MuJoCo's own reaches (the far
  clip), on a coarse grid, where MuJoCo places it (under the camera) and textured alike;
- no shadows, reflections, skybox or multisampling (`adapters.mujoco_rendering`).

The simplified meshes live only in a copy of the model that the render context's drawing
lists are made from (`drawing_model`); the scene is always made from the environment's own
model and data, so world changes show, and the physics never sees any of this. "full"
quality draws the model as it is.

Measured (median ms for a 240x320 frame, render / render + JPEG at quality 80 with simplejpeg;
Mesa llvmpipe through EGL on 2 CPU cores busy with other work; default cameras; before and
after in the same run): Panda reach 26.4/26.7 -> 3.8/4.1, Panda pick_place 26.9/27.2 ->
3.4/3.7, xArm7 reach 14.6/14.9 -> 2.7/3.0, xArm7 pick_place 14.6/14.9 -> 3.1/3.4, H1 stand
24.9/25.2 -> 1.9/2.2, G1 walk 29.0/29.2 -> 2.0/2.2, T1 stand 16.4/16.7 -> 2.0/2.3; the mean
pixel difference to the unsimplified fast drawing 0.2-1.4 (of 255). The first frame takes
0.2-0.4 s more (simplifying, once per process per robot, and the render context).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from platform_envs.adapters.mujoco_rendering import check_quality, configure_scene, select_gl_backend
from platform_envs.robots.errors import RobotError

# about this many triangles for all drawn meshes together in "fast" quality
FACE_BUDGET = 5000
# a mesh's cells are at most this fraction of its bounding box's diagonal, at least _MIN_CELL m
_CELL_FRACTION = 0.25
_MIN_CELL = 0.001
# an infinite plane's finite stand-in: the far clip's reach, in this many grid cells a side
_PLANE_CELLS = 20
# simplified meshes per model content (a process builds a few robots' scenes)
_CACHED_MODELS = 32
_SIMPLIFIED: dict[bytes, tuple[MeshEdit, ...]] = {}


@dataclass(frozen=True)
class MeshEdit:
    """A mesh's simplified drawing: its first `len(vertices)` vertices and normals and first
    `len(faces)` faces replaced (indices are the mesh's own, as MuJoCo stores them)."""

    mesh: int
    vertices: np.ndarray  # (n, 3) float32
    normals: np.ndarray  # (n, 3) float32, unit
    faces: np.ndarray  # (m, 3) int32


class FrameRenderer:
    """Renders frames of `model`'s scene at `quality`, with `mujoco.Renderer`'s calls.

    The render context (meshes, planes, textures) is made from `drawing_model(model, quality)`;
    each frame's scene from `model` itself and the data given to `update_scene`.

    Args:
        model: the environment's model (kept by reference: edits to it show in later frames).
        height, width: the frame's size in pixels.
        quality: "fast" or "full".

    Raises:
        RobotError: a frame larger than the model's offscreen buffer, or no OpenGL context.
    """

    def __init__(self, model: Any, height: int, width: int, quality: str) -> None:
        check_quality(quality)
        select_gl_backend()
        import mujoco

        if width > model.vis.global_.offwidth or height > model.vis.global_.offheight:
            raise RobotError(
                f"a {height}x{width} frame is larger than the model's offscreen buffer "
                f"({model.vis.global_.offheight}x{model.vis.global_.offwidth}): use a smaller render_size"
            )
        self.model = model
        self.quality = quality
        self._planes = _infinite_planes(model) if quality == "fast" else {}
        try:
            self._renderer = mujoco.Renderer(drawing_model(model, quality), height, width)
        except Exception as exc:  # GL back-ends fail with many error types
            raise RobotError(
                f"cannot open an offscreen OpenGL context ({type(exc).__name__}: {exc}): install Mesa's EGL "
                "or OSMesa libraries (scripts/install_system_deps.sh)"
            ) from exc
        self.scene = self._renderer.scene
        configure_scene(self.scene, quality)
        # the sky stays: without it, what lies past the floor's edge is black (a band above the
        # horizon), and it costs ~0.4 ms of a frame
        self.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = 1
        self.option = mujoco.MjvOption()
        self._cameras: dict[int, Any] = {}

    def update_scene(self, data: Any, camera: Any = -1) -> None:
        """Make the scene of `data`, seen from `camera` (an index, -1 for the free camera, or an
        `MjvCamera`)."""
        import mujoco

        if not isinstance(camera, mujoco.MjvCamera):
            camera = self._camera(int(camera))
        mujoco.mjv_updateScene(
            self.model, data, self.option, None, camera, mujoco.mjtCatBit.mjCAT_ALL, self.scene
        )
        if self._planes:
            _size_planes(self.scene, self._planes)

    def render(self) -> np.ndarray:
        """The scene as a (height, width, 3) uint8 frame."""
        frame: np.ndarray = self._renderer.render()
        return frame

    def close(self) -> None:
        """Free the render context (a later frame needs a new FrameRenderer)."""
        self._renderer.close()

    def _camera(self, index: int) -> Any:
        import mujoco

        if index not in self._cameras:
            camera = mujoco.MjvCamera()
            if index == -1:
                mujoco.mjv_defaultFreeCamera(self.model, camera)
            else:
                camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
                camera.fixedcamid = index
            self._cameras[index] = camera
        return self._cameras[index]


def drawing_model(model: Any, quality: str) -> Any:
    """The model a render context is made from: `model` itself for "full"; for "fast" a copy
    whose meshes are simplified and whose infinite planes are finite grids (module docstring).

    Only the drawing lists come from it; `model` is left as it is.
    """
    check_quality(quality)
    if quality == "full":
        return model
    drawing = copy.copy(model)
    for edit in simplified_meshes(model):
        _apply(drawing, edit)
    for geom, size in _infinite_planes(model).items():
        drawing.geom_size[geom] = size
    return drawing


def simplified_meshes(model: Any, budget: int = FACE_BUDGET) -> tuple[MeshEdit, ...]:
    """The simplified drawing of `model`'s drawn meshes (those of geoms in the groups drawn by
    default), about `budget` triangles in all; none when they already are (cached per process
    by the meshes' content)."""
    drawn = _drawn_meshes(model)
    key = _content_key(model, drawn, budget)
    if key not in _SIMPLIFIED:
        if len(_SIMPLIFIED) >= _CACHED_MODELS:
            _SIMPLIFIED.clear()
        _SIMPLIFIED[key] = _simplify(model, drawn, budget)
    return _SIMPLIFIED[key]


def cluster_mesh(
    vertices: np.ndarray, faces: np.ndarray, cell: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A triangle mesh simplified by vertex clustering on a grid of `cell` metres.

    Returns (vertices, normals, faces): each occupied cell's mean vertex, its area-weighted
    normal, and the triangles whose corners fall in three different cells, once each (winding
    kept), with vertices no triangle uses removed.
    """
    points = np.asarray(vertices, dtype=np.float64)
    cells = np.floor(points / cell).astype(np.int64)
    cells -= cells.min(axis=0)
    span = cells.max(axis=0) + 1
    packed = cells[:, 0] + span[0] * (cells[:, 1] + span[1] * cells[:, 2])
    _, of_vertex, counts = np.unique(packed, return_inverse=True, return_counts=True)
    of_vertex = of_vertex.reshape(-1)
    count = counts.size
    means = (
        np.stack(
            [np.bincount(of_vertex, weights=points[:, axis], minlength=count) for axis in range(3)], axis=1
        )
        / counts[:, None]
    )
    tris = of_vertex[np.asarray(faces, dtype=np.int64)]
    tris = tris[(tris[:, 0] != tris[:, 1]) & (tris[:, 1] != tris[:, 2]) & (tris[:, 0] != tris[:, 2])]
    # the same triangle once: rotate each to start at its smallest corner (keeps the winding)
    start = np.argmin(tris, axis=1)
    tris = np.take_along_axis(tris, (np.arange(3)[None, :] + start[:, None]) % 3, axis=1)
    _, first = np.unique(tris[:, 0] + count * (tris[:, 1] + count * tris[:, 2]), return_index=True)
    tris = tris[np.sort(first)]
    used, renumbered = np.unique(tris.reshape(-1), return_inverse=True)
    tris = renumbered.reshape(-1, 3)
    kept = means[used]
    face_normals = np.cross(kept[tris[:, 1]] - kept[tris[:, 0]], kept[tris[:, 2]] - kept[tris[:, 0]])
    normals = np.zeros_like(kept)
    for corner in range(3):
        for axis in range(3):
            normals[:, axis] += np.bincount(
                tris[:, corner], weights=face_normals[:, axis], minlength=len(kept)
            )
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    return kept.astype(np.float32), normals.astype(np.float32), tris.astype(np.int32)


# -- helpers -------------------------------------------------------------------------------------


def _drawn_meshes(model: Any) -> dict[int, int]:
    """{mesh id: how many geoms draw it} over the geoms in the groups drawn by default."""
    import mujoco

    shown = np.asarray(mujoco.MjvOption().geomgroup, dtype=bool)
    groups = np.clip(model.geom_group, 0, shown.size - 1)
    meshes = model.geom_dataid[(model.geom_type == mujoco.mjtGeom.mjGEOM_MESH) & shown[groups]]
    ids, uses = np.unique(meshes, return_counts=True)
    return {int(mesh): int(n) for mesh, n in zip(ids, uses, strict=True) if mesh >= 0}


def _content_key(model: Any, drawn: dict[int, int], budget: int) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr((budget, sorted(drawn.items()))).encode())
    for name in ("mesh_vertadr", "mesh_vertnum", "mesh_faceadr", "mesh_facenum", "mesh_vert", "mesh_face"):
        digest.update(np.ascontiguousarray(getattr(model, name)).tobytes())
    return digest.digest()


def _simplify(model: Any, drawn: dict[int, int], budget: int) -> tuple[MeshEdit, ...]:
    meshes = [mesh for mesh in drawn if model.mesh_texcoordadr[mesh] < 0]
    if sum(int(model.mesh_facenum[mesh]) * drawn[mesh] for mesh in drawn) <= budget:
        return ()
    pieces = {mesh: _mesh_arrays(model, mesh) for mesh in meshes}
    area = sum(_area(*pieces[mesh]) * drawn[mesh] for mesh in meshes)
    # a surface tiled by square cells of side c has about 2 * area / c^2 triangles
    cell = max(_MIN_CELL, float(np.sqrt(2.0 * area / budget)))
    edits = []
    for mesh in meshes:
        vertices, faces = pieces[mesh]
        diagonal = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
        own_cell = max(_MIN_CELL, min(cell, _CELL_FRACTION * diagonal))
        kept, normals, tris = cluster_mesh(vertices, faces, own_cell)
        fits = len(kept) <= model.mesh_normalnum[mesh]  # normals are written in the mesh's own slots
        if 0 < len(tris) < len(faces) and fits:
            edits.append(MeshEdit(mesh, kept, normals, tris))
    return tuple(edits)


def _mesh_arrays(model: Any, mesh: int) -> tuple[np.ndarray, np.ndarray]:
    start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
    vertices = np.asarray(model.mesh_vert[start : start + count], dtype=np.float64)
    start, count = model.mesh_faceadr[mesh], model.mesh_facenum[mesh]
    return vertices, np.asarray(model.mesh_face[start : start + count], dtype=np.int64)


def _area(vertices: np.ndarray, faces: np.ndarray) -> float:
    edges = np.cross(
        vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]]
    )
    return 0.5 * float(np.linalg.norm(edges, axis=1).sum())


def _apply(drawing: Any, edit: MeshEdit) -> None:
    """Write `edit` into the drawing copy (its convex hull's drawing is dropped: its vertex
    indices would point at the replaced vertices)."""
    mesh = edit.mesh
    vertex, normal, face = (
        drawing.mesh_vertadr[mesh],
        drawing.mesh_normaladr[mesh],
        drawing.mesh_faceadr[mesh],
    )
    drawing.mesh_vert[vertex : vertex + len(edit.vertices)] = edit.vertices
    drawing.mesh_normal[normal : normal + len(edit.normals)] = edit.normals
    drawing.mesh_face[face : face + len(edit.faces)] = edit.faces
    drawing.mesh_facenormal[face : face + len(edit.faces)] = edit.faces
    drawing.mesh_facenum[mesh] = len(edit.faces)
    drawing.mesh_graphadr[mesh] = -1


def _infinite_planes(model: Any) -> dict[int, np.ndarray]:
    """{geom id: the size it is drawn at} for `model`'s planes infinite both ways.

    A half-size per axis reaching as far as MuJoCo draws an infinite plane (1.05 x the far
    clip), rounded to (2n - 1) / texrepeat so that the texture lines up as on the infinite
    plane (MuJoCo maps a finite plane's texture from its corner, an infinite one's from its
    centre, offset half a repeat), on a grid of `_PLANE_CELLS` cells a side. A plane whose
    material stretches its texture over its size (texuniform false) stays infinite: a
    finite size would change its texture's scale.
    """
    import mujoco

    reach = 1.05 * float(model.vis.map.zfar) * float(model.stat.extent)
    sizes = {}
    for geom in np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE):
        if model.geom_size[geom, 0] > 0 or model.geom_size[geom, 1] > 0:
            continue
        material = int(model.geom_matid[geom])
        repeat = np.ones(2)
        if material >= 0:
            if (model.mat_texid[material] >= 0).any() and not model.mat_texuniform[material]:
                continue
            given = np.asarray(model.mat_texrepeat[material], dtype=np.float64)
            repeat = np.where(given > 0, given, 1.0)
        half = (2 * np.ceil((reach * repeat + 1) / 2) - 1) / repeat
        sizes[int(geom)] = np.array([half[0], half[1], half.max() / _PLANE_CELLS])
    return sizes


def _size_planes(scene: Any, planes: dict[int, np.ndarray]) -> None:
    """Give the scene's infinite planes (placed by MuJoCo under the camera, in whole texture
    tiles) their drawn size: their drawing list is the finite grid made for that size, and a
    texture repeats per metre on it as it does on an infinite plane."""
    import mujoco

    plane, geom_object = mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtObj.mjOBJ_GEOM
    left = len(planes)
    for index in range(scene.ngeom):
        geom = scene.geoms[index]
        if geom.type == plane and geom.objtype == geom_object and geom.objid in planes:
            geom.size[:] = planes[geom.objid]
            left -= 1
            if not left:
                return
