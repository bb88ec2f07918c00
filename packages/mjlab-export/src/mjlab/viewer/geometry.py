"""Triangle meshes of a compiled MuJoCo model's visible geoms, for drawing it outside MuJoCo's
own renderer (the web viewer). Needs mujoco, numpy and trimesh (`mjlab-export[viewer]`).

Each geom becomes vertices in its body's frame, so a viewer places a whole body with that body's
world pose (`MjData.xpos`, `MjData.xquat`, wxyz) and never moves a geom on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

DEFAULT_GROUPS = (0, 1, 2)
"""Geom groups MuJoCo's own viewer shows by default (collision geoms usually sit in group 3)."""

INFINITE_PLANE_HALF_SIZE = 200.0
"""Half size (m) drawn for a plane whose size is 0 (infinite in MuJoCo)."""

MAX_HFIELD_VERTICES = 600_000
"""A height field with more samples is drawn from every k-th sample in each direction (the last
row and column always included); the default rough terrain (881 x 481) is drawn whole."""

_DEFAULT_GEOM_RGBA = np.array([0.5, 0.5, 0.5, 1.0], dtype=np.float32)


@dataclass
class GeomMesh:
    """One geom as a triangle mesh in its body's frame."""

    name: str
    """The geom's name, or `geom<id>` when it has none."""
    geom_id: int
    """Index into the model's geoms."""
    body_id: int
    """The body it moves with."""
    vertices: np.ndarray
    """(V, 3) float32, m, in the body frame."""
    faces: np.ndarray
    """(F, 3) uint32 vertex indices, counter-clockwise seen from outside."""
    rgba: np.ndarray
    """(4,) float32 in [0, 1]: the geom's colour (its material's when the geom keeps MuJoCo's
    default grey, as MuJoCo's renderer does); textures are not drawn."""
    pos: np.ndarray
    """(3,) the geom's position in the body frame, m (`geom_pos`)."""
    quat: np.ndarray
    """(4,) the geom's orientation in the body frame, wxyz (`geom_quat`)."""
    half_size: np.ndarray
    """(3,) half extents of the drawn geom in its own frame, m (a plane: its drawn half size,
    z = 0)."""
    is_plane: bool = False
    """A plane geom (a viewer may draw a grid on it)."""


def geom_rgba(model: mujoco.MjModel, geom_id: int) -> np.ndarray:
    """(4,) float32 colour of geom `geom_id`: `geom_rgba`, or its material's `mat_rgba` when the
    geom has a material and keeps the default rgba (0.5, 0.5, 0.5, 1), MuJoCo's rule."""
    rgba = np.asarray(model.geom_rgba[geom_id], dtype=np.float32)
    mat = int(model.geom_matid[geom_id])
    if mat >= 0 and np.allclose(rgba, _DEFAULT_GEOM_RGBA):
        return np.asarray(model.mat_rgba[mat], dtype=np.float32).copy()
    return rgba.copy()


def _quat_to_mat(wxyz: np.ndarray) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(wxyz, dtype=np.float64))
    return mat.reshape(3, 3)


