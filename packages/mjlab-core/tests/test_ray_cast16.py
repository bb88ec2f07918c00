"""mjlab 1.6's ray-cast API: patterns, RayCastSensor and TerrainHeightSensor on known geometry.

The scene: a "ground" entity with a floor plane (z = 0), a step box (top at z = 0.2, centred at
x = 1, geom group 1), a wall whose face is at x = 2.5, a wall whose face is at y = 3.5, and a
floating slab (z 0.3..0.5, centred at x = -2); a free "probe" body carrying a small sphere
(group 0, no collisions), a site "s" at its origin, a site "s_up" 0.1 m above it and a 3 x 3
camera. Tests place the probe with a root-state write and `sim.forward()`, then read the sensors.
"""

from __future__ import annotations

import math

import mujoco
import pytest
import torch

from mjlab.entity import EntityCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sensor.ray_cast import (
    GridPatternCfg,
    ObjRef,
    PinholeCameraPatternCfg,
    RayCastData,
    RayCastSensor,
    RayCastSensorCfg,
    RingPatternCfg,
)
from mjlab.sensor.terrain_height import (
    TerrainHeightData,
    TerrainHeightSensor,
    TerrainHeightSensorCfg,
)
from mjlab.sim import Simulation, SimulationCfg
from mjlab.utils.math import quat_from_euler_xyz

GROUND_XML = """
<mujoco><worldbody><body name="base">
  <geom name="floor" type="plane" size="0 0 0.1" group="0"/>
  <geom name="step" type="box" pos="1 0 0.1" size="0.25 0.25 0.1" group="1"/>
  <geom name="wall_x" type="box" pos="2.6 0 1" size="0.1 5 1" group="0"/>
  <geom name="wall_y" type="box" pos="0 3.6 1" size="5 0.1 1" group="0"/>
  <geom name="slab" type="box" pos="-2 0 0.4" size="0.25 0.25 0.1" group="0"/>
</body></worldbody></mujoco>"""

PROBE_XML = """
<mujoco><worldbody><body name="probe"><freejoint/>
  <geom name="ball" type="sphere" size="0.05" group="0" contype="0" conaffinity="0"/>
  <site name="s"/>
  <site name="s_up" pos="0 0 0.1"/>
  <camera name="cam" resolution="3 3" fovy="90"/>
</body></worldbody></mujoco>"""

SITE = ObjRef("site", "s", entity="probe")
DOWN_ONE = RingPatternCfg(rings=(), include_center=True)
"""One ray from the frame origin, straight down the frame's -z."""


def _scene(sensors, num_envs=2, backend="mujoco", device="cpu"):
    cfg = SceneCfg(
        num_envs=num_envs,
        entities={
            "ground": EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(GROUND_XML)),
            "probe": EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(PROBE_XML)),
        },
        sensors=tuple(sensors),
    )
    scene = Scene(cfg, device=device)
    sim = Simulation(num_envs, SimulationCfg(backend=backend), scene.compile(), device=device)
    scene.initialize(sim)
    sim.reset()
    return scene, sim


def _place(scene, sim, pos, rpy=None, env_ids=None):
    """Put the probe at `pos` (n, 3) world with roll/pitch/yaw `rpy` (n, 3), then forward."""
    pos = torch.as_tensor(pos, dtype=torch.float32)
    n = pos.shape[0]
    rpy = torch.zeros(n, 3) if rpy is None else torch.as_tensor(rpy, dtype=torch.float32)
    state = torch.zeros(n, 13)
    state[:, :3] = pos
    state[:, 3:7] = quat_from_euler_xyz(rpy[:, 0], rpy[:, 1], rpy[:, 2])
    scene["probe"].write_root_state_to_sim(state.to(sim.device), env_ids=env_ids)
    sim.forward()


def _close(actual, expected, atol=1e-5):
    torch.testing.assert_close(
        actual.cpu().float(), torch.as_tensor(expected, dtype=torch.float32), atol=atol, rtol=0
    )


