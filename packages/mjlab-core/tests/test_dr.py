"""mjlab.envs.mdp.dr: each term writes only the chosen envs, elements and axes of its model
field, relative to the compiled defaults, and derived constants follow."""

import math

import mujoco
import numpy as np
import pytest
import torch

from mjlab.entity import EntityCfg
from mjlab.envs import ManagerBasedRlEnv
from mjlab.envs.mdp import dr
from mjlab.managers import SceneEntityCfg
from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg
from mjlab.utils.math import quat_from_euler_xyz, quat_mul

# A cart-pole with an extra position-actuated arm and one of every randomizable element.
XML = """
<mujoco model="drtest">
  <compiler angle="radian" autolimits="true"/>
  <asset>
    <texture name="tex_a" type="2d" builtin="checker" width="8" height="8" rgb1="1 0 0" rgb2="0 1 0"/>
    <texture name="tex_b" type="2d" builtin="flat" width="8" height="8" rgb1="0 0 1"/>
    <material name="mat_a" texture="tex_a" rgba="1 1 1 1"/>
    <material name="mat_b" rgba="0.5 0.5 0.5 1" shininess="0.3"/>
  </asset>
  <worldbody>
    <body name="cart" pos="0 0 1">
      <joint name="slider" type="slide" axis="1 0 0" range="-2.8 2.8" damping="0.05" armature="0.01"/>
      <geom name="cart" type="box" size="0.15 0.1 0.06" mass="1" material="mat_a"/>
      <site name="tip" pos="0.1 0 0"/>
      <site name="tail" pos="-0.1 0 0"/>
      <camera name="cam" pos="0 -1 0" fovy="45" quat="1 0 0 0"/>
      <light name="lamp" pos="0 0 2" dir="0 0 -1" diffuse="0.5 0.5 0.5" cutoff="40" exponent="5"/>
      <body name="pole" pos="0 -0.11 0">
        <joint name="hinge" type="hinge" axis="0 1 0" damping="0.002" range="-1 1" stiffness="0.5"/>
        <geom name="pole" type="capsule" fromto="0 0 0 0 0 1" size="0.02" mass="0.1"/>
        <body name="arm" pos="0 0 1">
          <joint name="arm" type="hinge" axis="0 1 0" range="-2 2"/>
          <geom name="arm" type="box" size="0.05 0.05 0.2" mass="0.2" material="mat_b"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="couple" damping="0.1" stiffness="0.2" frictionloss="0.3" armature="0.05">
      <joint joint="hinge" coef="1"/><joint joint="arm" coef="-1"/>
    </fixed>
    <fixed name="couple2" damping="0.4"><joint joint="slider" coef="1"/></fixed>
  </tendon>
  <contact>
    <pair name="cart_arm" geom1="cart" geom2="arm" friction="0.8 0.8 0.01 0.001 0.001"/>
    <pair name="pole_arm" geom1="pole" geom2="arm" friction="0.6 0.6 0.01 0.001 0.001"/>
  </contact>
  <actuator>
    <motor name="slide" joint="slider" ctrlrange="-20 20"/>
    <position name="arm" joint="arm" kp="30" kv="2" forcerange="-5 5"/>
  </actuator>
</mujoco>
"""

ROWS = [1, 3]
OTHER = [0, 2]


def make_env(num_envs: int = 4, backend: str = "mujoco") -> ManagerBasedRlEnv:
    cfg = cartpole_balance_env_cfg(num_envs=num_envs)
    cfg.scene.entities["cartpole"] = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(XML), joint_vel_limit=math.inf
    )
    cfg.viewer.camera = None
    cfg.sim.backend = backend
    return ManagerBasedRlEnv(cfg)


@pytest.fixture(scope="module")
def env():
    env = make_env()
    env.reset()
    yield env
    env.close()


def sel(env, **names) -> SceneEntityCfg:
    cfg = SceneEntityCfg("cartpole", **{k: tuple(v) for k, v in names.items()})
    cfg.resolve(env.scene)
    return cfg


def view(env, field: str) -> torch.Tensor:
    return env.sim.expand_model_field(field)


def default(env, field: str) -> torch.Tensor:
    return torch.as_tensor(getattr(env.sim.mj_model, field)).to(torch.float64)


def assert_only(env, field, before, rows, cols, axes=None):
    """Everything outside [rows, cols(, axes)] equals `before`."""
    after = view(env, field).clone().double()
    mask = torch.ones(after.shape, dtype=torch.bool)
    r = torch.tensor(rows)[:, None]
    c = torch.tensor(cols)[None, :]
    if axes is None:
        mask[r, c] = False
    else:
        mask[r[..., None], c[..., None], torch.tensor(axes)[None, None, :]] = False
    torch.testing.assert_close(after[mask], before.double()[mask])


