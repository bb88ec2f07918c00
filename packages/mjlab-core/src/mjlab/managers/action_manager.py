"""Action manager: splits the policy action among action terms and applies them."""

from __future__ import annotations

import torch

from mjlab.deploy.metadata import JointActionSpec, joint_action_spec
from mjlab.managers.description import ActionTermDescription
from mjlab.managers.manager_base import ClassTermManager
from mjlab.managers.manager_term_config import ActionTermCfg
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import count_nonfinite, maybe_nonfinite, nonfinite_mask


class ActionTerm:
    """Base of action terms: `process_actions(raw)` once per env step, `apply_actions()` before
    physics. Subclasses define `action_dim`."""

    def __init__(self, cfg: ActionTermCfg, env):
        # One entity name from here on: `entity_name` (mjlab) and `asset_name` (Isaac Lab) are
        # two names of one setting; the term's config (the manager's copy) gets it in both.
        name = cfg.resolved_entity_name()
        if cfg.entity_name != name or cfg.asset_name != name:
            cfg.entity_name = cfg.asset_name = name
        self.cfg = cfg
        self.env = env
        self.entity = env.scene[name]

    @property
    def action_dim(self) -> int:
        raise NotImplementedError

    def process_actions(self, actions: torch.Tensor) -> None:
        raise NotImplementedError

    def apply_actions(self) -> None:
        raise NotImplementedError

    def reset(self, env_ids: torch.Tensor) -> None:
        pass

    def describe(self) -> ActionTermDescription:
        """Plain data a robot needs to turn this term's actions into commands. The base gives
        the class, entity and dim with `action_type` None (a term the robot cannot reproduce);
        joint terms add their joints, scale, offset, clip and gains."""
        return ActionTermDescription(
            type=type(self).__name__,
            action_type=None,
            entity=self.cfg.resolved_entity_name(),
            dim=int(self.action_dim),
            clip=None if self.cfg.clip is None else [float(v) for v in self.cfg.clip],
        )


class ActionManager(ClassTermManager):
    """Holds the action terms in order; the policy action is their concatenation.

    `action` is the current raw action, `prev_action` the one before (both
    (num_envs, total_action_dim)).
    """

    kind = "Action term"
    terms: dict[str, ActionTerm]

    def __init__(self, cfg: dict[str, ActionTermCfg | None], env):
        super().__init__(cfg, env)
        if not self.terms:
            raise ValueError("The env has no action terms: add at least one to cfg.actions.")
        self.total_action_dim = sum(t.action_dim for t in self.terms.values())
        self.action = torch.zeros(env.num_envs, self.total_action_dim, device=env.device)
        self.prev_action = torch.zeros_like(self.action)
        self._prev_prev_action: torch.Tensor | None = None
        self.host_checks: bool = torch.device(env.device).type == "cpu"
        """Check actions for NaN/Inf on the host and raise (default on the CPU, where it costs
        nothing); False (a CUDA env) keeps `step` free of host syncs: they act as 0 and are
        counted in `nonfinite`."""
        self.nonfinite = torch.zeros((), dtype=torch.long, device=env.device)
        """NaN/Inf values in the last action (counted only without `host_checks`)."""

    @property
    def action_term_dim(self) -> list[int]:
        return [t.action_dim for t in self.terms.values()]

    def describe(self) -> list[ActionTermDescription]:
        """Every action term's description (`ActionTerm.describe`, plus its name), in the order
        their slices appear in the policy action."""
        return [ActionTermDescription(name=name, **t.describe()) for name, t in self.terms.items()]

    def deployment_spec(self) -> JointActionSpec:
        """The action in the policy file's schema: the one joint action term as a
        `mjlab.deploy.metadata.JointActionSpec`, built from `describe()` (`joint_action_spec`).

        Raises:
            mjlab.deploy.metadata.UnsupportedTermError: several action terms, or one that does
                not command joints (the message names the terms).
        """
        return joint_action_spec(self.describe())

    def process_action(self, action: torch.Tensor) -> None:
        """Validate and store the policy action, then let each term process its slice.

        Raises:
            ValueError: wrong shape or dtype, or (with `host_checks`, the default on the CPU)
                NaN/Inf values; the message names the expected shape. Without `host_checks`
                (a CUDA env) NaN/Inf values act as 0 and are counted in `nonfinite`.
        """
        expected = (self.env.num_envs, self.total_action_dim)
        if not isinstance(action, torch.Tensor):
            raise ValueError(
                f"Actions must be a torch.Tensor of shape {expected}, got {type(action).__name__}."
            )
        if tuple(action.shape) != expected:
            raise ValueError(
                f"Actions have shape {tuple(action.shape)}; expected {expected} "
                f"(num_envs, action dim = {' + '.join(map(str, self.action_term_dim))})."
            )
        if not action.dtype.is_floating_point:
            raise ValueError(
                f"Actions must be a float tensor of shape {expected}, got dtype {action.dtype}."
            )
        want = torch.device(self.env.device)
        got = action.device
        # "cuda" and "cuda:0" are the same device when one of them has no index.
        if got.type != want.type or (
            None not in (got.index, want.index) and got.index != want.index
        ):
            raise ValueError(
                f"Actions are on {action.device}; the env runs on {self.env.device}: move them "
                "with .to(env.device) (a copy inside step would stall the device)."
            )
        if action.dtype != torch.float32:  # a no-op `.to` still costs a tensor operation
            action = action.to(torch.float32)
        if self.host_checks:
            if maybe_nonfinite(action) and count_nonfinite(action):  # the CPU path
                bad = nonfinite_mask(action).any(dim=1).nonzero().flatten().tolist()
                raise ValueError(
                    f"Actions contain NaN or Inf (envs {bad[:10]}); expected finite values of "
                    f"shape {expected}."
                )
        else:
            # Checking on the host would stall the device every step: non-finite values act
            # as 0 and are counted (the env logs `Metrics/nonfinite_actions`).
            bad_values = nonfinite_mask(action)
            self.nonfinite = bad_values.sum()
            action = action.masked_fill(bad_values, 0.0)
        if self._prev_prev_action is not None:
            self._prev_prev_action[:] = self.prev_action
        self.prev_action[:] = self.action
        self.action[:] = action
        if len(self.terms) == 1:  # the whole action: no slicing operation
            next(iter(self.terms.values())).process_actions(action)
            return
        start = 0
        for term in self.terms.values():
            term.process_actions(action[:, start : start + term.action_dim])
            start += term.action_dim

    @property
    def prev_prev_action(self) -> torch.Tensor:
        """(num_envs, total_action_dim) the raw action two steps back (0 after a reset).

        Kept only once something has read it (a term such as `mdp.action_acc_l2` reads it
        when the env is built), so envs that do not use it copy nothing more per step."""
        if self._prev_prev_action is None:
            self._prev_prev_action = torch.zeros_like(self.action)
        return self._prev_prev_action

    def apply_action(self) -> None:
        for term in self.terms.values():
            term.apply_actions()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        self.prev_action[env_ids] = 0.0
        self.action[env_ids] = 0.0
        if self._prev_prev_action is not None:
            self._prev_prev_action[env_ids] = 0.0
        for term in self.terms.values():
            term.reset(env_ids)
        return {}
