"""Sub-terrains built from MuJoCo box geoms: the geometry they hand to the terrain generator.

A box sub-terrain returns its boxes in its own local frame: x and y from the sub-terrain's lower
(-x, -y) corner, so the sub-terrain covers ``[0, size[0]] x [0, size[1]]``, and z from the
terrain's zero level (the top of the flat border around the grid). The generator moves the boxes
to the sub-terrain's place in the grid, adds them to the scene spec as geoms of the static
"terrain" body (named ``terrain_box_<row>_<col>_<k>``, geom group 0, the terrain's friction),
and lowers the shared height field under the sub-terrain (all but its first vertex row and
column) to the lowest box bottom, so the height field does not poke through the boxes or fill
the holes between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mjlab.terrains.height_field import SubTerrainCfg

__all__ = ["BoxSubTerrainCfg", "TerrainBoxes", "rotation_matrices"]


def rotation_matrices(quat: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices of (n, 4) wxyz quaternions (normalized first)."""
    w, x, y, z = (quat / np.linalg.norm(quat, axis=1, keepdims=True)).T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=1,
    )


@dataclass(frozen=True)
class TerrainBoxes:
    """The boxes of one sub-terrain and its spawn point, in the sub-terrain's local frame.

    Attributes:
        pos: (n, 3) box centres, m.
        half_size: (n, 3) half extents along the box's own axes, m (MuJoCo's box ``size``),
            each > 0.
        quat: (n, 4) box orientations, wxyz (identity ``(1, 0, 0, 0)`` for axis-aligned boxes).
        origin: (3,) spawn point: on the walkable surface at the centre platform, m.
    """

    pos: np.ndarray
    half_size: np.ndarray
    quat: np.ndarray
    origin: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.pos)
        shapes = {"pos": (n, 3), "half_size": (n, 3), "quat": (n, 4), "origin": (3,)}
        for name, shape in shapes.items():
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != shape:
                raise ValueError(f"TerrainBoxes.{name} has shape {value.shape}; need {shape}.")
            object.__setattr__(self, name, value)
        if n and not (self.half_size > 0).all():
            raise ValueError("TerrainBoxes.half_size: every half extent must be > 0.")

    @classmethod
    def axis_aligned(cls, lower: np.ndarray, upper: np.ndarray, origin: np.ndarray) -> TerrainBoxes:
        """Axis-aligned boxes from their lower and upper corners.

        Args:
            lower: (n, 3) min corner of each box, m.
            upper: (n, 3) max corner of each box, m (> lower on every axis).
            origin: (3,) spawn point, m.
        """
        lower = np.asarray(lower, dtype=float).reshape(-1, 3)
        upper = np.asarray(upper, dtype=float).reshape(-1, 3)
        quat = np.zeros((len(lower), 4))
        quat[:, 0] = 1.0
        return cls(pos=(lower + upper) / 2, half_size=(upper - lower) / 2, quat=quat, origin=origin)

    @property
    def bottom(self) -> float:
        """Lowest point of any box, m (0 with no boxes): each centre minus the box's half
        extent along world z, ``sum_j |R_zj| half_j`` for rotation R."""
        if len(self.pos) == 0:
            return 0.0
        row_z = rotation_matrices(self.quat)[:, 2, :]  # the world-z row of each rotation
        return float((self.pos[:, 2] - (np.abs(row_z) * self.half_size).sum(axis=1)).min())


@dataclass(kw_only=True)
class BoxSubTerrainCfg(SubTerrainCfg):
    """Base of the sub-terrain kinds made of box geoms (mjlab's ``Box*TerrainCfg``)."""

    def boxes(
        self, size: tuple[float, float], difficulty: float, rng: np.random.Generator
    ) -> TerrainBoxes:
        """The boxes of one sub-terrain.

        Args:
            size: (x, y) side of the sub-terrain, m.
            difficulty: In [0, 1]; 0 is the easiest version of this kind.
            rng: Random generator (the terrain generator's, so a seed fixes the map).

        Returns:
            The boxes and the spawn point, in the local frame of the module docstring.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement boxes().")

    def heights(self, shape, horizontal_scale, difficulty, rng):
        raise TypeError(
            f"{type(self).__name__} is made of boxes: the terrain generator calls boxes(), "
            "not heights()."
        )