def gid(env, kind: str, name: str) -> int:
    e = env.scene["cartpole"]
    return getattr(e, f"{kind}_ids_global")[getattr(e, f"{kind}_names").index(name)]


def dof(env, joint: str) -> int:
    return int(env.sim.mj_model.jnt_dofadr[gid(env, "joint", joint)])


# -- distributions and operations ------------------------------------------------------------
def test_names_resolve_and_unknown_names_raise(env):
    cfg = sel(env, geom_names=["pole"])
    dr.geom_friction(env, ROWS, (0.5, 0.5), cfg, distribution="uniform", operation="scale")
    dr.geom_friction(env, ROWS, (0.5, 0.5), cfg, distribution=dr.uniform, operation=dr.scale)
    with pytest.raises(ValueError, match="valid"):
        dr.geom_friction(env, ROWS, (0.5, 1.0), cfg, distribution="normal")
    with pytest.raises(ValueError, match="valid"):
        dr.geom_friction(env, ROWS, (0.5, 1.0), cfg, operation="multiply")
    assert isinstance(dr.gaussian, dr.Distribution) and isinstance(dr.add, dr.Operation)
    assert dr.abs.uses_defaults is False and dr.scale.uses_defaults


def test_log_uniform_positive_and_gaussian_mean(env):
    lo, hi = torch.tensor(0.01), torch.tensor(100.0)
    x = dr.log_uniform.sample(lo, hi, (20000,), env.rng)
    assert (x >= 0.01).all() and (x <= 100.0).all()
    # Log-uniform: half the mass below the geometric mean (1.0).
    assert abs((x < 1.0).float().mean().item() - 0.5) < 0.03
    g = dr.gaussian.sample(torch.tensor(2.0), torch.tensor(0.5), (20000,), env.rng)
    assert abs(g.mean().item() - 2.0) < 0.02 and abs(g.std().item() - 0.5) < 0.02
    u = dr.uniform.sample(torch.tensor(-1.0), torch.tensor(3.0), (20000,), env.rng)
    assert u.min() >= -1.0 and u.max() <= 3.0 and abs(u.mean().item() - 1.0) < 0.05


def test_distribution_draws_land_in_range_on_a_field(env):
    cfg = sel(env, geom_names=["cart", "pole", "arm"])
    dr.geom_friction(env, None, (0.2, 0.4), cfg, distribution="log_uniform", operation="abs")
    x = view(env, "geom_friction")[:, :, 0][:, [gid(env, "geom", n) for n in ("cart", "pole")]]
    assert (x >= 0.2 - 1e-6).all() and (x <= 0.4 + 1e-6).all()
    assert len(torch.unique(x)) > 1  # independent draws per env and geom


# -- geoms -------------------------------------------------------------------------------------
def test_geom_friction_scale_touches_selected_geom_sliding_axis_only(env):
    g = gid(env, "geom", "pole")
    before = view(env, "geom_friction").clone()
    for _ in range(2):  # a second call re-draws from the defaults: no compounding
        dr.geom_friction(env, ROWS, (0.5, 0.5), sel(env, geom_names=["pole"]), operation="scale")
    got = view(env, "geom_friction")[ROWS, g].double()
    torch.testing.assert_close(got[:, 0], default(env, "geom_friction")[g, 0].expand(2) * 0.5)
    assert_only(env, "geom_friction", before, ROWS, [g], axes=[0])


def test_geom_pos_add_per_axis_dict(env):
    g = gid(env, "geom", "arm")
    before = view(env, "geom_pos").clone()
    dr.geom_pos(env, ROWS, {2: (0.1, 0.1)}, sel(env, geom_names=["arm"]), operation="add")
    dr.geom_pos(env, ROWS, {2: (0.1, 0.1)}, sel(env, geom_names=["arm"]), operation="add")
    torch.testing.assert_close(
        view(env, "geom_pos")[ROWS, g, 2].double(), (default(env, "geom_pos")[g, 2] + 0.1).expand(2)
    )
    assert_only(env, "geom_pos", before, ROWS, [g], axes=[2])


def test_geom_size_changes_only_selected_geoms(env):
    g = gid(env, "geom", "cart")
    before = view(env, "geom_size").clone()
    dr.geom_size(env, ROWS, (1.5, 1.5), sel(env, geom_names=["cart"]))
    torch.testing.assert_close(
        view(env, "geom_size")[ROWS, g].double(), (default(env, "geom_size")[g] * 1.5).expand(2, 3)
    )
    assert_only(env, "geom_size", before, ROWS, [g])