# -- patterns ------------------------------------------------------------------------------------
def test_grid_pattern_lays_out_x_fastest_with_unit_directions():
    offsets, dirs = GridPatternCfg(
        size=(1.0, 0.5), resolution=0.25, direction=(0.0, 0.0, -2.0)
    ).generate_rays(None, "cpu")
    assert offsets.shape == (15, 3) and dirs.shape == (15, 3)  # 5 along x, 3 along y
    _close(offsets[0], [-0.5, -0.25, 0.0])
    _close(offsets[1], [-0.25, -0.25, 0.0])  # x varies fastest
    _close(offsets[5], [-0.5, 0.0, 0.0])
    _close(offsets[-1], [0.5, 0.25, 0.0])
    _close(dirs, torch.tensor([0.0, 0.0, -1.0]).expand(15, 3))
    # mjlab's default height-scan size: 17 x 11 rays; an empty extent is one row.
    assert GridPatternCfg(size=(1.6, 1.0), resolution=0.1).generate_rays(None, "cpu")[0].shape[
        0
    ] == (17 * 11)
    assert GridPatternCfg(size=(0.0, 0.0)).generate_rays(None, "cpu")[0].shape[0] == 1


def test_ring_pattern_has_the_centre_then_each_ring_from_plus_x():
    cfg = RingPatternCfg(rings=(RingPatternCfg.Ring(0.1, 4), RingPatternCfg.Ring(0.2, 8)))
    offsets, dirs = cfg.generate_rays(None, "cpu")
    assert offsets.shape == (13, 3)
    _close(offsets[0], [0.0, 0.0, 0.0])
    _close(offsets[1], [0.1, 0.0, 0.0])
    _close(offsets[2], [0.0, 0.1, 0.0])  # counter-clockwise, +x towards +y
    _close(offsets[5], [0.2, 0.0, 0.0])
    _close(offsets[6], [0.2 * math.cos(math.pi / 4), 0.2 * math.sin(math.pi / 4), 0.0])
    _close(offsets[5:].norm(dim=-1), torch.full((8,), 0.2))
    _close(dirs, torch.tensor([0.0, 0.0, -1.0]).expand(13, 3))
    no_centre = RingPatternCfg.single_ring(0.3, 6, include_center=False, direction=(1, 0, 0))
    offsets, dirs = no_centre.generate_rays(None, "cpu")
    assert offsets.shape == (6, 3)
    _close(offsets[0], [0.3, 0.0, 0.0])
    _close(dirs[0], [1.0, 0.0, 0.0])


def test_pinhole_pattern_spans_the_field_of_view_row_major():
    offsets, dirs = PinholeCameraPatternCfg(width=4, height=3, fovy=90.0).generate_rays(None, "cpu")
    assert dirs.shape == (12, 3)
    _close(offsets, torch.zeros(12, 3))
    _close(dirs.norm(dim=-1), torch.ones(12))
    # tan(fovy/2) = 1, tan(fovx/2) = 4/3 (aspect 4:3); u = -1, -1/3, 1/3, 1; v = -1, 0, 1.
    corner = torch.tensor([-4 / 3, -1.0, -1.0])
    _close(dirs[0], corner / corner.norm())
    second = torch.tensor([-4 / 9, -1.0, -1.0])
    _close(dirs[1], second / second.norm())
    last = torch.tensor([4 / 3, 1.0, -1.0])
    _close(dirs[11], last / last.norm())
    # From an intrinsic matrix: fy = 1.5 px for 3 rows is a 90 degree fovy.
    cfg = PinholeCameraPatternCfg.from_intrinsic_matrix([1.5, 0, 2, 0, 1.5, 1.5, 0, 0, 1], 4, 3)
    assert cfg.fovy == pytest.approx(90.0)


