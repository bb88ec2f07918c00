"""`DeploymentMetadata` from a live mjlab env, which describes itself in the file's schema.

mjlab-core builds the description (`ManagerBasedRlEnv.deployment_metadata`, from its managers'
`deployment_spec`s; module `mjlab.envs.deployment`); this module asks for it without importing
mjlab-core and turns the schema's `UnsupportedTermError` into `ExportError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mjlab.deploy.metadata import DeploymentMetadata, UnsupportedTermError


class ExportError(UnsupportedTermError):
    """The env computes something the robot-side runtime cannot reproduce exactly; the
    message names the term and says what to change. A ValueError."""


def metadata_from_env(
    env: Any,
    task_id: str = "",
    actor_group: str = "actor",
    clip_actions: float | None = None,
    image_groups: tuple[str, ...] = (),
    joint_vel_limit: float | Sequence[float] | Mapping[str, float] | None = None,
) -> DeploymentMetadata:
    """Describe `env`'s action term and its `actor_group` observation group for a robot:
    `env.deployment_metadata(...)` (mjlab-core's `mjlab.envs.deployment.deployment_metadata`,
    which documents every argument and what it records).

    Args:
        env: a live `ManagerBasedRlEnv`.
        task_id: recorded as `task_id`.
        actor_group: the observation group the policy reads.
        clip_actions: the training wrapper's clamp of the raw actions to [-c, c] (rsl_rl's
            `clip_actions`; `MjlabOnPolicyRunner` passes it), or None.
        image_groups: observation groups the actor also reads as images, in the network's
            input order (one `camera_rgb`/`camera_depth` term each).
        joint_vel_limit: the joints' speed limits, rad/s, instead of the entity's: one number,
            one per action joint, or {joint name: value}; `math.inf` for no limit.

    Raises:
        ExportError (a ValueError): something the runtime cannot reproduce exactly (several
            action terms or one that does not command joints, a missing or unconcatenated
            group, a term that is not flat or keeps an unflattened history, an image group that
            is not one plain camera term, a joint without a speed limit); the message names the
            term and the fix. Also when `env` cannot describe itself (an older mjlab-core).
    """
    describe = getattr(env, "deployment_metadata", None)
    if not callable(describe):
        raise ExportError(
            "The env has no deployment_metadata(); export needs mjlab-core with deployment "
            "descriptions (upgrade mjlab-core)."
        )
    try:
        return describe(
            task_id=task_id,
            actor_group=actor_group,
            clip_actions=clip_actions,
            image_groups=tuple(image_groups),
            joint_vel_limit=joint_vel_limit,
        )
    except UnsupportedTermError as err:
        raise ExportError(str(err)) from err