def test_geom_rgba_abs_and_shared_random(env):
    gs = [gid(env, "geom", n) for n in ("cart", "pole")]
    before = view(env, "geom_rgba").clone()
    dr.geom_rgba(
        env, ROWS, (0.0, 1.0), sel(env, geom_names=["cart", "pole"]), axes=[0], shared_random=True
    )
    x = view(env, "geom_rgba")[ROWS][:, gs, 0]
    assert torch.equal(x[:, 0], x[:, 1])  # one draw per env shared by both geoms
    assert (x >= 0).all() and (x <= 1).all()
    assert_only(env, "geom_rgba", before, ROWS, gs, axes=[0])


def test_geom_quat_composes_yaw_before_default(env):
    g = gid(env, "geom", "pole")
    before = view(env, "geom_quat").clone()
    dr.geom_quat(env, ROWS, yaw_range=(0.3, 0.3), asset_cfg=sel(env, geom_names=["pole"]))
    z = torch.zeros(1, dtype=torch.float64)
    want = quat_mul(quat_from_euler_xyz(z, z, z + 0.3), default(env, "geom_quat")[g][None])
    torch.testing.assert_close(view(env, "geom_quat")[ROWS, g].double(), want.expand(2, 4))
    assert_only(env, "geom_quat", before, ROWS, [g])


def test_geom_matid_picks_entity_materials(env):
    g = gid(env, "geom", "pole")
    mats = {gid(env, "material", "mat_a"), gid(env, "material", "mat_b")}
    before = view(env, "geom_matid").clone()
    dr.geom_matid(env, ROWS, sel(env, geom_names=["pole"]))
    assert set(view(env, "geom_matid")[ROWS, g].tolist()) <= mats
    assert_only(env, "geom_matid", before, ROWS, [g])


# -- bodies ------------------------------------------------------------------------------------
def test_body_mass_scales_and_subtree_mass_follows(env):
    b = gid(env, "body", "pole")
    cart = gid(env, "body", "cart")
    before = view(env, "body_mass").clone()
    for _ in range(2):
        dr.body_mass(env, ROWS, (2.0, 2.0), sel(env, body_names=["pole"]))
    m0 = default(env, "body_mass")
    torch.testing.assert_close(view(env, "body_mass")[ROWS, b].double(), (m0[b] * 2).expand(2))
    assert_only(env, "body_mass", before, ROWS, [b])
    sub0 = env.sim.get_model(0).body_subtreemass[cart]
    sub1 = env.sim.get_model(1).body_subtreemass[cart]
    np.testing.assert_allclose(sub1 - sub0, float(m0[b]), rtol=1e-6)


def test_body_com_offset_and_alias(env):
    assert dr.body_ipos is dr.body_com_offset
    b = gid(env, "body", "arm")
    before = view(env, "body_ipos").clone()
    dr.body_com_offset(env, ROWS, {0: (0.02, 0.02)}, sel(env, body_names=["arm"]))
    torch.testing.assert_close(
        view(env, "body_ipos")[ROWS, b, 0].double(),
        (default(env, "body_ipos")[b, 0] + 0.02).expand(2),
    )
    assert_only(env, "body_ipos", before, ROWS, [b], axes=[0])
    np.testing.assert_allclose(env.sim.get_model(1).body_ipos[b, 0], 0.02, atol=1e-9)


def test_body_pos_and_quat(env):
    b = gid(env, "body", "arm")
    before = view(env, "body_pos").clone()
    dr.body_pos(env, ROWS, {2: (-0.1, -0.1)}, sel(env, body_names=["arm"]))
    torch.testing.assert_close(
        view(env, "body_pos")[ROWS, b, 2].double(), (default(env, "body_pos")[b, 2] - 0.1).expand(2)
    )
    assert_only(env, "body_pos", before, ROWS, [b], axes=[2])
    before = view(env, "body_quat").clone()
    dr.body_quat(env, ROWS, roll_range=(0.2, 0.2), asset_cfg=sel(env, body_names=["arm"]))
    z = torch.zeros(1, dtype=torch.float64)
    want = quat_mul(quat_from_euler_xyz(z + 0.2, z, z), default(env, "body_quat")[b][None])
    torch.testing.assert_close(view(env, "body_quat")[ROWS, b].double(), want.expand(2, 4))
    assert_only(env, "body_quat", before, ROWS, [b])