def test_pinhole_from_a_mujoco_camera_and_hits_at_known_distances():
    sensor_cfg = RayCastSensorCfg(
        name="cam_rays",
        frame=SITE,
        pattern=PinholeCameraPatternCfg.from_mujoco_camera("probe/cam"),
    )
    scene, sim = _scene([sensor_cfg], num_envs=1)
    sensor = scene["cam_rays"]
    explicit = PinholeCameraPatternCfg(width=3, height=3, fovy=90.0).generate_rays(None, "cpu")
    _close(sensor.pattern_directions, explicit[1])
    # The site looks down its -z axis from 1 m: the centre ray hits at 1 m, the corner ray
    # (direction (-1, -1, -1) / sqrt(3)) at sqrt(3) m.
    _place(scene, sim, [[-1.0, 0.0, 1.0]])
    data = sensor.data
    assert data.distances.shape == (1, 9)
    _close(data.distances[0, 4], 1.0)
    _close(data.distances[0, 0], math.sqrt(3))
    _close(data.hit_pos_w[0, 0], [-2.0, -1.0, 0.0])


# -- RayCastSensor ---------------------------------------------------------------------------------
def test_rays_hit_the_step_and_the_floor_per_env_with_normals_and_frame_pose():
    cfg = RayCastSensorCfg(
        name="rays", frame=SITE, pattern=GridPatternCfg(size=(0.2, 0.0), resolution=0.1)
    )
    scene, sim = _scene([cfg])
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    sensor = scene["rays"]
    assert isinstance(sensor, RayCastSensor)
    data = sensor.data
    assert isinstance(data, RayCastData)
    assert (sensor.num_frames, sensor.num_rays_per_frame, sensor.num_rays) == (1, 3, 3)
    _close(data.distances, [[0.3, 0.3, 0.3], [0.5, 0.5, 0.5]])
    _close(data.hit_pos_w[0], [[0.9, 0.0, 0.2], [1.0, 0.0, 0.2], [1.1, 0.0, 0.2]])
    _close(data.hit_pos_w[1, :, 2], [0.0, 0.0, 0.0])
    _close(data.normals_w, torch.tensor([0.0, 0.0, 1.0]).expand(2, 3, 3))
    _close(data.pos_w, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    _close(data.quat_w, [[1.0, 0.0, 0.0, 0.0]] * 2)
    assert data.frame_pos_w.shape == (2, 1, 3) and data.frame_quat_w.shape == (2, 1, 4)
    assert data.distances.dtype == torch.float32


def _aligned_distances(alignment, rpy):
    cfg = RayCastSensorCfg(
        name="rays",
        frame=SITE,
        pattern=GridPatternCfg(size=(0.2, 0.0), resolution=0.1, direction=(1.0, 0.0, 0.0)),
        ray_alignment=alignment,
    )
    scene, sim = _scene([cfg], num_envs=1)
    _place(scene, sim, [[0.0, 0.0, 1.0]], rpy=[rpy])
    return scene["rays"].data


def test_ray_alignment_base_yaw_world_after_turning_and_tilting_the_frame():
    # Frame turned 90 degrees left and pitched 30 degrees nose-down; rays along its +x axis
    # from offsets -0.1, 0, 0.1 along that axis.
    rpy = [0.0, math.radians(30), math.radians(90)]
    base = _aligned_distances("base", rpy)
    # Full rotation: the rays point (0, cos 30, -sin 30) and hit the floor 1 m below.
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    _close(base.distances[0, 1], 1.0 / s)
    _close(base.hit_pos_w[0, 1], [0.0, c / s, 0.0], atol=1e-4)
    _close(base.distances[0], [(1.0 + 0.1 * s) / s, 1.0 / s, (1.0 - 0.1 * s) / s], atol=1e-4)
    # Heading only: level rays along +y, hitting the wall at y = 3.5; offsets along y.
    yaw = _aligned_distances("yaw", rpy)
    _close(yaw.distances[0], [3.6, 3.5, 3.4], atol=1e-4)
    _close(yaw.hit_pos_w[0, :, 1], [3.5, 3.5, 3.5], atol=1e-4)
    _close(yaw.normals_w[0, 1], [0.0, -1.0, 0.0])
    # World: the pattern as given, along +x to the wall at x = 2.5.
    world = _aligned_distances("world", rpy)
    _close(world.distances[0], [2.6, 2.5, 2.4], atol=1e-4)
    _close(world.hit_pos_w[0, :, 0], [2.5, 2.5, 2.5], atol=1e-4)
    # The frame pose itself is reported whatever the alignment.
    _close(world.quat_w[0], quat_from_euler_xyz(*torch.tensor(rpy)))


def test_yaw_alignment_of_a_frame_pitched_straight_down_keeps_its_heading():
    # x axis vertical: the heading comes from the y axis (here +y after the 90 degree yaw).
    yaw = _aligned_distances("yaw", [0.0, math.radians(90), math.radians(90)])
    _close(yaw.distances[0], [3.6, 3.5, 3.4], atol=1e-4)


def test_exclude_parent_body_and_geom_groups():
    sensors = [
        RayCastSensorCfg(name="excl", frame=SITE, pattern=DOWN_ONE),
        RayCastSensorCfg(name="incl", frame=SITE, pattern=DOWN_ONE, exclude_parent_body=False),
        RayCastSensorCfg(name="g0", frame=SITE, pattern=DOWN_ONE, include_geom_groups=(0,)),
        RayCastSensorCfg(name="all", frame=SITE, pattern=DOWN_ONE, include_geom_groups=None),
    ]
    scene, sim = _scene(sensors)
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    _close(scene["excl"].data.distances, [[0.3], [0.5]])
    # Not excluded: the ray starts inside the probe's own 5 cm sphere and leaves it at 5 cm,
    # through its far side (normal along the ray).
    _close(scene["incl"].data.distances, [[0.05], [0.05]])
    _close(scene["incl"].data.normals_w[:, 0], [[0.0, 0.0, -1.0]] * 2)
    # Group 0 only: the step (group 1) is invisible, the floor is seen.
    _close(scene["g0"].data.distances, [[0.5], [0.5]])
    _close(scene["all"].data.distances, [[0.3], [0.5]])


def test_misses_report_minus_one_zero_normal_and_the_origin():
    sensors = [
        RayCastSensorCfg(
            name="short",
            frame=SITE,
            pattern=GridPatternCfg(size=(0.2, 0.0), resolution=0.1),
            max_distance=0.9,
        ),
        RayCastSensorCfg(name="enough", frame=SITE, pattern=DOWN_ONE, max_distance=1.01),
        RayCastSensorCfg(
            name="up", frame=SITE, pattern=RingPatternCfg.single_ring(direction=(0, 0, 1))
        ),
    ]
    scene, sim = _scene(sensors, num_envs=1)
    _place(scene, sim, [[-1.0, 0.0, 1.0]])
    short = scene["short"].data
    _close(short.distances, [[-1.0, -1.0, -1.0]])
    _close(short.normals_w, torch.zeros(1, 3, 3))
    _close(short.hit_pos_w[0], [[-1.1, 0.0, 1.0], [-1.0, 0.0, 1.0], [-0.9, 0.0, 1.0]])
    _close(scene["enough"].data.distances, [[1.0]])
    assert (scene["up"].data.distances == -1).all()


def test_frames_of_mixed_kinds_keep_the_configured_order():
    frames = (
        ObjRef("site", "s_up", entity="probe"),
        ObjRef("body", "probe", entity="probe"),
        ObjRef("geom", "ball", entity="probe"),
    )
    scene, sim = _scene([RayCastSensorCfg(name="rays", frame=frames, pattern=DOWN_ONE)])
    _place(scene, sim, [[-1.0, 0.0, 0.5], [1.0, 0.0, 0.5]])
    data = scene["rays"].data
    assert data.frame_pos_w.shape == (2, 3, 3) and data.distances.shape == (2, 3)
    _close(data.frame_pos_w[:, :, 2], [[0.6, 0.5, 0.5]] * 2)
    _close(data.distances, [[0.6, 0.5, 0.5], [0.4, 0.3, 0.3]])
    _close(data.pos_w, [[-1.0, 0.0, 0.6], [1.0, 0.0, 0.6]])


def test_data_is_cast_once_per_state_and_follows_resets_of_some_envs():
    scene, sim = _scene([RayCastSensorCfg(name="rays", frame=SITE, pattern=DOWN_ONE)])
    sensor = scene["rays"]
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    first = sensor.data
    assert sensor.data is first  # same state: no second cast
    scene.update(0.02)
    assert sensor.data is not first  # an env step: cast again
    # A new physics state (written and forwarded, no sensor call in between) is seen too.
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.7]])
    _close(sensor.data.distances, [[0.3], [0.7]])
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    # Env 1 alone is moved (as a reset event would) and forwarded; env 0 keeps its value.
    scene.reset(torch.tensor([1]))
    _place(scene, sim, [[1.0, 0.0, 0.8]], env_ids=torch.tensor([1]))
    _close(sensor.data.distances, [[0.3], [0.6]])
    _close(first.distances, [[0.3], [0.5]])  # an earlier result is not overwritten
    with pytest.raises(ValueError):
        sensor.reset(torch.tensor([2]))


