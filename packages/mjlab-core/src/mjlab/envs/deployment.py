"""What a trained policy needs to run on a robot, described by the env itself in the policy
file's schema (`mjlab.deploy.metadata.DeploymentMetadata`, mjlab-export's torch-free contract).

`deployment_metadata(env)` (also `ManagerBasedRlEnv.deployment_metadata`) gathers the managers'
own descriptions (`ObservationManager.deployment_spec`, `ActionManager.deployment_spec`), the
image inputs, the commands, the tracked motion, the robot's model and contact parameters and
the MuJoCo options. What the robot-side runtime cannot reproduce exactly raises
`mjlab.deploy.metadata.UnsupportedTermError` naming the term and the fix; `mjlab.export`
re-raises it as its `ExportError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from importlib import metadata as importlib_metadata
from typing import TYPE_CHECKING, Any

import mujoco

from mjlab.deploy.metadata import (
    CommandSpec,
    DeploymentMetadata,
    ImageInputSpec,
    JointActionSpec,
    MotionSpec,
    ObservationTermSpec,
    RobotModelSpec,
    UnsupportedTermError,
)

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_PACKAGES = ("mjlab-core", "mjlab-rl", "mjlab-export", "mujoco", "torch", "rsl-rl-lib", "onnx")


def _json_value(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if hasattr(value, "name") and isinstance(value.name, str):  # e.g. SceneEntityCfg
        return value.name
    return repr(value)


def _menagerie_oid(name: str) -> str | None:
    """The registry's content id of Menagerie robot `name`; None when mujoco-menagerie is not
    installed or does not list it (the id is informative, the export does not need it)."""
    try:
        import mujoco_menagerie
    except ImportError:
        return None
    try:
        return mujoco_menagerie.get(name).oid
    except mujoco_menagerie.UnknownRobotError:
        return None


def _observation_specs(env: ManagerBasedRlEnv, group: str) -> list[ObservationTermSpec]:
    try:
        return env.observation_manager.deployment_spec(group)
    except KeyError as err:
        raise UnsupportedTermError(str(err.args[0]) if err.args else str(err)) from err


IMAGE_TERMS = {"camera_rgb": "rgb", "camera_depth": "depth"}
"""mjlab.envs.mdp image terms the runtime reproduces (`OnnxPolicy.preprocess_image`)."""


def _image_specs(env: ManagerBasedRlEnv, groups: tuple[str, ...]) -> list[ImageInputSpec]:
    specs = []
    om = env.observation_manager
    for group in groups:
        try:
            description = om.describe(group)
        except KeyError as err:
            raise UnsupportedTermError(str(err.args[0]) if err.args else str(err)) from err
        terms = description["terms"]
        where = f"Image observation group '{group}'"
        if len(terms) != 1:
            raise UnsupportedTermError(
                f"{where} has terms {[t['name'] for t in terms]}; an exported image input is one "
                "camera term (mjlab.envs.mdp.camera_rgb or camera_depth) per group."
            )
        (term,) = terms
        data_type = IMAGE_TERMS.get(term["func"])
        if data_type is None:
            raise UnsupportedTermError(
                f"{where}: term '{term['name']}' is {term['func']}; the robot runtime "
                f"reproduces only {sorted(IMAGE_TERMS)}."
            )
        for key, neutral in (("history_length", 0), ("delay", 0), ("scale", None), ("clip", None)):
            if term[key] != neutral:
                raise UnsupportedTermError(
                    f"{where}: term '{term['name']}' sets {key}={term[key]!r}; image inputs are "
                    f"exported without it (leave {key} at {neutral!r})."
                )
        sensor = env.scene[term["params"]["sensor_name"]]
        cam, model, cid = sensor.cfg, env.sim.mj_model, int(sensor.camera_id)
        body = int(model.cam_bodyid[cid])
        # As compiled (an MJCF camera's own pose and fov, a lookat turned into its quaternion),
        # before any per-env jitter.
        camera = {
            "sensor": cam.name,
            "camera_name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, cid),
            "parent_body": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or "world",
            "pos": [float(v) for v in model.cam_pos[cid]],
            "quat": [float(v) for v in model.cam_quat[cid]],
            "fovy": float(model.cam_fovy[cid]),
            "width": int(cam.width),
            "height": int(cam.height),
        }
        max_depth = None
        if data_type == "depth":
            max_depth = term["params"].get("max_depth") or cam.max_depth
            if max_depth > cam.max_depth:
                raise UnsupportedTermError(
                    f"{where}: term '{term['name']}' normalizes depth by max_depth={max_depth} m "
                    f"but the camera '{cam.name}' reports at most {cam.max_depth} m, so training "
                    "never saw 1.0 where a robot's camera would; give the term at most the "
                    "camera's max_depth."
                )
        specs.append(
            ImageInputSpec(
                name=group,
                term=term["name"],
                data_type=data_type,
                shape=[int(d) for d in term["shape"]],
                max_depth=max_depth,
                camera={k: _json_value(v) for k, v in camera.items()},
            )
        )
    return specs


def _joint_vel_limits(
    term: JointActionSpec, override: float | Sequence[float] | Mapping[str, float] | None
) -> list[float]:
    """Per action joint speed limit: the override where it gives one, else the entity's."""
    names = list(term.joint_names)
    limits: list[float | None] = list(term.joint_vel_limit)
    if isinstance(override, Mapping):
        unknown = sorted(set(override) - set(names))
        if unknown:
            raise UnsupportedTermError(
                f"joint_vel_limit names {unknown}, which are not action joints {names}."
            )
        limits = [override.get(n, limits[i]) for i, n in enumerate(names)]
    elif isinstance(override, (int, float)):
        limits = [float(override)] * len(names)
    elif override is not None:
        if len(override) != len(names):
            raise UnsupportedTermError(
                f"joint_vel_limit has {len(override)} values; the action term drives "
                f"{len(names)} joints {names}."
            )
        limits = [float(v) for v in override]
    missing = [n for n, v in zip(names, limits, strict=True) if v is None]
    if missing:
        raise UnsupportedTermError(
            f"No speed limit for joints {missing} of entity '{term.entity}': the robot's "
            "control loop needs one to fault on a runaway joint. Set "
            f"EntityCfg.joint_vel_limit from the motor data sheet (rad/s), pass "
            "joint_vel_limit= to metadata_from_env, or state math.inf for no limit."
        )
    return [float(v) for v in limits]  # type: ignore[arg-type]