def test_pseudo_inertia_alpha_scales_mass_and_inertia_keeps_com(env):
    b = gid(env, "body", "arm")
    cfg = sel(env, body_names=["arm"])
    before = view(env, "body_mass").clone()
    dr.pseudo_inertia(env, ROWS, asset_cfg=cfg)  # all zeros: unchanged body
    torch.testing.assert_close(
        view(env, "body_mass")[ROWS, b].double(), default(env, "body_mass")[b].expand(2)
    )
    dr.pseudo_inertia(env, ROWS, alpha_range=(0.1, 0.1), asset_cfg=cfg)
    k = math.exp(0.2)
    torch.testing.assert_close(
        view(env, "body_mass")[ROWS, b].double(), (default(env, "body_mass")[b] * k).expand(2)
    )
    torch.testing.assert_close(
        view(env, "body_ipos")[ROWS, b].double(),
        default(env, "body_ipos")[b].expand(2, 3),
        atol=1e-6,
        rtol=0,
    )
    got = view(env, "body_inertia")[ROWS, b].double().sort(-1).values
    want = (default(env, "body_inertia")[b] * k).sort().values
    torch.testing.assert_close(got, want.expand(2, 3), rtol=1e-5, atol=1e-9)
    assert_only(env, "body_mass", before, ROWS, [b])
    # Random log-Cholesky parameters always give a physically valid body.
    dr.pseudo_inertia(
        env,
        ROWS,
        alpha_range=(-0.2, 0.2),
        d_range=(-0.3, 0.3),
        s12_range=(-0.1, 0.1),
        t_range=(-0.05, 0.05),
        asset_cfg=cfg,
    )
    inertia = view(env, "body_inertia")[ROWS, b]
    assert (inertia > 0).all()
    assert (inertia[:, 0] + inertia[:, 1] >= inertia[:, 2] - 1e-9).all()
    q = view(env, "body_iquat")[ROWS, b].double()
    torch.testing.assert_close(q.norm(dim=-1), torch.ones(2, dtype=torch.float64))


# -- plain per-element fields ------------------------------------------------------------------
PLAIN = [
    (dr.site_pos, "site_pos", "site", "tip", "add"),
    (dr.cam_fovy, "cam_fovy", "camera", "cam", "scale"),
    (dr.cam_intrinsic, "cam_intrinsic", "camera", "cam", "add"),
    (dr.cam_pos, "cam_pos", "camera", "cam", "add"),
    (dr.joint_armature, "dof_armature", "dof", "slider", "scale"),
    (dr.joint_damping, "dof_damping", "dof", "hinge", "scale"),
    (dr.joint_friction, "dof_frictionloss", "dof", "hinge", "add"),
    (dr.joint_stiffness, "jnt_stiffness", "joint", "hinge", "scale"),
    (dr.tendon_armature, "tendon_armature", "tendon", "couple", "scale"),
    (dr.tendon_damping, "tendon_damping", "tendon", "couple", "scale"),
    (dr.tendon_friction, "tendon_frictionloss", "tendon", "couple", "scale"),
    (dr.tendon_stiffness, "tendon_stiffness", "tendon", "couple", "scale"),
    (dr.light_ambient, "light_ambient", "light", "lamp", "add"),
    (dr.light_attenuation, "light_attenuation", "light", "lamp", "scale"),
    (dr.light_cutoff, "light_cutoff", "light", "lamp", "scale"),
    (dr.light_diffuse, "light_diffuse", "light", "lamp", "scale"),
    (dr.light_dir, "light_dir", "light", "lamp", "add"),
    (dr.light_exponent, "light_exponent", "light", "lamp", "scale"),
    (dr.light_pos, "light_pos", "light", "lamp", "add"),
    (dr.light_specular, "light_specular", "light", "lamp", "add"),
    (dr.mat_emission, "mat_emission", "material", "mat_b", "add"),
    (dr.mat_rgba, "mat_rgba", "material", "mat_b", "scale"),
    (dr.mat_shininess, "mat_shininess", "material", "mat_b", "scale"),
    (dr.mat_specular, "mat_specular", "material", "mat_b", "add"),
    (dr.mat_texrepeat, "mat_texrepeat", "material", "mat_b", "scale"),
]


@pytest.mark.parametrize(("func", "field", "kind", "name", "op"), PLAIN, ids=[p[1] for p in PLAIN])
def test_plain_field_writes_selected_element_relative_to_default(env, func, field, kind, name, op):
    select = {"dof": "joint_names", "joint": "joint_names"}.get(kind, f"{kind}_names")
    col = dof(env, name) if kind == "dof" else gid(env, "joint" if kind == "joint" else kind, name)
    cfg = sel(env, **{select: [name]})
    before = view(env, field).clone()
    for _ in range(2):  # no compounding
        func(env, torch.tensor(ROWS), (0.5, 0.5), cfg, operation=op)
    d = default(env, field)[col]
    want = d * 0.5 if op == "scale" else d + 0.5
    torch.testing.assert_close(view(env, field)[ROWS, col].double(), want.expand(2, *d.shape))
    assert_only(env, field, before, ROWS, [col])


def test_aliases():
    assert dr.dof_armature is dr.joint_armature and dr.dof_damping is dr.joint_damping
    assert dr.dof_frictionloss is dr.joint_friction and dr.jnt_stiffness is dr.joint_stiffness
    assert dr.jnt_range is dr.joint_limits and dr.qpos0 is dr.joint_default_pos
    assert dr.tendon_frictionloss is dr.tendon_friction


