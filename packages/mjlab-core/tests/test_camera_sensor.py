"""Camera sensor: real rendering (OpenGL on C MuJoCo, the ray tracer on MuJoCo Warp), no mocks."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import mujoco
import pytest
import torch

from mjlab.entity import EntityCfg
from mjlab.envs import mdp
from mjlab.managers.manager_term_config import ObservationGroupCfg, ObservationTermCfg
from mjlab.managers.observation_manager import ObservationManager
from mjlab.scene import Scene, SceneCfg
from mjlab.sensor import CameraSensorCfg
from mjlab.sim.sim_cfg import SimulationCfg
from mjlab.sim.simulation import Simulation

CAM_H = 1.0  # camera height above the floor, m
BOX_TOP = 0.3  # top of the box, m

# A floor, and a box of top z = BOX_TOP on a vertical slide joint (qpos moves it up), at x = 2.
_XML = f"""
<mujoco>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="5 5 0.1" rgba="0.5 0.5 0.5 1"/>
    <body name="box" pos="2 0 {BOX_TOP / 2}">
      <joint name="lift" type="slide" axis="0 0 1"/>
      <geom type="box" size="0.3 0.3 {BOX_TOP / 2}" rgba="0.9 0.1 0.1 1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _build(num_envs: int, *sensors: CameraSensorCfg, backend: str = "mujoco"):
    cfg = SceneCfg(
        num_envs=num_envs,
        entities={"world": EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_XML))},
        sensors=sensors,
    )
    scene = Scene(cfg)
    sim = Simulation(num_envs, SimulationCfg(nthread=1, backend=backend), scene.compile())
    scene.initialize(sim)
    sim.reset()
    return scene, sim


def _floor_and_box(num_envs: int = 2, backend: str = "mujoco", **kwargs):
    floor = CameraSensorCfg(
        name="floor_cam", pos=(0.0, 0.0, CAM_H), data_types=("rgb", "depth"), **kwargs
    )
    box = CameraSensorCfg(name="box_cam", pos=(2.0, 0.0, CAM_H), data_types=("depth",), **kwargs)
    return _build(num_envs, floor, box, backend=backend)


def test_shapes_dtypes_and_depth_of_known_geometry():
    scene, _ = _floor_and_box(width=32, height=24)
    cam = scene["floor_cam"]
    assert cam.rgb.shape == (2, 24, 32, 3) and cam.rgb.dtype == torch.uint8
    assert cam.depth.shape == (2, 24, 32) and cam.depth.dtype == torch.float32
    # Straight down at the floor: z-depth is the height at every pixel (not the ray length).
    torch.testing.assert_close(cam.depth, torch.full_like(cam.depth, CAM_H), atol=1e-3, rtol=0)
    box_depth = scene["box_cam"].depth
    assert box_depth[:, 12, 16] == pytest.approx(CAM_H - BOX_TOP, abs=1e-3)
    assert cam.rgb.float().mean() > 20  # lit, not black
    with pytest.raises(ValueError, match="does not render rgb"):
        _ = scene["box_cam"].rgb


def test_misses_and_far_depth_read_max_depth():
    cam_cfg = CameraSensorCfg(
        name="sky", pos=(0.0, 0.0, CAM_H), lookat=(0.0, 1.0, CAM_H), data_types=("depth",)
    )
    near_cfg = CameraSensorCfg(
        name="near", pos=(0.0, 0.0, CAM_H), data_types=("depth",), max_depth=0.5
    )
    scene, _ = _build(1, cam_cfg, near_cfg)
    sky = scene["sky"].depth
    assert sky[0, 0].eq(10.0).all()  # the top row sees the sky: max_depth
    assert scene["near"].depth.eq(0.5).all()  # floor at 1 m, beyond max_depth 0.5