def deployment_metadata(
    env: ManagerBasedRlEnv,
    task_id: str = "",
    actor_group: str = "actor",
    clip_actions: float | None = None,
    image_groups: tuple[str, ...] = (),
    joint_vel_limit: float | Sequence[float] | Mapping[str, float] | None = None,
) -> DeploymentMetadata:
    """Describe `env`'s action term and its `actor_group` observation group for a robot.

    Built from `ObservationManager.deployment_spec(actor_group)` and
    `ActionManager.deployment_spec()`: per-joint values follow the action term's joint order and
    the compiled model's nominal gains, not any per-env randomization; observation noise is
    training-only and left out.

    Args:
        env: a live `ManagerBasedRlEnv`.
        task_id: recorded as `task_id`.
        actor_group: the observation group the policy reads.
        clip_actions: the training wrapper's clamp of the raw actions to [-c, c] (rsl_rl's
            `clip_actions`; `MjlabOnPolicyRunner` passes it), or None.
        image_groups: observation groups the actor also reads as images (rsl-rl's CNN groups),
            in the network's input order; each holds one `camera_rgb`/`camera_depth` term and
            becomes an `ImageInputSpec` (metadata v4).
        joint_vel_limit: the joints' speed limits, rad/s, instead of the entity's
            (`EntityCfg.joint_vel_limit`): one number, one per action joint, or {joint name:
            value} for some; `math.inf` states "no limit" (the robot's speed check is off).
            None: the entity's, which must cover every action joint.

    Raises:
        UnsupportedTermError (a ValueError): something the runtime cannot reproduce exactly: several
            action terms or one that does not command joints, no `actor_group` group, a group
            that is not concatenated, a term that is not flat or keeps an unflattened history.
            The message names the term and the fix. For `image_groups`: a group that is not one
            camera term without history, delay, scale or clip. A joint without a speed limit
            (neither `EntityCfg.joint_vel_limit` nor `joint_vel_limit` gives one).
    """
    observations = _observation_specs(env, actor_group)
    images = _image_specs(env, tuple(image_groups))
    term = env.action_manager.deployment_spec()
    entity = env.scene[term.entity]
    commands = []
    motion = None
    for name, cmd in env.command_manager.terms.items():
        # A command that plays a reference motion describes it (mjlab.tasks.tracking).
        describe_motion = getattr(cmd, "deployment_motion", None)
        if callable(describe_motion):
            motion = MotionSpec(command_name=name, **describe_motion())
        ranges = getattr(cmd.cfg, "ranges", None)
        rng = {}
        if dataclasses.is_dataclass(ranges):
            rng = {k: list(v) for k, v in dataclasses.asdict(ranges).items() if v is not None}
        commands.append(
            CommandSpec(
                name=name,
                dim=int(cmd.command.shape[-1]),
                ranges=rng,
                components=list(getattr(cmd, "components", ())),
            )
        )
    velocity_limits = _joint_vel_limits(term, joint_vel_limit)
    init = entity.cfg.init_state
    menagerie = getattr(entity.cfg, "menagerie", None)
    oid = None
    if menagerie is not None:
        oid = _menagerie_oid(menagerie[0])
    versions = {}
    for pkg in _PACKAGES:
        try:
            versions[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            continue
    sim_cfg = env.cfg.sim.mujoco
    model = env.sim.mj_model
    g = list(entity.geom_ids_global)
    geom_params = {
        "condim": model.geom_condim[g].tolist(),
        "friction": model.geom_friction[g].tolist(),
        "priority": model.geom_priority[g].tolist(),
        "solref": model.geom_solref[g].tolist(),
        "solimp": model.geom_solimp[g].tolist(),
        "margin": model.geom_margin[g].tolist(),
        "gap": model.geom_gap[g].tolist(),
        "contype": model.geom_contype[g].tolist(),
        "conaffinity": model.geom_conaffinity[g].tolist(),
    }
    return DeploymentMetadata(
        task_id=task_id,
        robot=RobotModelSpec(
            menagerie_name=None if menagerie is None else menagerie[0],
            entry=None if menagerie is None else menagerie[1],
            oid=oid,
            init_pos=[float(v) for v in init.pos],
            init_rot=[float(v) for v in init.rot],
            geom_params=geom_params,
        ),
        joint_names=list(term.joint_names),
        stiffness=term.stiffness,
        damping=term.damping,
        effort_limit=term.effort_limit,
        armature=term.armature,
        default_joint_pos=term.default_joint_pos,
        action_scale=term.scale,
        action_offset=term.offset,
        action_clip=term.clip,
        clip_actions=clip_actions,
        joint_pos_limits=term.joint_pos_limits,
        clamp_to_joint_limits=term.clamp_to_joint_limits,
        joint_vel_limit=velocity_limits,
        action_type=term.action_type,
        observations=observations,
        commands=commands,
        motion=motion,
        images=images,
        step_dt=float(env.step_dt),
        physics_dt=float(env.physics_dt),
        decimation=int(env.cfg.decimation),
        mujoco_options={k: _json_value(v) for k, v in dataclasses.asdict(sim_cfg).items()},
        package_versions=versions,
    )