def test_joint_armature_updates_entity_data_and_constants(env):
    cfg = sel(env, joint_names=["arm"])
    d = dof(env, "arm")
    dr.joint_armature(env, ROWS, (0.2, 0.2), cfg, operation="abs")
    data = env.scene["cartpole"].data
    j = env.scene["cartpole"].joint_names.index("arm")
    assert torch.allclose(data.joint_armature[ROWS, j], torch.tensor(0.2))
    assert data.joint_armature[OTHER, j].eq(float(default(env, "dof_armature")[d])).all()
    assert env.sim.get_model(1).dof_invweight0[d] != env.sim.get_model(0).dof_invweight0[d]


def test_site_and_cam_quat(env):
    for func, field, kind, name in (
        (dr.site_quat, "site_quat", "site", "tail"),
        (dr.cam_quat, "cam_quat", "camera", "cam"),
    ):
        col = gid(env, kind, name)
        before = view(env, field).clone()
        func(env, ROWS, pitch_range=(0.4, 0.4), asset_cfg=sel(env, **{f"{kind}_names": [name]}))
        z = torch.zeros(1, dtype=torch.float64)
        want = quat_mul(quat_from_euler_xyz(z, z + 0.4, z), default(env, field)[col][None])
        torch.testing.assert_close(view(env, field)[ROWS, col].double(), want.expand(2, 4))
        assert_only(env, field, before, ROWS, [col])


# -- joints ------------------------------------------------------------------------------------
def test_joint_limits_stay_ordered_and_entity_limits_follow(env):
    j = gid(env, "joint", "hinge")
    cfg = sel(env, joint_names=["hinge"])
    before = view(env, "jnt_range").clone()
    # Bounds drawn so that the raw lower exceeds the raw upper: the pair is sorted.
    dr.joint_limits(env, ROWS, {0: (0.5, 0.5), 1: (-0.7, -0.7)}, cfg, operation="abs")
    got = view(env, "jnt_range")[ROWS, j]
    torch.testing.assert_close(got.double(), torch.tensor([[-0.7, 0.5]] * 2, dtype=torch.float64))
    assert_only(env, "jnt_range", before, ROWS, [j])
    data = env.scene["cartpole"].data
    k = env.scene["cartpole"].joint_names.index("hinge")
    torch.testing.assert_close(data.joint_pos_limits[ROWS, k], torch.tensor([[-0.7, 0.5]] * 2))
    torch.testing.assert_close(data.joint_pos_limits[OTHER, k], torch.tensor([[-1.0, 1.0]] * 2))
    dr.joint_limits(env, ROWS, (-0.3, 0.3), cfg, operation="add")
    r = view(env, "jnt_range")[ROWS, j]
    assert (r[:, 0] <= r[:, 1]).all()
    assert (r[:, 0] >= -1.3).all() and (r[:, 1] <= 1.3).all()


def test_joint_default_pos_updates_qpos0_and_reset_defaults(env):
    k = env.scene["cartpole"].joint_names.index("hinge")
    adr = int(env.sim.mj_model.jnt_qposadr[gid(env, "joint", "hinge")])
    before = view(env, "qpos0").clone()
    data = env.scene["cartpole"].data
    other = data.default_joint_pos[OTHER].clone()
    for _ in range(2):
        dr.joint_default_pos(env, ROWS, (0.25, 0.25), sel(env, joint_names=["hinge"]))
    torch.testing.assert_close(
        view(env, "qpos0")[ROWS, adr].double(), torch.full((2,), 0.25, dtype=torch.float64)
    )
    assert_only(env, "qpos0", before, ROWS, [adr])
    torch.testing.assert_close(data.default_joint_pos[ROWS, k], torch.full((2,), 0.25))
    torch.testing.assert_close(data.default_joint_pos[OTHER], other)
    np.testing.assert_allclose(env.sim.get_model(3).qpos0[adr], 0.25)


# -- materials, pairs --------------------------------------------------------------------------
def test_mat_texid_writes_role_column(env):
    m = gid(env, "material", "mat_b")
    texs = {gid(env, "texture", "tex_a"), gid(env, "texture", "tex_b")}
    before = view(env, "mat_texid").clone()
    role = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
    dr.mat_texid(env, ROWS, sel(env, material_names=["mat_b"]), role="rgb")
    assert set(view(env, "mat_texid")[ROWS, m, role].tolist()) <= texs
    assert_only(env, "mat_texid", before, ROWS, [m], axes=[role])
    with pytest.raises(ValueError, match="role"):
        dr.mat_texid(env, ROWS, sel(env, material_names=["mat_b"]), role="sparkle")