def test_renders_lazily_after_reset_and_holds_between_update_periods():
    scene, sim = _floor_and_box(width=16, height=16, update_period=2)
    cam = scene["box_cam"]
    top = CAM_H - BOX_TOP
    assert cam.depth[:, 8, 8].tolist() == pytest.approx([top, top], abs=1e-3)
    sim.data.qpos[:, 0] = 0.1  # both boxes rise 10 cm
    sim.forward()
    scene.update(0.02)  # step 1 of 2: images held
    assert cam.depth[:, 8, 8].tolist() == pytest.approx([top, top], abs=1e-3)
    scene.reset(torch.tensor([1]))  # a reset env is rendered at the next read, the other held
    sim.data.qpos[1, 0] = 0.1
    sim.forward()
    assert cam.depth[:, 8, 8].tolist() == pytest.approx([top, top - 0.1], abs=1e-3)
    scene.update(0.02)  # step 2 of 2: every env rendered
    assert cam.depth[:, 8, 8].tolist() == pytest.approx([top - 0.1, top - 0.1], abs=1e-3)


def _jitter_changes_only_that_world(backend: str) -> None:
    scene, sim = _floor_and_box(backend=backend, width=16, height=16)
    cam = scene["box_cam"]
    before = cam.depth.clone()
    cam_pos = sim.expand_model_field("cam_pos")
    cam_pos[1, cam.camera_id, 2] -= 0.2  # world 1's camera 20 cm lower
    sim.forward()
    scene.update(0.02)
    after = cam.depth
    torch.testing.assert_close(after[0], before[0])
    assert after[1, 8, 8].item() == pytest.approx(CAM_H - BOX_TOP - 0.2, abs=1e-3)


def test_per_world_camera_pose_changes_only_that_world():
    _jitter_changes_only_that_world("mujoco")


@pytest.mark.warp
def test_per_world_camera_pose_changes_only_that_world_warp():
    _jitter_changes_only_that_world("warp")


def test_lookat_points_the_camera_at_the_target():
    cfg = CameraSensorCfg(
        name="oblique", pos=(1.0, -1.0, 1.0), lookat=(2.0, 0.0, BOX_TOP), data_types=("depth",)
    )
    scene, _ = _build(1, cfg)
    # The centre ray hits the middle of the box top, sqrt(1 + 1 + 0.7^2) m away along the axis.
    expected = (1.0 + 1.0 + (1.0 - BOX_TOP) ** 2) ** 0.5
    assert scene["oblique"].depth[0, 31:33, 31:33].mean().item() == pytest.approx(
        expected, abs=0.01
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"width": 0}, "width must be an integer >= 1"),
        ({"update_period": 0}, "update_period must be an integer >= 1"),
        ({"data_types": "rgb"}, r"write \('rgb',\)"),
        ({"data_types": ("rgb", "normals")}, "data_types must be a non-empty tuple"),
        ({"max_depth": 0.0}, "max_depth must be > 0"),
        ({"fovy": 180.0}, "fovy must be in"),
        ({"quat": (1.0, 1.0, 0.0, 0.0)}, "unit quaternion"),
        ({"enabled_geom_groups": (6,)}, "geom groups 0-5"),
        ({"lookat": (0.0, 0.0, 1.0)}, "lookat must differ from pos"),
        ({"camera_name": "robot/cam", "lookat": (0.0, 0.0, 0.0)}, "Set one or the other"),
    ],
)
def test_bad_config_is_rejected_with_the_field_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CameraSensorCfg(name="cam", **kwargs)


def test_missing_camera_or_parent_body_is_named():
    with pytest.raises(ValueError, match="no camera 'world/wrist'"):
        _build(1, CameraSensorCfg(name="cam", camera_name="world/wrist"))
    with pytest.raises(ValueError, match="no body 'world/hand'"):
        _build(1, CameraSensorCfg(name="cam", parent_body="world/hand"))


def test_camera_on_a_body_follows_it():
    cfg = CameraSensorCfg(
        name="on_box", parent_body="world/box", pos=(1.0, 0.0, 0.5), data_types=("depth",)
    )
    scene, sim = _build(1, cfg)
    # 1 m beside the box, 0.5 m above its centre: it sees the floor.
    assert scene["on_box"].depth[0, 32, 32].item() == pytest.approx(0.5 + BOX_TOP / 2, abs=1e-3)
    sim.data.qpos[0, 0] = 0.2
    sim.forward()
    scene.update(0.02)
    assert scene["on_box"].depth[0, 32, 32].item() == pytest.approx(0.7 + BOX_TOP / 2, abs=1e-3)


