"""Build `DeploymentMetadata` from a live mjlab env (duck-typed: no mjlab-core import)."""

from __future__ import annotations

import dataclasses
from importlib import metadata as importlib_metadata
from typing import Any

from mjlab.deploy.metadata import (
    CommandSpec,
    DeploymentMetadata,
    ObservationTermSpec,
    RobotModelSpec,
)

_ACTION_TYPES = {
    "JointPositionAction": "joint_position",
    "JointVelocityAction": "joint_velocity",
    "JointEffortAction": "joint_effort",
}
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


def metadata_from_env(
    env: Any, task_id: str = "", actor_group: str = "actor"
) -> DeploymentMetadata:
    """Describe `env`'s first action term and its actor observation group.

    Per-joint values follow the action term's joint order (the entity's joint order), read
    from the compiled model's nominal gains, not from any per-env randomization.

    Raises:
        ValueError: the env has no joint action term or no `actor_group` observation group.
    """
    terms = getattr(env.action_manager, "terms", {})
    if not terms:
        raise ValueError("The env has no action terms to describe.")
    term = next(iter(terms.values()))
    entity = term.entity
    ids = list(term.joint_ids)
    data = entity.data
    gains = data.nominal_gains
    om = env.observation_manager
    if actor_group not in om.group_terms:
        raise ValueError(f"No observation group '{actor_group}'; groups: {list(om.group_terms)}.")
    observations = []
    for name, cfg in om.group_terms[actor_group].items():
        dim = int(om._buffers[actor_group][name].buf.shape[-1])
        func = getattr(cfg.func, "__name__", type(cfg.func).__name__)
        scale = (
            cfg.scale
            if cfg.scale is None or isinstance(cfg.scale, float | int)
            else list(cfg.scale)
        )
        params = {k: _json_value(v) for k, v in cfg.params.items() if k != "asset_cfg"}
        observations.append(
            ObservationTermSpec(
                name=name,
                func=func,
                dim=dim,
                scale=None
                if scale is None
                else (float(scale) if not isinstance(scale, list) else scale),
                clip=None if cfg.clip is None else [float(cfg.clip[0]), float(cfg.clip[1])],
                history_length=int(cfg.history_length),
                params=params,
            )
        )
    commands = []
    for name, cmd in env.command_manager.terms.items():
        ranges = getattr(cmd.cfg, "ranges", None)
        rng = {}
        if dataclasses.is_dataclass(ranges):
            rng = {k: list(v) for k, v in dataclasses.asdict(ranges).items() if v is not None}
        commands.append(CommandSpec(name=name, dim=int(cmd.command.shape[-1]), ranges=rng))
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
        joint_names=[entity.joint_names[j] for j in ids],
        stiffness=[float(gains["stiffness"][j]) for j in ids],
        damping=[float(gains["damping"][j]) for j in ids],
        effort_limit=[float(gains["effort_limit"][j]) for j in ids],
        armature=[
            float(model.dof_armature[model.jnt_dofadr[entity.joint_ids_global[j]]]) for j in ids
        ],
        default_joint_pos=[float(v) for v in data.default_joint_pos[0, ids].tolist()],
        action_scale=[float(v) for v in term.scale.tolist()],
        action_offset=[float(v) for v in term.offset[0].tolist()],
        action_type=_ACTION_TYPES.get(type(term).__name__, type(term).__name__),
        observations=observations,
        commands=commands,
        step_dt=float(env.step_dt),
        physics_dt=float(env.physics_dt),
        decimation=int(env.cfg.decimation),
        mujoco_options={k: _json_value(v) for k, v in dataclasses.asdict(sim_cfg).items()},
        package_versions=versions,
    )