def test_pair_friction_isotropic_selected_pair_only(env):
    p = gid(env, "pair", "pole_arm")
    before = view(env, "pair_friction").clone()
    dr.pair_friction(env, ROWS, (0.5, 1.5), sel(env, pair_names=["pole_arm"]), operation="scale")
    x = view(env, "pair_friction")[ROWS, p]
    assert torch.equal(x[:, 0], x[:, 1])
    d = default(env, "pair_friction")[p, 0]
    assert (x[:, 0].double() >= d * 0.5 - 1e-9).all() and (x[:, 0].double() <= d * 1.5 + 1e-9).all()
    assert_only(env, "pair_friction", before, ROWS, [p], axes=[0, 1])
    dr.pair_friction(
        env, ROWS, (0.5, 1.5), sel(env, pair_names=["pole_arm"]), axes=[0, 1], isotropic=False
    )
    x = view(env, "pair_friction")[ROWS, p]
    assert not torch.equal(x[:, 0], x[:, 1])


# -- actuators and encoders --------------------------------------------------------------------
def test_pd_gains_on_position_actuator(env):
    a = 1  # the arm's position actuator
    k = env.scene["cartpole"].joint_names.index("arm")
    cfg = sel(env, joint_names=["arm"])
    g0, b0 = view(env, "actuator_gainprm").clone(), view(env, "actuator_biasprm").clone()
    for _ in range(2):
        dr.pd_gains(env, ROWS, (2.0, 2.0), (0.5, 0.5), cfg)
    gain, bias = view(env, "actuator_gainprm"), view(env, "actuator_biasprm")
    torch.testing.assert_close(
        gain[ROWS, a, 0].double(), torch.full((2,), 60.0, dtype=torch.float64)
    )
    torch.testing.assert_close(
        bias[ROWS, a, 1].double(), torch.full((2,), -60.0, dtype=torch.float64)
    )
    torch.testing.assert_close(
        bias[ROWS, a, 2].double(), torch.full((2,), -1.0, dtype=torch.float64)
    )
    assert_only(env, "actuator_gainprm", g0, ROWS, [a], axes=[0])
    assert_only(env, "actuator_biasprm", b0, ROWS, [a], axes=[1, 2])
    data = env.scene["cartpole"].data
    assert (
        data.joint_stiffness[ROWS, k].eq(60.0).all()
        and data.joint_stiffness[OTHER, k].eq(30.0).all()
    )
    assert data.joint_damping[ROWS, k].eq(1.0).all()
    with pytest.raises(ValueError, match="position"):
        dr.pd_gains(env, ROWS, (1.0, 2.0), (1.0, 2.0), sel(env, joint_names=["slider"]))


def test_effort_limits_symmetric_range(env):
    a = 1
    k = env.scene["cartpole"].joint_names.index("arm")
    before = view(env, "actuator_forcerange").clone()
    dr.effort_limits(env, ROWS, (0.5, 0.5), sel(env, joint_names=["arm"]))
    torch.testing.assert_close(
        view(env, "actuator_forcerange")[ROWS, a].double(),
        torch.tensor([[-2.5, 2.5]] * 2, dtype=torch.float64),
    )
    assert_only(env, "actuator_forcerange", before, ROWS, [a])
    assert env.scene["cartpole"].data.joint_effort_limits[ROWS, k].eq(2.5).all()
    with pytest.raises(ValueError, match="position"):
        dr.effort_limits(env, ROWS, (0.5, 1.0), sel(env, joint_names=["slider"]))


def test_encoder_bias_shifts_reported_positions_not_physics(env):
    data = env.scene["cartpole"].data
    k = env.scene["cartpole"].joint_names.index("hinge")
    qpos = env.sim.data.qpos.clone()
    dr.encoder_bias(env, ROWS, (0.1, 0.1), sel(env, joint_names=["hinge"]))
    assert torch.equal(env.sim.data.qpos, qpos)
    bias = data.encoder_bias
    assert bias[ROWS, k].sub(0.1).abs().max() < 1e-6
    assert (
        bias[OTHER].eq(0).all() and bias[:, [i for i in range(bias.shape[1]) if i != k]].eq(0).all()
    )
    torch.testing.assert_close(data.joint_pos_biased, data.joint_pos + bias)
    from mjlab.envs.mdp import joint_pos_rel

    asset = sel(env, joint_names=["hinge"])
    true, seen = joint_pos_rel(env, asset_cfg=asset), joint_pos_rel(env, True, asset)
    torch.testing.assert_close(seen - true, bias[:, [k]])


def test_bad_axis_and_range_raise(env):
    cfg = sel(env, geom_names=["pole"])
    with pytest.raises(ValueError, match="axis"):
        dr.geom_pos(env, ROWS, {5: (0.0, 0.1)}, cfg)
    with pytest.raises(ValueError, match="nope"):
        dr.geom_pos(env, ROWS, {"nope": (0.0, 0.1)}, cfg)
    with pytest.raises(ValueError, match="no range"):
        dr.geom_pos(env, ROWS, {0: (0.0, 0.1)}, cfg, axes=[1])


