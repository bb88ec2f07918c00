"""Camera images of MuJoCo Warp worlds with mujoco_warp's batch ray tracer (`mujoco_warp.render`).

All worlds are traced in one kernel launch on the simulation's device, CUDA or Warp's CPU
device; the images never leave it. The tracer reads each world's `cam_xpos`/`cam_xmat` and its
per-world model rows (`geom_rgba`, `geom_size`, `mat_rgba`, ...), so camera-pose and appearance
randomization by `Simulation.expand_model_field` are honoured. Ray directions are precomputed
from the compiled model's `cam_fovy`: a per-world field of view is not.
"""

from __future__ import annotations

import torch


class WarpCameraRenderer:
    """Renders one camera of every world of a MuJoCo Warp simulation.

    Args:
        sim: the `Simulation` (backend "warp").
        camera_id: the camera's id in `sim.mj_model`.
        width, height: image size, pixels.
        geom_groups: geom groups traced.
        rgb, depth: which images to produce.

    Lighting: the model's lights and headlight ambient, textures, no shadows; background black
    (as `OpenGlCameraRenderer`).
    """

    def __init__(
        self, sim, camera_id: int, width: int, height: int, geom_groups, rgb: bool, depth: bool
    ):
        import mujoco_warp as mjw
        import warp as wp

        self.mjw, self.wp = mjw, wp
        self.sim = sim
        self.width, self.height = width, height
        self.device = wp.device_from_torch(sim.device)
        self.m, self.d = sim.warp_model_data
        with wp.ScopedDevice(self.device):
            self.rc = mjw.create_render_context(
                sim.mj_model,
                nworld=sim.num_envs,
                cam_res=(width, height),
                render_rgb=[rgb],
                render_depth=[depth],
                render_seg=[False],
                use_textures=True,
                use_shadows=False,
                enabled_geom_groups=list(geom_groups),
                cam_active=[int(camera_id)],
            )
        npix = width * height
        n = sim.num_envs
        # Views of the tracer's outputs: (nworld, npix) packed 0xAARRGGBB and planar depth (0 for a
        # miss), the single active camera at offset 0.
        self._rgb_packed = wp.to_torch(self.rc.rgb_data)[:, :npix] if rgb else None
        self._depth = wp.to_torch(self.rc.depth_data)[:, :npix] if depth else None
        self._shape = (n, height, width)

    def render(self) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """Trace every world at its current state.

        Returns:
            rgb (num_envs, H, W, 3) uint8 and depth (num_envs, H, W) float32 z-depth, m (0 for a
            miss), on the simulation's device; None for an image not asked for. New tensors.
        """
        wp, mjw = self.wp, self.mjw
        m, d = self.sim.warp_model_data  # expand_model_field may have replaced model arrays
        with wp.ScopedDevice(self.device):
            mjw.refit_bvh(m, d, self.rc)
            mjw.render(m, d, self.rc)
        rgb = depth = None
        if self._rgb_packed is not None:
            # Little-endian bytes of 0xAARRGGBB: B, G, R, A.
            packed = self._rgb_packed.contiguous().view(torch.uint8)
            rgb = packed.view(*self._shape, 4)[..., [2, 1, 0]]
        if self._depth is not None:
            depth = self._depth.reshape(self._shape).clone()
        return rgb, depth
