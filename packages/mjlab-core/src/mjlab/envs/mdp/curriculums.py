"""Curriculum terms: `(env, env_ids, **params) -> value to log`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import torch

from mjlab.managers.manager_base import term_keyword_names
from mjlab.managers.scene_entity_config import SceneEntityCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def terrain_levels(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    command_name: str = "twist",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> dict[str, torch.Tensor | float]:
    """Move envs that walked far enough to harder terrain rows and those that walked less than
    half of what their command asked to easier rows (Isaac Lab's rule).

    Only episodes that ran are judged: an env reset before it took a step (episode length 0,
    e.g. `reset()` called twice, or the first reset of a run) keeps its row.

    Returns:
        {"mean": the mean level over all envs (0-d tensor, no host read), "highest": the
        highest level that exists (float, the terrain's rows - 1; 0 on a plane)}, logged as
        `Curriculum/terrain_levels/mean` and `.../highest`, so that a curve shows how far up
        the envs are against how far up they could be.
    """
    terrain = env.scene.terrain
    if terrain is None or getattr(terrain, "terrain_levels", None) is None:
        return {"mean": torch.tensor(0.0), "highest": 0.0}
    data = env.scene[asset_cfg.name].data
    distance = (data.root_link_pos_w[env_ids, :2] - env.scene.env_origins[env_ids, :2]).norm(dim=1)
    size = terrain.cfg.terrain_generator.size
    move_up = distance > size[0] / 2
    cmd = env.command_manager.get_command(command_name)[env_ids, :2]
    move_down = distance < cmd.norm(dim=1) * env.max_episode_length_s * 0.5
    move_down &= ~move_up
    ran = env.episode_length_buf[env_ids] > 0
    move_up &= ran
    move_down &= ran
    terrain.update_env_origins(env_ids, move_up, move_down)
    return {
        "mean": terrain.terrain_levels.float().mean(),
        "highest": float(terrain.max_terrain_level - 1),
    }


def commands_vel(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    command_name: str,
    velocity_stages: list[dict],
) -> dict[str, float]:
    """Grow the velocity command ranges with training: each stage is {"step": env steps,
    "lin_vel_x": (lo, hi), "ang_vel_z": (lo, hi), ...}; the last stage whose step is reached
    applies. Returns the current range bounds for logging."""
    term = env.command_manager.get_term(command_name)
    for stage in velocity_stages:
        if env.common_step_counter >= stage["step"]:
            for key, value in stage.items():
                if key != "step":
                    setattr(term.cfg.ranges, key, tuple(value))
    r = term.cfg.ranges
    return {"lin_vel_x_max": float(r.lin_vel_x[1]), "ang_vel_z_max": float(r.ang_vel_z[1])}


class _RewardStageFields(TypedDict, total=False):
    weight: float
    params: dict[str, Any]


class RewardCurriculumStage(_RewardStageFields):
    """One stage of `reward_curriculum`: from env step `step` (`env.common_step_counter`)
    on, the reward term gets `weight` and/or the `params` given (the others keep theirs)."""

    step: int


class _TerminationStageFields(TypedDict, total=False):
    params: dict[str, Any]
    time_out: bool


class TerminationCurriculumStage(_TerminationStageFields):
    """One stage of `termination_curriculum`: from env step `step` on, the termination term
    gets the `params` given and/or its `time_out` flag."""

    step: int


_ABSENT = object()


class _StagedTerm:
    """Shared by `reward_curriculum` and `termination_curriculum`: checks the stages against
    the target term when the env is built, and applies the latest stage whose `step`
    `env.common_step_counter` has reached, once per change of stage (a call in between does
    nothing but return the log values). `after_set_state` writes the stage a restored env
    state was in, so an exact resume continues with it."""

    manager_attr = ""
    name_param = ""
    fields: tuple[str, ...] = ()
    # The stage index is env state (`get_state` captures it); the rest is built from the config.
    _snapshot_exclude = ("manager", "term", "_initial", "_stages")

    def __init__(self, cfg, env: ManagerBasedRlEnv):
        params = cfg.params
        term_name = params[self.name_param]
        kind = type(self).__name__
        manager = getattr(env, self.manager_attr)
        if term_name not in manager.cfg:
            raise ValueError(
                f"{kind}: no term '{term_name}' among {sorted(manager.cfg)} "
                f"(param '{self.name_param}')."
            )
        self.term = manager.cfg[term_name]
        self.manager = manager
        self._stages: list[dict] = list(params["stages"])
        if not self._stages:
            raise ValueError(f"{kind} '{term_name}': give at least one stage.")
        accepted = term_keyword_names(self.term.func)
        steps = []
        for i, stage in enumerate(self._stages):
            where = f"{kind} '{term_name}', stage {i}"
            if "step" not in stage or not isinstance(stage["step"], int) or stage["step"] < 0:
                raise ValueError(f"{where}: needs 'step', an env step count >= 0.")
            steps.append(stage["step"])
            unknown = set(stage) - {"step", "params", *self.fields}
            if unknown:
                raise ValueError(
                    f"{where}: unknown key(s) {sorted(unknown)}; a stage may set 'step', "
                    f"'params' and {', '.join(repr(f) for f in self.fields)}."
                )
            for key, value in stage.get("params", {}).items():
                if key not in self.term.params and (accepted is None or key not in accepted):
                    raise ValueError(
                        f"{where}: the term has no param '{key}'; its params: "
                        f"{sorted(accepted if accepted is not None else self.term.params)}."
                    )
                if isinstance(value, SceneEntityCfg):
                    try:
                        value.resolve(env.scene)
                    except (KeyError, ValueError) as err:
                        raise ValueError(f"{where}, param '{key}': {err}") from None
        if steps != sorted(steps):
            raise ValueError(f"{kind} '{term_name}': stage steps {steps} must not decrease.")
        # What the term had before any stage, for a counter below the first stage's step.
        changed = {k for s in self._stages for k in s.get("params", {})}
        self._initial: dict[str, Any] = {
            "params": {k: self.term.params.get(k, _ABSENT) for k in changed},
            **{f: getattr(self.term, f) for f in self.fields},
        }
        self._stage = -1

    def _apply(self, env: ManagerBasedRlEnv) -> int:
        stage = -1
        for i, s in enumerate(self._stages):
            if env.common_step_counter >= s["step"]:
                stage = i
        if stage != self._stage:
            self._stage = stage
            self._write()
        return stage

    def _write(self) -> None:
        """Give the term the values of stage `self._stage` (on top of the earlier stages)."""
        params = dict(self._initial["params"])
        values = {f: self._initial[f] for f in self.fields}
        for s in self._stages[: self._stage + 1]:
            params.update(s.get("params", {}))
            values.update({f: s[f] for f in self.fields if f in s})
        for key, value in params.items():
            if value is _ABSENT:
                self.term.params.pop(key, None)
            else:
                self.term.params[key] = value
        for field, value in values.items():
            setattr(self.term, field, value)
        self._changed()

    def after_set_state(self) -> None:
        """Called by `ManagerBasedRlEnv.set_state` after the stage index was restored."""
        self._write()

    def _changed(self) -> None:
        pass


class reward_curriculum(_StagedTerm):
    """Change a reward term's weight and/or params in stages of training (mjlab's
    `reward_curriculum`), e.g. a tighter velocity-tracking kernel once the robot walks and a
    larger action-rate penalty later::

        from mjlab.envs import mdp
        from mjlab.managers import CurriculumTermCfg

        cfg.curriculum["tracking_stages"] = CurriculumTermCfg(
            func=mdp.reward_curriculum,
            params={
                "reward_name": "track_lin_vel_xy_exp",
                "stages": [{"step": 38_400, "params": {"std": 0.3}}],
            },
        )
        cfg.curriculum["action_rate_stages"] = CurriculumTermCfg(
            func=mdp.reward_curriculum,
            params={
                "reward_name": "action_rate_l2",
                "stages": [{"step": 24_000, "weight": -0.05}, {"step": 48_000, "weight": -0.1}],
            },
        )

    The term's params (`CurriculumTermCfg.params`):
        reward_name: the reward term to change.
        stages: `RewardCurriculumStage`s in order of `step` (env steps: one per `env.step`,
            i.e. iterations x num_steps_per_env in PPO training). The latest stage reached
            applies, on top of the earlier ones; below the first stage the term is as
            configured.

    A stage takes effect at the first reset (curriculum terms run on resets) on or after its
    step; an env state taken later (`get_state`, a checkpoint) restores it with the rest. A
    term whose weight is 0 when the env is built is never computed, so a stage cannot turn it
    on: give it a small non-zero weight instead.

    Returns (logged as `Curriculum/<term>/...`): {"stage": index of the stage in effect (-1:
    none), "weight": the term's weight}.

    Raises:
        ValueError: when the env is built: an unknown reward term, a stage without `step`,
            with an unknown key, a param the term's function does not take or a selection
            (`SceneEntityCfg`) the scene does not have, stages out of order, or a stage giving
            a non-zero weight to a term whose weight is 0 when the env is built.
    """

    manager_attr = "reward_manager"
    name_param = "reward_name"
    fields = ("weight",)

    def __init__(self, cfg, env: ManagerBasedRlEnv):
        super().__init__(cfg, env)
        for i, stage in enumerate(cfg.params["stages"]):
            if self.term.weight == 0.0 and stage.get("weight", 0.0) != 0.0:
                raise ValueError(
                    f"reward_curriculum '{cfg.params['reward_name']}', stage {i}: the term's "
                    "weight is 0 when the env is built, so it is never computed; give it a "
                    "small non-zero weight in its config."
                )

    def __call__(
        self,
        env: ManagerBasedRlEnv,
        env_ids: torch.Tensor,
        reward_name: str,
        stages: Sequence[RewardCurriculumStage],
    ) -> dict[str, float]:
        stage = self._apply(env)
        return {"stage": float(stage), "weight": float(self.term.weight)}


class termination_curriculum(_StagedTerm):
    """Change a termination term's params and/or its `time_out` flag in stages of training
    (mjlab's `termination_curriculum`), e.g. a tilt limit that tightens as the policy learns.

    The term's params (`CurriculumTermCfg.params`):
        termination_name: the termination term to change.
        stages: `TerminationCurriculumStage`s in order of `step` (env steps), applied as in
            `reward_curriculum`.

    Returns: {"stage": index of the stage in effect (-1: none)}.

    Raises:
        ValueError: when the env is built, as `reward_curriculum`.
    """

    manager_attr = "termination_manager"
    name_param = "termination_name"
    fields = ("time_out",)

    def _changed(self) -> None:
        self.manager.refresh_time_out()

    def __call__(
        self,
        env: ManagerBasedRlEnv,
        env_ids: torch.Tensor,
        termination_name: str,
        stages: Sequence[TerminationCurriculumStage],
    ) -> dict[str, float]:
        return {"stage": float(self._apply(env))}
