"""`MjlabOnPolicyRunner`: rsl-rl-lib's OnPolicyRunner with env state in checkpoints, atomic
saves, legacy checkpoint migration and ONNX export with deployment metadata."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import torch
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner

_COUNTER_KEY = "common_step_counter"


class MjlabOnPolicyRunner(OnPolicyRunner):
    """Base runner that persists environment state across checkpoints.

    Args:
        env: an rsl-rl VecEnv (normally `RslRlVecEnvWrapper`).
        train_cfg: the dict from `to_rsl_rl_train_cfg`.
        log_dir: run folder (checkpoints, logs); None disables writing.
        device: torch device of the networks.
    """

    def __init__(
        self, env: VecEnv, train_cfg: dict, log_dir: str | None = None, device: str = "cpu"
    ) -> None:
        super().__init__(env, train_cfg, log_dir, device)

    # -- checkpoints -----------------------------------------------------------------------------
    def _env(self) -> Any:
        return getattr(self.env, "unwrapped", self.env)

    def save(self, path: str, infos: dict | None = None) -> None:
        """Save a checkpoint atomically (temp file in the same folder, then rename), with the env's
        `common_step_counter`; upload model files to wandb only if `upload_model` is set.

        A failing write raises and leaves any previous file at `path` intact.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        infos = dict(infos or {})
        env = self._env()
        if hasattr(env, _COUNTER_KEY):
            infos["env_state"] = {_COUNTER_KEY: int(getattr(env, _COUNTER_KEY))}
        saved["infos"] = infos
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            torch.save(saved, tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if self.cfg.get("upload_model", True):
            self.logger.save_model(str(path), self.current_learning_iteration)

    def load(
        self,
        path: str,
        load_cfg: dict | None = None,
        strict: bool = True,
        map_location: str | None = None,
    ) -> dict:
        """Load a checkpoint (untrusted input: `torch.load(weights_only=True)`).

        Restores `common_step_counter` (curricula continue where they were) and migrates legacy
        checkpoints to rsl-rl-lib 5.x keys (case C01): `model_state_dict` with `actor.*` ->
        actor `mlp.*`, `critic.*` -> critic `mlp.*`, `actor_obs_normalizer.*` / `critic_obs_normalizer.*`
        -> each model's `obs_normalizer.*`, and `std` / `log_std` -> `distribution.std_param` /
        `distribution.log_std_param` (also in 4.x actor state dicts).

        Returns:
            The checkpoint's `infos` (may be None).
        """
        loaded = torch.load(path, weights_only=True, map_location=map_location)
        loaded = migrate_checkpoint(loaded)
        if self.alg.load(loaded, load_cfg, strict):
            self.current_learning_iteration = loaded["iter"]
        infos = loaded.get("infos")
        env = self._env()
        state = (infos or {}).get("env_state") if isinstance(infos, dict) else None
        if state and _COUNTER_KEY in state and hasattr(env, _COUNTER_KEY):
            setattr(env, _COUNTER_KEY, int(state[_COUNTER_KEY]))
        return infos

    # -- export ------------------------------------------------------------------------------------
    def export_policy_to_onnx(
        self, path: str, filename: str = "policy.onnx", verbose: bool = False
    ) -> None:
        """Export the policy to ONNX with the legacy exporter (dynamo=False) through mjlab-export,
        with the task's deployment metadata. Errors are raised, never swallowed (case C07)."""
        from mjlab.export import export_policy, metadata_from_env

        env = self._env()
        actor = self.alg.get_policy().as_onnx(verbose=verbose)
        actor.to("cpu").eval()
        metadata = None
        if hasattr(env, "action_manager"):
            metadata = metadata_from_env(env, task_id=self.cfg.get("task_id", ""))
        export_policy(actor, Path(path) / filename, metadata, verbose=verbose)


_MLP_LAYER = re.compile(r"^(actor|critic)\.(\d+\..*)$")


def migrate_checkpoint(loaded: dict) -> dict:
    """Rewrite a pre-5.x rsl-rl checkpoint into the 5.x layout; 5.x checkpoints pass through.

    Raises:
        ValueError: a checkpoint with neither layout, naming the keys it has.
    """
    if "actor_state_dict" in loaded:
        loaded["actor_state_dict"] = _migrate_std(dict(loaded["actor_state_dict"]))
        return loaded
    if "model_state_dict" not in loaded:
        raise ValueError(
            f"Not an rsl-rl checkpoint: expected 'actor_state_dict' (rsl-rl >= 4) or "
            f"'model_state_dict' (older), found keys {sorted(loaded)}."
        )
    actor, critic = {}, {}
    for key, value in loaded.pop("model_state_dict").items():
        match = _MLP_LAYER.match(key)
        if match:
            (actor if match.group(1) == "actor" else critic)[f"mlp.{match.group(2)}"] = value
        elif key.startswith("actor_obs_normalizer."):
            actor["obs_normalizer." + key.removeprefix("actor_obs_normalizer.")] = value
        elif key.startswith("critic_obs_normalizer."):
            critic["obs_normalizer." + key.removeprefix("critic_obs_normalizer.")] = value
        elif key in ("std", "log_std"):
            actor[key] = value
    loaded["actor_state_dict"] = _migrate_std(actor)
    loaded["critic_state_dict"] = critic
    return loaded


def _migrate_std(state: dict) -> dict:
    for old, new in (("std", "distribution.std_param"), ("log_std", "distribution.log_std_param")):
        if old in state:
            state[new] = state.pop(old)
    return state
