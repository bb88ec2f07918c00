"""mjlab-core describes itself in the policy file's schema (`mjlab.deploy.metadata`): the
managers' `deployment_spec` gives the spec objects the exported metadata holds, and the pieces
that both sides need (motion schema, Menagerie loader, headless GL backends) are the deploy
side's own, not copies."""

import inspect

import pytest

from mjlab.deploy import headless, menagerie
from mjlab.deploy import motion as deploy_motion
from mjlab.deploy.metadata import JointActionSpec, ObservationTermSpec, UnsupportedTermError
from mjlab.envs import ManagerBasedRlEnv
from mjlab.sensor import camera_render_opengl
from mjlab.tasks import load_env_cfg, robots
from mjlab.tasks.tracking import motion as core_motion

GO1 = "Mjlab-Velocity-Flat-Unitree-Go1"


def _env(task=GO1, mutate=None):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = 2
    if mutate is not None:
        mutate(cfg)
    return ManagerBasedRlEnv(cfg)


def test_observation_spec_follows_the_description_term_by_term():
    env = _env()
    om = env.observation_manager
    specs = om.deployment_spec("actor")
    terms = om.describe("actor")["terms"]
    assert all(isinstance(s, ObservationTermSpec) for s in specs)
    assert [s.name for s in specs] == [t["name"] for t in terms]
    for spec, term in zip(specs, terms, strict=True):
        assert [spec.dim] == term["shape"] and spec.func == term["func"]
        assert (spec.delay, spec.history_length) == (term["delay"], term["history_length"])
    # An entity selection that names only the entity is left out; the command name is kept.
    by_name = {s.name: s for s in specs}
    assert by_name["command"].params == {"command_name": "twist"}
    assert "asset_cfg" not in by_name["joint_pos"].params


def test_a_term_the_runtime_cannot_hold_is_refused_by_the_spec_naming_it():
    def unflattened(cfg):
        terms = cfg.observations["actor"].terms
        kept, *others = list(terms)
        for other in others:
            terms[other] = None
        terms[kept].history_length = 2
        terms[kept].flatten_history_dim = False

    env = _env("Mjlab-Cartpole-Balance", unflattened)
    kept = next(iter(env.observation_manager.group_terms["actor"]))
    with pytest.raises(UnsupportedTermError, match=rf"'actor/{kept}'.*flatten_history_dim"):
        env.observation_manager.deployment_spec("actor")
    with pytest.raises(KeyError, match="No observation group 'policy'"):
        env.observation_manager.deployment_spec("policy")


def test_action_spec_is_the_one_joint_term_in_action_order():
    env = _env()
    spec = env.action_manager.deployment_spec()
    (term,) = env.action_manager.describe()
    assert isinstance(spec, JointActionSpec)
    assert spec.action_type == "joint_position" and spec.entity == "robot"
    assert spec.joint_names == term["joint_names"] and spec.scale == term["scale"]
    assert spec.joint_vel_limit == term["joint_vel_limit"]


def test_core_uses_the_deploy_sides_shared_pieces_not_copies():
    assert issubclass(camera_render_opengl.CameraRenderError, headless.HeadlessGLError)
    assert "headless.gl_context(" in inspect.getsource(camera_render_opengl.gl_context)
    assert robots.menagerie_spec is menagerie.menagerie_spec
    assert robots.RobotModelError is menagerie.RobotModelError
    assert core_motion.ARRAY_FIELDS is deploy_motion.ARRAY_FIELDS


def test_a_missing_menagerie_robot_is_still_a_robot_model_error(monkeypatch, tmp_path):
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))
    with pytest.raises(robots.RobotModelError, match="MENAGERIE_ROOT"):
        robots.menagerie_spec("no_such_robot", "scene")


def test_the_exporter_reads_no_manager_the_env_describes_itself():
    from mjlab.export import from_env

    source = inspect.getsource(from_env)
    for internal in ("observation_manager", "action_manager", "command_manager", "scene[", "sim."):
        assert internal not in source, internal