# -- TerrainHeightSensor -----------------------------------------------------------------------------
def _height_sensors(**kwargs):
    frames = (SITE, ObjRef("site", "s_up", entity="probe"))
    ring = RingPatternCfg.single_ring(radius=0.4, num_samples=4)
    return [
        TerrainHeightSensorCfg(
            name=f"h_{r}",
            frame=frames,
            pattern=ring,
            ray_alignment="yaw",
            reduction=r,
            **kwargs,
        )
        for r in ("min", "max", "mean", "none")
    ]


def test_terrain_height_above_a_step_and_the_floor_per_env_and_reduction():
    scene, sim = _scene(_height_sensors())
    # Env 0 over the step (top 0.2 m; the ring's rays, 0.4 m out, land on the floor), env 1
    # over the floor; frames at 0.5 m and 0.6 m.
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]])
    sensor = scene["h_min"]
    assert isinstance(sensor, TerrainHeightSensor)
    assert isinstance(sensor.data, TerrainHeightData)
    assert sensor.data.heights.shape == (2, 2)
    _close(sensor.data.heights, [[0.3, 0.4], [0.5, 0.6]])
    _close(scene["h_max"].data.heights, [[0.5, 0.6], [0.5, 0.6]])
    _close(scene["h_mean"].data.heights, [[0.46, 0.56], [0.5, 0.6]])
    none = scene["h_none"].data.heights
    assert none.shape == (2, 2, 5)
    _close(none[0, 0], [0.3, 0.5, 0.5, 0.5, 0.5])
    # The ray-cast fields are there too.
    assert sensor.data.distances.shape == (2, 10)
    # Tilting the frames does not change their "yaw"-aligned clearance.
    _place(scene, sim, [[1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]], rpy=[[0.3, 0.2, 1.0]] * 2)
    _close(sensor.data.heights[:, 0], [0.3, 0.5], atol=1e-4)