def _primitive(model: mujoco.MjModel, geom_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of geom `geom_id` in the geom's own frame."""
    import trimesh

    kind = int(model.geom_type[geom_id])
    size = np.asarray(model.geom_size[geom_id], dtype=np.float64)
    t = mujoco.mjtGeom
    if kind == t.mjGEOM_SPHERE:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    elif kind == t.mjGEOM_ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.vertices = mesh.vertices * size[:3]
    elif kind == t.mjGEOM_CAPSULE:
        mesh = trimesh.creation.capsule(height=2 * size[1], radius=size[0], count=[16, 16])
    elif kind == t.mjGEOM_CYLINDER:
        mesh = trimesh.creation.cylinder(radius=size[0], height=2 * size[1], sections=24)
    elif kind == t.mjGEOM_BOX:
        mesh = trimesh.creation.box(extents=2 * size[:3])
    elif kind == t.mjGEOM_PLANE:
        hx = size[0] if size[0] > 0 else INFINITE_PLANE_HALF_SIZE
        hy = size[1] if size[1] > 0 else INFINITE_PLANE_HALF_SIZE
        vertices = np.array([[-hx, -hy, 0], [hx, -hy, 0], [hx, hy, 0], [-hx, hy, 0]])
        return vertices, np.array([[0, 1, 2], [0, 2, 3]])
    elif kind == t.mjGEOM_MESH:
        mesh_id = int(model.geom_dataid[geom_id])
        v0, nv = int(model.mesh_vertadr[mesh_id]), int(model.mesh_vertnum[mesh_id])
        f0, nf = int(model.mesh_faceadr[mesh_id]), int(model.mesh_facenum[mesh_id])
        return model.mesh_vert[v0 : v0 + nv].astype(np.float64), model.mesh_face[f0 : f0 + nf]
    elif kind == t.mjGEOM_HFIELD:
        return _hfield(model, int(model.geom_dataid[geom_id]))
    else:
        raise ValueError(f"geom type {kind} has no mesh")
    return np.asarray(mesh.vertices), np.asarray(mesh.faces)


def _hfield(model: mujoco.MjModel, hfield_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Height field `hfield_id` as a grid of triangles (geom frame: centred, z up from 0)."""
    nrow, ncol = int(model.hfield_nrow[hfield_id]), int(model.hfield_ncol[hfield_id])
    rx, ry, top, _ = (float(v) for v in model.hfield_size[hfield_id])
    adr = int(model.hfield_adr[hfield_id])
    heights = np.asarray(model.hfield_data[adr : adr + nrow * ncol]).reshape(nrow, ncol) * top
    k = max(1, int(np.ceil(np.sqrt(nrow * ncol / MAX_HFIELD_VERTICES))))
    rows = np.unique(np.append(np.arange(0, nrow, k), nrow - 1))
    cols = np.unique(np.append(np.arange(0, ncol, k), ncol - 1))
    heights = heights[np.ix_(rows, cols)]
    xs = -rx + 2 * rx * cols / max(ncol - 1, 1)
    ys = -ry + 2 * ry * rows / max(nrow - 1, 1)
    gx, gy = np.meshgrid(xs, ys)  # (rows, cols), row index along y as in MuJoCo
    vertices = np.stack([gx, gy, heights], axis=-1).reshape(-1, 3)
    r, c = len(rows), len(cols)
    idx = np.arange(r * c).reshape(r, c)
    a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
    d, e = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    faces = np.concatenate([np.stack([a, b, e], 1), np.stack([a, e, d], 1)])
    return vertices, faces


def visual_geoms(model: mujoco.MjModel, groups: Sequence[int] = DEFAULT_GROUPS) -> list[GeomMesh]:
    """Every geom of `model` in one of `groups` with a visible colour (alpha > 0), as a mesh in
    its body's frame (the geom's `geom_pos`/`geom_quat` applied).

    Args:
        model: a compiled model.
        groups: geom groups to include (default: MuJoCo's visible groups 0, 1 and 2).

    Returns:
        The meshes in geom order.
    """
    meshes = []
    wanted = {int(g) for g in groups}
    for geom_id in range(model.ngeom):
        rgba = geom_rgba(model, geom_id)
        if int(model.geom_group[geom_id]) not in wanted or rgba[3] <= 0:
            continue
        try:
            vertices, faces = _primitive(model, geom_id)
        except ValueError:
            continue  # an SDF or other geom type without a surface to draw
        local = np.asarray(vertices, dtype=np.float64)
        half = (local.max(axis=0) - local.min(axis=0)) / 2 if len(local) else np.zeros(3)
        rot = _quat_to_mat(model.geom_quat[geom_id])
        vertices = local @ rot.T + np.asarray(model.geom_pos[geom_id])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom_id) or f"geom{geom_id}"
        meshes.append(
            GeomMesh(
                name=name,
                geom_id=geom_id,
                body_id=int(model.geom_bodyid[geom_id]),
                vertices=vertices.astype(np.float32),
                faces=np.asarray(faces, dtype=np.uint32),
                rgba=rgba,
                pos=np.asarray(model.geom_pos[geom_id], dtype=np.float64).copy(),
                quat=np.asarray(model.geom_quat[geom_id], dtype=np.float64).copy(),
                half_size=half,
                is_plane=int(model.geom_type[geom_id]) == mujoco.mjtGeom.mjGEOM_PLANE,
            )
        )
    return meshes


def moving_bodies(model: mujoco.MjModel) -> np.ndarray:
    """(K,) int ids of the bodies whose pose can change: those not welded to the world, and
    mocap bodies."""
    ids = [
        b
        for b in range(1, model.nbody)
        if int(model.body_weldid[b]) != 0 or int(model.body_mocapid[b]) >= 0
    ]
    return np.asarray(ids, dtype=np.int64)


def root_body(model: mujoco.MjModel) -> int | None:
    """The first body with a free joint (the floating base a camera follows), else None."""
    for j in range(model.njnt):
        if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_FREE:
            return int(model.jnt_bodyid[j])
    return None
