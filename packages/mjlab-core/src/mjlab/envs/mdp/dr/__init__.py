"""Domain randomization of model fields (mjlab 1.6's `mjlab.envs.mdp.dr`): per-env draws
from a `Distribution`, combined with the compiled-model defaults by an `Operation`.

Each term is an event function `(env, env_ids, ...) -> None`; use it in an `EventTermCfg`,
usually with mode "startup" (drawn once per env when the env is built) or "reset":

    from mjlab.envs.mdp import dr
    from mjlab.managers import EventTermCfg, SceneEntityCfg

    cfg.events["dr_foot_friction"] = EventTermCfg(  # a new key: "foot_friction" is the Go1's own
        func=dr.geom_friction,
        mode="startup",
        params={
            "ranges": (0.3, 1.2),
            "asset_cfg": SceneEntityCfg("robot", geom_names=("FR", "FL", "RR", "RL")),  # Go1 feet
            "operation": "abs",
        },
    )

Parameters most terms share:

- `ranges`: (lo, hi) for every selected axis; a dict {axis index: (lo, hi)}; or a dict
  {name regex: (lo, hi)} giving the matched elements (among the entity's) their own range.
  With `distribution=gaussian` a range is (mean, std) instead (std >= 0).
- `asset_cfg`: the entity and the elements to randomize, as a `SceneEntityCfg` with
  `body_names`, `geom_names`, `joint_names`, `site_names`, ... (default:
  `SceneEntityCfg("robot")`, all of that entity's elements).
- `distribution`: `uniform` (default), `log_uniform` (bounds > 0) or `gaussian`, or their
  names as strings.
- `operation`: `scale` (compiled value x draw), `add` (compiled value + draw) or `abs` (the
  draw itself), or their names; the default depends on the term (mostly `abs`, see its
  signature). Values always start from the compiled model's, so drawing again replaces the last
  draw rather than compounding it.
- `axes`: which components of a vector field to randomize, as indices (0 = x); None: the
  keys of a dict `ranges`, else the term's default (all components; friction: the sliding
  one).
- `shared_random`: one draw per env shared by all the selected elements (e.g. one scale for
  every link mass) instead of one per element.

Terms on fields that derived constants depend on (masses, inertias, body frames, armature,
qpos0) recompute them (`Simulation.set_const`) for the chosen envs. A misspelt param is
refused when the env is built; an unknown axis or distribution name when the term first runs,
naming the event term.

Reading the values back: `env.sim.expand_model_field("body_mass")` returns the (num_envs,
nbody) per-env values the terms write (making the field per-env if no term has yet), and
`env.sim.get_model(i)` a plain `MjModel` holding env i's values. An entity's elements are
columns `entity.geom_ids_global` (`body_ids_global`, ... in the entity's order; `find_geoms`
gives the positions of names in it), e.g. the feet's friction:
`view[:, [robot.geom_ids_global[i] for i in robot.find_geoms(("FR", "FL"))[0]]]`.

Two events that write the same field overwrite each other in event order: e.g. a
`dr.body_mass` on the base added to a velocity task replaces that task's own `base_mass`
draw; remove one (`cfg.events["base_mass"] = None`) to keep the other.
"""

from mjlab.envs.mdp.dr.core import (
    Distribution,
    Operation,
    abs,
    add,
    gaussian,
    log_uniform,
    scale,
    uniform,
)
from mjlab.envs.mdp.dr.fields import *  # noqa: F403
from mjlab.envs.mdp.dr.fields import __all__ as _fields_all

__all__ = [
    "Distribution",
    "Operation",
    "abs",
    "add",
    "gaussian",
    "log_uniform",
    "scale",
    "uniform",
    *_fields_all,
]
