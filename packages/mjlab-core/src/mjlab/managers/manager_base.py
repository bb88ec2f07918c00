"""Shared machinery of the managers: term preparation and output checks."""

from __future__ import annotations

import copy
import difflib
import inspect
from typing import Any

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.config import copy_config

_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def term_parameters(func: Any) -> list[inspect.Parameter] | None:
    """The parameters a manager calls a term with: a function's (or a callable instance's,
    e.g. a class term already built), or a term class's `__call__` without `self`; None when
    the signature cannot be read (a builtin)."""
    try:
        if inspect.isclass(func):
            return list(inspect.signature(func.__call__).parameters.values())[1:]
        return list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None


def term_keyword_names(func: Any) -> set[str] | None:
    """The names a term takes by keyword; None when it takes any (`**kwargs`) or its
    signature cannot be read."""
    parameters = term_parameters(func)
    if parameters is None or any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind in _KEYWORD}


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
    leading_args = ("env",)
    """What the manager passes a term before its params (events and curricula: env, env_ids)."""

    def __init__(self, cfg: dict[str, Any] | None, env):
        self.env = env
        self.cfg = {k: copy_config(v) for k, v in (cfg or {}).items() if v is not None}

    def prepare_term(self, name: str, term_cfg) -> None:
        # A function's SceneEntityCfg defaults need resolving too: copy them into params.
        target = term_cfg.func.__call__ if inspect.isclass(term_cfg.func) else term_cfg.func
        self.check_params(name, term_cfg.func, term_cfg.params)
        for pname, param in inspect.signature(target).parameters.items():
            if isinstance(param.default, SceneEntityCfg) and pname not in term_cfg.params:
                term_cfg.params[pname] = copy.deepcopy(param.default)
        for key, value in term_cfg.params.items():
            if isinstance(value, SceneEntityCfg):
                try:
                    value.resolve(self.env.scene)
                except (KeyError, ValueError) as err:
                    # The message says it all: no chained traceback of the lookup.
                    raise ValueError(f"{self.kind} '{name}', param '{key}': {err}") from None
        if inspect.isclass(term_cfg.func):
            try:
                term_cfg.func = term_cfg.func(term_cfg, self.env)
            except ValueError as err:  # a class term's own check: say which term
                raise ValueError(f"{self.kind} '{name}': {err}") from None

    def check_params(self, name: str, func: Any, params: dict[str, Any]) -> None:
        """Check a term's params against its function's signature (a class term: its
        `__call__`), so a misspelled or missing param is found when the env is built rather
        than when the term first runs (an event may first run after an hour of training).

        Raises:
            ValueError: a param the function has no parameter for (with the closest name), or
                a parameter without default that params does not give; names the term.
        """
        parameters = term_parameters(func)
        if parameters is None:  # a builtin or C function: nothing to read
            return
        rest = parameters[len(self.leading_args) :]
        if any(p.kind is p.VAR_KEYWORD for p in rest):
            return
        names = [p.name for p in rest if p.kind in _KEYWORD]
        label = getattr(func, "__qualname__", None) or type(func).__name__
        for key in params:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                raise ValueError(
                    f"{self.kind} '{name}': params has '{key}', but {label}() takes no such "
                    f"parameter; {hint}its parameters: {', '.join(names) or '(none)'}."
                )
        missing = [p.name for p in rest if p.kind in _KEYWORD and p.default is p.empty]
        missing = [m for m in missing if m not in params]
        if missing:
            raise ValueError(
                f"{self.kind} '{name}': {label}() needs {', '.join(repr(m) for m in missing)}; "
                "give it in the term's params."
            )

    @staticmethod
    def reset_term(term_cfg, env_ids: torch.Tensor) -> None:
        reset = getattr(term_cfg.func, "reset", None)
        if callable(reset) and not inspect.isfunction(term_cfg.func):
            reset(env_ids)

    def probe(self, name: str, term_cfg) -> Any:
        """The term's first call, made when the env is built (to learn its output's shape): a
        scene name the term looks up that does not exist is reported with the term's name.

        Raises:
            KeyError: the term asks the scene for an entity or sensor it does not have.
        """
        from mjlab.scene.scene import SceneLookupError

        try:
            return term_cfg.func(self.env, **term_cfg.params)
        except SceneLookupError as err:
            raise SceneLookupError(f"{self.kind} '{name}': {err}") from None

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


class ClassTermManager:
    """Base of the managers whose terms are classes built from their configs (actions,
    commands): `class_type(copy, env)` per configured term, on the term's own copy of its
    config, in config order (None entries are left out).

    Raises:
        ValueError: a term's construction fails with KeyError or ValueError; the message starts
            with `kind` and the term's name.
    """

    kind = "Term"

    def __init__(self, cfg: dict[str, Any] | None, env):
        self.env = env
        self.terms: dict[str, Any] = {}
        for name, term_cfg in (cfg or {}).items():
            if term_cfg is None:
                continue
            try:
                # Each term resolves and keeps its own copy of its config.
                self.terms[name] = term_cfg.class_type(copy_config(term_cfg), env)
            except (KeyError, ValueError) as err:
                raise ValueError(f"{self.kind} '{name}': {err}") from err

    @property
    def active_terms(self) -> list[str]:
        return list(self.terms)

    def get_term(self, name: str) -> Any:
        return self.terms[name]


class ManagerTermBase:
    """Base of class-based terms (mjlab's `ManagerTermBase`): a manager builds the class once
    as `cls(cfg, env)` and calls the instance like a term function, e.g. a reward term as
    `term(env, **params)`; `reset(env_ids)` runs when those envs reset. Tensors it keeps as
    attributes are env state (`get_state` / `set_state` carry them).

    Args:
        cfg: the term's config (the manager's own copy).
        env: the env.
    """

    def __init__(self, cfg: Any, env: Any):
        self.cfg = cfg
        self.env = env

    @property
    def num_envs(self) -> int:
        """The env's number of envs."""
        return self.env.num_envs

    @property
    def device(self) -> str:
        """The env's device."""
        return self.env.device

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """Start the episodes of `env_ids`: nothing by default."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __call__.")