def test_image_terms_make_one_channels_first_group():
    scene, sim = _floor_and_box(width=16, height=12)
    env = SimpleNamespace(num_envs=2, device=torch.device("cpu"), scene=scene, sim=sim)
    env.rng = torch.Generator().manual_seed(0)
    rgb = ObservationTermCfg(func=mdp.camera_rgb, params={"sensor_name": "floor_cam"})
    depth = ObservationTermCfg(
        func=mdp.camera_depth, params={"sensor_name": "floor_cam", "max_depth": 2.0}
    )
    manager = ObservationManager(
        {
            "camera": ObservationGroupCfg(terms={"rgb": rgb, "depth": depth}),
            "depth_history": ObservationGroupCfg(
                terms={"depth": depth}, history_length=2, flatten_history_dim=True
            ),
        },
        env,
    )
    obs = manager.compute()
    assert obs["camera"].shape == (2, 4, 12, 16) and obs["camera"].dtype == torch.float32
    assert obs["camera"][:, :3].min() >= 0.0 and obs["camera"][:, :3].max() <= 1.0
    torch.testing.assert_close(obs["camera"][:, 3], torch.full((2, 12, 16), CAM_H / 2.0))
    torch.testing.assert_close(
        obs["camera"][:, :3], scene["floor_cam"].rgb.permute(0, 3, 1, 2).float() / 255
    )
    assert obs["depth_history"].shape == (2, 2, 12, 16)
    assert manager.group_dims["camera"] == (4, 12, 16)
    described = manager.describe("camera")["terms"]
    assert [(t["func"], t["shape"]) for t in described] == [
        ("camera_rgb", [3, 12, 16]),
        ("camera_depth", [1, 12, 16]),
    ]
    assert described[1]["params"]["max_depth"] == 2.0
    with pytest.raises(ValueError, match="put the images in a group of their own"):
        ObservationManager(
            {
                "mixed": ObservationGroupCfg(
                    terms={
                        "rgb": rgb,
                        "z": ObservationTermCfg(func=lambda env: torch.zeros(2, 1)),
                    }
                )
            },
            env,
        )


def test_picks_egl_itself_without_a_display_or_mujoco_gl():
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    # The module alone (no torch import): a few seconds, not ten.
    import mjlab.sensor.camera_render_opengl as module

    code = (
        "import importlib.util as u, mujoco; "
        f"s = u.spec_from_file_location('m', {module.__file__!r}); m = u.module_from_spec(s); "
        "s.loader.exec_module(m); c = m.gl_context(8, 8); print(type(c).__module__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("mujoco.egl", "mujoco.osmesa")


def _panda_scene(num_envs: int, backend: str):
    import mujoco_menagerie

    panda = EntityCfg(
        spec_fn=lambda: mujoco_menagerie.get("franka_emika_panda").spec("mjx_single_cube")
    )
    cam = CameraSensorCfg(
        name="top",
        pos=(0.9, 0.0, 0.8),
        lookat=(0.5, 0.0, 0.0),
        width=32,
        height=32,
        data_types=("rgb", "depth"),
    )
    cfg = SceneCfg(num_envs=num_envs, entities={"panda": panda}, sensors=(cam,))
    scene = Scene(cfg)
    sim = Simulation(num_envs, SimulationCfg(nthread=1, backend=backend), scene.compile())
    scene.initialize(sim)
    sim.reset(keyframe=0)
    return scene


@pytest.mark.warp
def test_backends_agree_on_the_panda_scene():
    images = {b: _panda_scene(1, b)["top"] for b in ("mujoco", "warp")}
    depth = {b: cam.depth[0].cpu() for b, cam in images.items()}
    rgb = {b: cam.rgb[0].cpu().float() for b, cam in images.items()}
    # Same geometry, same camera: depth agrees to float32 precision (measured max 2e-6 m) but
    # at silhouette pixels, where a rasterizer and a ray tracer may pick different sides.
    diff = (depth["mujoco"] - depth["warp"]).abs()
    assert (diff < 1e-3).float().mean() > 0.97
    assert diff.median() < 1e-4
    # Shading differs (per-vertex GL lighting against per-pixel ray tracing): a loose bound.
    assert (rgb["mujoco"] - rgb["warp"]).abs().mean() < 120
