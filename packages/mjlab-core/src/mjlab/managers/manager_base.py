"""Shared machinery of the managers: term preparation and output checks."""

from __future__ import annotations

import copy
import inspect
from typing import Any

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.config import copy_config


class ManagerBase:
    """Holds `env` and prepares terms: resolves `SceneEntityCfg` params and instantiates
    class-based terms as `cls(cfg, env)`.

    Each manager works on its own copy (`copy_config`: the config structure, not the term
    functions or live objects in params) of every entry of its config (a term, or an observation
    group), so resolving a term never changes the caller's config, and a term config shared by
    two entries (the same `ObservationTermCfg` in the actor and critic groups) is resolved
    separately for each.
    """

    kind = "term"

    def __init__(self, cfg: dict[str, Any] | None, env):
        self.env = env
        self.cfg = {k: copy_config(v) for k, v in (cfg or {}).items() if v is not None}

    def prepare_term(self, name: str, term_cfg) -> None:
        # A function's SceneEntityCfg defaults need resolving too: copy them into params.
        target = term_cfg.func.__call__ if inspect.isclass(term_cfg.func) else term_cfg.func
        for pname, param in inspect.signature(target).parameters.items():
            if isinstance(param.default, SceneEntityCfg) and pname not in term_cfg.params:
                term_cfg.params[pname] = copy.deepcopy(param.default)
        for key, value in term_cfg.params.items():
            if isinstance(value, SceneEntityCfg):
                try:
                    value.resolve(self.env.scene)
                except (KeyError, ValueError) as err:
                    raise ValueError(f"{self.kind} '{name}', param '{key}': {err}") from err
        if inspect.isclass(term_cfg.func):
            term_cfg.func = term_cfg.func(term_cfg, self.env)

    @staticmethod
    def reset_term(term_cfg, env_ids: torch.Tensor) -> None:
        reset = getattr(term_cfg.func, "reset", None)
        if callable(reset) and not inspect.isfunction(term_cfg.func):
            reset(env_ids)

    def check_output(self, name: str, value: Any, shape: tuple, dtype_kind: str, hint: str) -> None:
        """Raise ValueError naming the term when `value` has the wrong type, shape or dtype."""
        if not isinstance(value, torch.Tensor):
            raise ValueError(
                f"{self.kind} '{name}' returned {type(value).__name__}; expected a torch.Tensor of shape {shape}."
            )
        if tuple(value.shape) != shape:
            raise ValueError(
                f"{self.kind} '{name}' returned shape {tuple(value.shape)}; expected {shape}. {hint}"
            )
        if dtype_kind == "bool" and value.dtype != torch.bool:
            raise ValueError(
                f"{self.kind} '{name}' returned dtype {value.dtype}; expected torch.bool. {hint}"
            )
        if dtype_kind == "float" and not value.dtype.is_floating_point:
            raise ValueError(
                f"{self.kind} '{name}' returned dtype {value.dtype}; expected a float tensor. {hint}"
            )