@pytest.mark.slow
def test_geom_friction_and_body_mass_on_warp():
    env = make_env(num_envs=2, backend="warp")
    try:
        g = gid(env, "geom", "pole")
        b = gid(env, "body", "pole")
        dr.geom_friction(env, [1], (2.0, 2.0), sel(env, geom_names=["pole"]))
        dr.body_mass(env, [1], (3.0, 3.0), sel(env, body_names=["pole"]))
        f = view(env, "geom_friction").cpu().double()
        torch.testing.assert_close(f[1, g, 0], default(env, "geom_friction")[g, 0] * 2)
        torch.testing.assert_close(f[0, g, 0], default(env, "geom_friction")[g, 0])
        m = view(env, "body_mass").cpu().double()
        torch.testing.assert_close(m[1, b], default(env, "body_mass")[b] * 3)
        torch.testing.assert_close(m[0, b], default(env, "body_mass")[b])
        # geom_size also rewrites MuJoCo Warp's (ngeom, 2, 3) geom_aabb.
        dr.geom_size(env, [1], (1.5, 1.5), sel(env, geom_names=["cart"]))
        c = gid(env, "geom", "cart")
        half = view(env, "geom_aabb").cpu().double()[1, c, 1]
        torch.testing.assert_close(half, default(env, "geom_size")[c] * 1.5)
        env.sim.step()
    finally:
        env.close()


def test_dr_term_runs_as_startup_event():
    from mjlab.managers import EventTermCfg

    cfg = cartpole_balance_env_cfg(num_envs=2)
    cfg.scene.entities["cartpole"] = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(XML), joint_vel_limit=math.inf
    )
    cfg.viewer.camera = None
    cfg.sim.backend = "mujoco"
    pole = SceneEntityCfg("cartpole", body_names=("pole",))
    cfg.events["pole_mass"] = EventTermCfg(
        func=dr.body_mass, mode="startup", params={"ranges": (2.0, 2.0), "asset_cfg": pole}
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        b = gid(env, "body", "pole")
        torch.testing.assert_close(
            view(env, "body_mass")[:, b].double(), (default(env, "body_mass")[b] * 2).expand(2)
        )
        assert pole.body_ids == slice(None)  # the given config is not mutated
    finally:
        env.close()


def test_name_keyed_ranges_give_each_matched_element_its_range(env):
    cart, pole = gid(env, "body", "cart"), gid(env, "body", "pole")
    before = view(env, "body_mass").clone()
    dr.body_mass(env, ROWS, {"cart": (2.0, 2.0), "po.*": (3.0, 3.0)}, sel(env), operation="scale")
    m0 = default(env, "body_mass")
    torch.testing.assert_close(
        view(env, "body_mass")[ROWS, cart].double(), (m0[cart] * 2).expand(2)
    )
    torch.testing.assert_close(
        view(env, "body_mass")[ROWS, pole].double(), (m0[pole] * 3).expand(2)
    )
    assert_only(env, "body_mass", before, ROWS, [cart, pole])


def test_geom_size_recomputes_broadphase_bounds(env):
    g = gid(env, "geom", "cart")  # a box
    dr.geom_size(env, ROWS, (2.0, 2.0), sel(env, geom_names=["cart"]))
    half = default(env, "geom_size")[g] * 2
    m1, m0 = env.sim.get_model(1), env.sim.get_model(0)
    np.testing.assert_allclose(m1.geom_rbound[g], float(half.norm()), rtol=1e-6)
    np.testing.assert_allclose(m1.geom_aabb[g, 3:6], half.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m0.geom_rbound[g], float(env.sim.mj_model.geom_rbound[g]))


def test_pseudo_inertia_t_shifts_centre_of_mass(env):
    b = gid(env, "body", "arm")
    dr.pseudo_inertia(env, ROWS, t1_range=(0.05, 0.05), asset_cfg=sel(env, body_names=["arm"]))
    want = default(env, "body_ipos")[b] + torch.tensor([0.05, 0.0, 0.0], dtype=torch.float64)
    torch.testing.assert_close(view(env, "body_ipos")[ROWS, b].double(), want.expand(2, 3))
    torch.testing.assert_close(
        view(env, "body_mass")[ROWS, b].double(), default(env, "body_mass")[b].expand(2)
    )


def test_with_mjlab_dr_randomizes_a_velocity_task_and_leaves_its_config():
    from mjlab.tasks.velocity.config.go1 import GO1_VELOCITY
    from mjlab.tasks.velocity.velocity_env_cfg import velocity_env_cfg, with_mjlab_dr

    base = velocity_env_cfg(GO1_VELOCITY, rough=False, num_envs=4)
    cfg = with_mjlab_dr(base, GO1_VELOCITY)
    assert "encoder_bias" not in base.events
    assert "biased" not in base.observations["actor"].terms["joint_pos"].params
    assert cfg.observations["actor"].terms["joint_pos"].params == {"biased": True}
    assert "biased" not in cfg.observations["critic"].terms["joint_pos"].params
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        robot = env.scene["robot"]
        bias = robot.data.encoder_bias
        assert bias.abs().max() <= 0.015 and bias.abs().min() > 0
        assert bias.std(dim=0).min() > 0  # drawn per env
        acts = torch.as_tensor(robot.joint_actuator_ids)
        nominal = torch.as_tensor(env.sim.mj_model.actuator_gainprm[acts.numpy(), 0])
        ratio = robot.data.joint_stiffness.cpu().double() / nominal
        assert ratio.min() >= 0.9 - 1e-6 and ratio.max() <= 1.1 + 1e-6 and ratio.std() > 0
        base_id = robot.body_ids_global[robot.find_bodies((GO1_VELOCITY.robot.base_body,))[0][0]]
        ipos = env.sim.expand_model_field("body_ipos")[:, base_id]
        shift = ipos - torch.as_tensor(env.sim.mj_model.body_ipos[base_id], dtype=ipos.dtype)
        assert shift.abs().max() <= 0.025 + 1e-6 and shift.abs().max() > 0
        from mjlab.envs.mdp import joint_pos_rel

        seen = joint_pos_rel(env, True)
        torch.testing.assert_close(seen - joint_pos_rel(env), bias)
    finally:
        env.close()


def test_state_taken_after_randomization_restores_into_a_fresh_env():
    """`mdp.dr`'s cache of compiled values is not env state: a state captured after a draw
    restores into an env with the same per-world fields that has not drawn through `dr`, and
    brings the drawn values."""
    a, b = make_env(2), make_env(2)
    try:
        a.reset()
        b.reset()
        dr.geom_friction(a, None, (0.5, 0.9), sel(a, geom_names=["pole"]))
        b.sim.expand_model_field("geom_friction")
        assert "_dr_defaults" in a.__dict__ and "_dr_defaults" not in b.__dict__
        b.set_state(a.get_state())
        torch.testing.assert_close(
            b.sim.expand_model_field("geom_friction"), a.sim.expand_model_field("geom_friction")
        )
    finally:
        a.close()
        b.close()


def _gaussian_mass_cfg(ranges, distribution="gaussian"):
    from mjlab.managers import EventTermCfg

    cfg = cartpole_balance_env_cfg(num_envs=64)
    cfg.scene.entities["cartpole"] = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(XML), joint_vel_limit=math.inf
    )
    cfg.viewer.camera = None
    cfg.events["pole_mass"] = EventTermCfg(
        func=dr.body_mass,
        mode="startup",
        params={
            "ranges": ranges,
            "asset_cfg": SceneEntityCfg("cartpole", body_names=("pole",)),
            "distribution": distribution,
            "operation": "scale",
        },
    )
    return cfg