def test_terrain_height_inside_a_geom_is_zero_and_misses_follow_mjlab():
    scene, sim = _scene(_height_sensors(max_distance=0.45))
    # Env 0 inside the floating slab (its rays hit the slab's bottom from within), env 1 over
    # the step with the ring's rays beyond max_distance (0.5 m > 0.45 m).
    _place(scene, sim, [[-2.0, 0.0, 0.38], [1.0, 0.0, 0.5]])
    _close(scene["h_min"].data.heights[0], [0.0, 0.0])
    # Without the slab's backside rule the centre ray would give 0.38 - 0.3 = 0.08.
    _close(scene["h_none"].data.distances[0, 0], 0.08)
    _close(scene["h_mean"].data.heights[1, 0], (0.3 + 4 * 0.45) / 5)
    _close(scene["h_max"].data.heights[1, 0], 0.45)
    # All rays missing: the frame's own z clamped to [0, max_distance].
    up = TerrainHeightSensorCfg(
        name="up", frame=SITE, pattern=RingPatternCfg.single_ring(direction=(0, 0, 1))
    )
    scene, sim = _scene([up])
    _place(scene, sim, [[-1.0, 0.0, 0.3], [-1.0, 0.0, 12.0]])
    _close(scene["up"].data.heights, [[0.3], [10.0]])


