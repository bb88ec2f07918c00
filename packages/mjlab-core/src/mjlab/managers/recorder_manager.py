"""Recorder manager (mjlab 1.6): terms that watch a rollout and keep or write what they see.

A recorder term is a `RecorderTerm` subclass listed in `ManagerBasedRlEnvCfg.recorders`. The
env calls its hooks at fixed points of `reset` and `step` (see `RecorderTerm`); how and where the
data goes (tensors in memory, a file, a dataset writer) is up to the term. An env whose
`recorders` is empty gets a `NullRecorderManager`, whose hooks do nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from mjlab.managers.manager_base import ManagerBase, ManagerTermBase
from mjlab.managers.manager_term_config import ManagerTermBaseCfg
from mjlab.managers.null_managers import NullRecorderManager

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

__all__ = ["NullRecorderManager", "RecorderManager", "RecorderTerm", "RecorderTermCfg"]


@dataclass(kw_only=True)
class RecorderTermCfg(ManagerTermBaseCfg):
    """One recorder term: `func` is a `RecorderTerm` subclass, built once per env as
    `func(cfg, env)`; `params` are for its constructor to read from `cfg.params`
    (`SceneEntityCfg` values are resolved against the scene first).

    Plain functions are not accepted (the env raises TypeError naming the term when it is
    built): a recorder keeps state between hooks (buffers, open files).
    """


class RecorderTerm(ManagerTermBase):
    """Base of recorder terms: override the hooks you need, the others do nothing.

    The env is `self.env` (also `self._env`, mjlab's name): `env.obs_buf`,
    `env.action_manager.action`, `env.reward_buf`, `env.reset_buf`, ... Hook order in one
    `env.step(action)` with auto-reset, when some envs end their episode:

    1. `record_pre_reset(ids)`: rewards and terminations of the step are computed, nothing is
       reset yet;
    2. the envs `ids` are reset, observations of every env are computed;
    3. `record_post_reset(ids)`;
    4. `record_post_step()` (every step, also without resets).

    `env.reset(env_ids=...)` calls `record_post_reset(env_ids)` once its observations are
    computed (all envs on a full reset). With `cfg.auto_reset=False`, `step` calls only
    `record_post_step`; ended envs get `record_post_reset` from the caller's `env.reset`.

    What a term captures is not part of the env state: `env.get_state()` / `set_state()` skip
    the recorder manager and its terms, so restoring a state neither rewinds nor replays a
    recording.

    Args:
        cfg: the term's config (the manager's own copy; read `cfg.params` here).
        env: the env being built (its managers exist; no reset has happened yet).
    """

    def __init__(self, cfg: RecorderTermCfg, env: ManagerBasedRlEnv):
        super().__init__(cfg, env)

    @property
    def _env(self) -> ManagerBasedRlEnv:
        """The env (mjlab's attribute name for `self.env`)."""
        return self.env

    def record_pre_reset(self, env_ids: torch.Tensor) -> None:
        """Inside `env.step`, just before the envs `env_ids` that ended are reset.

        Still the terminal step's values here: `env.action_manager.action[env_ids]` is the
        action just applied (the reset sets it to 0 right after this hook), `env.reward_buf`
        (num_envs,) its reward, `env.reset_terminated` / `env.reset_time_outs` (num_envs,)
        bool why each env ends. `env.obs_buf` still holds the observations of the previous
        step (those the action was chosen from): the terminal observation of a reset env is
        never computed.

        Args:
            env_ids: (k,) long tensor on the env's device, k >= 1: the envs about to reset.
        """

    def record_post_reset(self, env_ids: torch.Tensor) -> None:
        """After envs were reset and their first observations computed: at the end of
        `env.reset` (all envs on a full reset) and inside `env.step` for the envs it reset.

        `env.obs_buf[group][env_ids]` is the first observation of the new episodes and
        `env.action_manager.action[env_ids]` is 0 (nothing applied yet).

        Args:
            env_ids: (k,) long tensor on the env's device: the envs that were reset.
        """

    def record_post_step(self) -> None:
        """At the end of every `env.step`, after the observations were computed (no
        arguments: the env holds everything).

        `env.obs_buf` {group: (num_envs, D)} is what the step returns and
        `env.action_manager.action` (num_envs, action_dim) the action applied, except for the
        envs the step reset (`env.reset_buf` (num_envs,) bool, with auto-reset): their
        observation starts the new episode and their action is 0, so their terminal action is
        for `record_pre_reset` to capture.
        """

    def close(self) -> None:
        """When `env.close()` runs: flush and close what the term opened."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} is a recorder term: the env calls its record_* hooks, not "
            "the term itself."
        )


class RecorderManager(ManagerBase):
    """Builds the recorder terms of `ManagerBasedRlEnvCfg.recorders` and calls each hook of
    every term, in the config's order (see `RecorderTerm` for when the env calls them).

    The manager keeps no data of its own: each term stores or writes what it records.

    Raises (when the env is built; each names the term):
        TypeError: a term whose `func` is not a `RecorderTerm` subclass.
        ValueError: a `SceneEntityCfg` param that does not resolve, or the term's own
            constructor rejecting its config.
    """

    kind = "Recorder term"

    def __init__(self, cfg: dict[str, RecorderTermCfg | None] | None, env: ManagerBasedRlEnv):
        super().__init__(cfg, env)  # works on its own copy of every term config
        self._terms: dict[str, RecorderTerm] = {}
        for name, term_cfg in self.cfg.items():
            self._build_term(name, term_cfg)

    def _build_term(self, name: str, term_cfg: RecorderTermCfg) -> None:
        func = term_cfg.func
        if not (isinstance(func, type) and issubclass(func, RecorderTerm)):
            what = func.__qualname__ if isinstance(func, type) else type(func).__name__
            raise TypeError(
                f"{self.kind} '{name}': func must be a RecorderTerm subclass (the class, "
                f"built by the env), got {what}. A recorder keeps state between hooks, so "
                "plain functions are not supported."
            )
        try:
            self.prepare_term(name, term_cfg)
        except Exception as err:
            if f"'{name}'" in str(err):
                raise
            # The term's constructor failed in its own words: add the term's name.
            try:
                named = type(err)(f"{self.kind} '{name}': {err}")
            except Exception:  # an exception type with another constructor
                err.add_note(f"while building {self.kind.lower()} '{name}'")
                raise err from None
            raise named from err
        self._terms[name] = term_cfg.func

    def check_params(self, name: str, func: Any, params: dict[str, Any]) -> None:
        """Nothing to check against a signature: a recorder's params are read by its
        constructor from `cfg.params`, not passed to a call."""

    def __str__(self) -> str:
        names = ", ".join(self._terms) or "none"
        return f"<RecorderManager> {len(self._terms)} active terms: {names}"

    def __contains__(self, name: object) -> bool:
        """True when a term of that name is active."""
        return name in self._terms

    @property
    def active_terms(self) -> list[str]:
        """Names of the active terms, in the config's order."""
        return list(self._terms)

    def get_term(self, name: str) -> RecorderTerm:
        """The built term named `name` (e.g. to read what it recorded).

        Raises:
            KeyError: no active term of that name; the message lists the active ones.
        """
        if name not in self._terms:
            raise KeyError(f"No recorder term '{name}'; active terms: {self.active_terms}.")
        return self._terms[name]

    def record_pre_reset(self, env_ids: torch.Tensor) -> None:
        """Every term's `RecorderTerm.record_pre_reset(env_ids)`; env_ids (k,) long."""
        for term in self._terms.values():
            term.record_pre_reset(env_ids)

    def record_post_reset(self, env_ids: torch.Tensor) -> None:
        """Every term's `RecorderTerm.record_post_reset(env_ids)`; env_ids (k,) long."""
        for term in self._terms.values():
            term.record_post_reset(env_ids)

    def record_post_step(self) -> None:
        """Every term's `RecorderTerm.record_post_step()`."""
        for term in self._terms.values():
            term.record_post_step()

    def close(self) -> None:
        """Every term's `RecorderTerm.close()`."""
        for term in self._terms.values():
            term.close()