def test_gaussian_ranges_are_mean_and_std_in_an_env_config():
    # (1.0, 0.1) is (mean, std) for a gaussian term, not an unordered (lo, hi) range.
    env = ManagerBasedRlEnv(_gaussian_mass_cfg((1.0, 0.1)))
    try:
        pole = gid(env, "body", "pole")
        mass = view(env, "body_mass")[:, pole].double() / default(env, "body_mass")[pole]
        assert abs(mass.mean().item() - 1.0) < 0.05 and 0.05 < mass.std().item() < 0.15
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"\['ranges'\] is \(1.0, -0.1\).*std must be >= 0"):
        ManagerBasedRlEnv(_gaussian_mass_cfg((1.0, -0.1)))
    with pytest.raises(ValueError, match=r"\['ranges'\] is \(1.0, 0.1\).*lo <= hi"):
        ManagerBasedRlEnv(_gaussian_mass_cfg((1.0, 0.1), distribution="uniform"))


def test_every_range_of_a_gaussian_term_is_mean_and_std():
    from mjlab.utils.config import ConfigError, validate_config

    params = {"distribution": dr.gaussian, "roll_range": (0.1, 0.02), "ranges": {0: (1.0, 0.1)}}
    validate_config(params, "params")  # (mean, std) pairs, not unordered (lo, hi) ones
    with pytest.raises(ConfigError, match=r"params\['roll_range'\] is \(0.1, -0.02\).*std"):
        validate_config({**params, "roll_range": (0.1, -0.02)}, "params")
    with pytest.raises(ConfigError, match=r"params\['roll_range'\] is \(0.1, 0.02\).*lo <= hi"):
        validate_config({**params, "distribution": "uniform"}, "params")