# -- configuration errors ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: RayCastSensorCfg(name="r", frame=SITE, ray_alignment="up"), "ray_alignment"),
        (lambda: RayCastSensorCfg(name="r", frame=SITE, max_distance=0.0), "max_distance"),
        (lambda: RayCastSensorCfg(name="r", frame=ObjRef("joint", "j")), "frame.type"),
        (lambda: RayCastSensorCfg(name="r", frame=()), "frame"),
        (
            lambda: RayCastSensorCfg(name="r", frame=SITE, include_geom_groups=(0, 7)),
            "include_geom_groups",
        ),
        (lambda: RayCastSensorCfg(name="r", frame=SITE, pattern="grid"), "pattern"),
        (
            lambda: TerrainHeightSensorCfg(name="r", frame=SITE, reduction="median"),
            "TerrainHeightSensorCfg.reduction",
        ),
        (
            lambda: TerrainHeightSensorCfg(name="r", frame=SITE, max_distance=-1.0),
            "TerrainHeightSensorCfg.max_distance",
        ),
        (lambda: GridPatternCfg(resolution=0.0), "GridPatternCfg.resolution"),
        (lambda: GridPatternCfg(direction=(0, 0, 0)), "GridPatternCfg.direction"),
        (lambda: RingPatternCfg(rings=(), include_center=False), "RingPatternCfg"),
        (lambda: RingPatternCfg.Ring(0.1, 0), "Ring.num_samples"),
        (lambda: PinholeCameraPatternCfg(fovy=180.0), "PinholeCameraPatternCfg.fovy"),
        (lambda: ObjRef("frame", "x"), "ObjRef.type"),
    ],
)
def test_bad_config_names_the_field(make, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        make()


def test_unknown_frame_or_entity_fails_at_initialize_listing_what_exists():
    bad_site = RayCastSensorCfg(name="r", frame=ObjRef("site", "foot", entity="probe"))
    with pytest.raises(ValueError, match=r"no site named 'foot'.*'s_up'"):
        _scene([bad_site])
    bad_entity = RayCastSensorCfg(name="r", frame=ObjRef("site", "s", entity="robot"))
    with pytest.raises(ValueError, match=r"entity 'robot'.*\['ground', 'probe'\]"):
        _scene([bad_entity])


# -- MuJoCo Warp -------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.warp
@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda:0",
            marks=[
                pytest.mark.gpu,
                pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
            ],
        ),
    ],
)
def test_warp_backend_gives_the_same_rays_normals_and_heights(device):
    sensors = [
        RayCastSensorCfg(
            name="rays",
            frame=SITE,
            pattern=GridPatternCfg(size=(0.2, 0.0), resolution=0.1, direction=(1, 0, -1)),
        ),
        RayCastSensorCfg(name="incl", frame=SITE, pattern=DOWN_ONE, exclude_parent_body=False),
        RayCastSensorCfg(name="g0", frame=SITE, pattern=DOWN_ONE, include_geom_groups=(0,)),
        *_height_sensors()[:1],
    ]
    # Env 1 inside the slab (z 0.3..0.5): its bottom is 0.08 m below, the probe's sphere 0.05.
    pos = [[1.0, 0.0, 0.5], [-2.0, 0.0, 0.38]]
    rpy = [[0.0, 0.0, 0.5], [0.0, 0.0, 0.0]]
    results = {}
    for backend, dev in (("mujoco", "cpu"), ("warp", device)):
        scene, sim = _scene(sensors, backend=backend, device=dev)
        assert sim.backend == backend
        _place(scene, sim, pos, rpy=rpy)
        results[backend] = {name: scene[name].data for name in ("rays", "incl", "g0", "h_min")}
    ref, warp = results["mujoco"], results["warp"]
    for name in ref:
        for field in ("distances", "normals_w", "hit_pos_w", "frame_pos_w", "frame_quat_w"):
            torch.testing.assert_close(
                getattr(warp[name], field).cpu(), getattr(ref[name], field), atol=1e-4, rtol=0
            )
    # And the known values, on Warp.
    _close(warp["incl"].distances, [[0.05], [0.05]])
    _close(warp["g0"].distances, [[0.5], [0.08]])
    _close(warp["h_min"].heights, [[0.3, 0.4], [0.0, 0.0]])
    assert warp["h_min"].heights.device == torch.device(device)
