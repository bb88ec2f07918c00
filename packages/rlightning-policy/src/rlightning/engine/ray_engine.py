"""Actor/learner engine on Ray: K rollout actors, one learner actor, weights broadcast each update.

Ray is an optional dependency (``pip install rlightning-policy[ray]``); it is imported when a
:class:`RayEngine` is created, never at module import.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from rlightning.engine.loop import EngineLoop
from rlightning.engine.report import IterationReport, mean_logs
from rlightning.engine.rollout_worker import RolloutWorker
from rlightning.policy.base_policy import PolicyRole
from rlightning.policy.config import PolicyConfig, TrainConfig
from rlightning.policy.rsl_rl_policy.rsl_rl_policy import (
    ObservationSnapshot,
    RSLRLPolicy,
    RSLRLVecEnvMeta,
    env_meta_from_vec_env,
)


def _set_up_process(torch_threads: int | None, seed: int | None) -> None:
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    if seed is not None:
        torch.manual_seed(seed)


def loopback_only_ray() -> None:
    """Make the next local `ray.init()` a single-node Ray whose servers (GCS, raylet, workers,
    runtime-env agent) listen on 127.0.0.1 only.

    Ray 2.60 binds its gRPC servers to every interface (and the runtime-env agent to the
    machine's address) even with `_node_ip_address="127.0.0.1"`, unless multi-node clustering
    is switched off, which its `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` does on any OS (measured
    with `ss -ltnp`). Ray reads that variable when it is imported and its servers inherit it,
    so it is set here before the import (a value the user set is kept) and, when Ray was
    imported already, its constant is updated too. Joining a cluster (`--ray-address`) does not
    call this.
    """
    import os
    import sys

    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0":
        constants.ENABLE_RAY_CLUSTER = False


class RolloutActor:
    """Body of a rollout actor: owns one env (made by the factory) and one EVAL policy.

    Args:
        env_factory: ``() -> VecEnv``, called once inside the actor process.
        train_cfg: rsl-rl ``train_cfg`` dict.
        env_id: Name of this actor's env.
        device: Torch device of the policy (``None``: CUDA if visible, else CPU).
        torch_threads: ``torch.set_num_threads`` for the process (``None`` leaves torch's choice).
        seed: Seed of torch's RNG, set before the env and the policy are built.
    """

    def __init__(
        self,
        env_factory: Callable[[], VecEnv],
        train_cfg: dict[str, Any],
        env_id: str,
        device: str | None,
        torch_threads: int | None,
        seed: int | None,
    ) -> None:
        _set_up_process(torch_threads, seed)
        self.env = env_factory()
        self.meta = env_meta_from_vec_env(self.env, env_id)
        self.policy = RSLRLPolicy(PolicyConfig(train_cfg=train_cfg, device=device), PolicyRole.EVAL)
        self.policy.init_eval(env_meta=self.meta)
        self.worker = RolloutWorker(
            self.env,
            self.policy,
            int(train_cfg["num_steps_per_env"]),
            env_id,
            check_for_nan=bool(train_cfg.get("check_for_nan", True)),
        )

    def env_meta(self) -> RSLRLVecEnvMeta:
        """The env's meta (picklable)."""
        return self.meta

    def set_weights(self, weights: dict[str, dict[str, torch.Tensor]]) -> dict[str, float]:
        """Push weights through the policy's weight-update thread, wait, return the fingerprint."""
        self.policy.push_weights(weights)
        self.policy.wait_for_weight_update_done()
        return self.policy.get_param_fingerprint()

    def collect(self) -> tuple[TensorDict, Any]:
        """One rollout: ``(dataset on CPU, RolloutStats)``."""
        data, stats = self.worker.collect()
        return data.to("cpu"), stats

    def fingerprint(self) -> dict[str, float]:
        """The policy's current weight fingerprint."""
        return self.policy.get_param_fingerprint()


class LearnerActor:
    """Body of the learner actor: one TRAIN policy.

    Args:
        train_cfg: rsl-rl ``train_cfg`` dict.
        train_config: Run settings.
        env_meta: Meta of one rollout env with ``num_envs`` set to the total over all actors.
        device: Torch device of the learner (``None``: CUDA if visible, else CPU).
        torch_threads: ``torch.set_num_threads`` for the process.
        seed: Seed of torch's RNG before the networks are built.
    """

    def __init__(
        self,
        train_cfg: dict[str, Any],
        train_config: TrainConfig,
        env_meta: RSLRLVecEnvMeta,
        device: str | None,
        torch_threads: int | None,
        seed: int | None,
    ) -> None:
        _set_up_process(torch_threads, seed)
        self.policy = RSLRLPolicy(
            PolicyConfig(train_cfg=train_cfg, device=device), PolicyRole.TRAIN
        )
        self.policy.init_train(train_config, env_meta)

    def train(self, *datasets: TensorDict) -> dict[str, float]:
        """Concatenate the actors' ``(T, N_k)`` datasets along envs and run one update."""
        data: Any = datasets[0] if len(datasets) == 1 else torch.cat(list(datasets), dim=1)
        self.policy.update_dataset(data)
        return self.policy.train()

    def get_weights(self) -> dict[str, dict[str, torch.Tensor]]:
        """``{module_name: state_dict}`` CPU snapshot."""
        return self.policy.get_trainable_parameters()

    def fingerprint(self) -> dict[str, float]:
        """The learner's weight fingerprint."""
        return self.policy.get_param_fingerprint()

    def save_checkpoint(self, path: str) -> None:
        """Atomic checkpoint of the learner's modules at ``path``."""
        self.policy.save_checkpoint(path)


def fingerprint_mismatches(
    reference: dict[str, float], other: dict[str, float], rel_tol: float = 1e-5
) -> list[str]:
    """Names whose norms differ by more than ``rel_tol`` (relative), or that only one side has."""
    names = set(reference) | set(other)
    return sorted(
        name
        for name in names
        if name not in reference
        or name not in other
        or not math.isclose(reference[name], other[name], rel_tol=rel_tol, abs_tol=1e-9)
    )


class RayEngine(EngineLoop):
    """Train an :class:`RSLRLPolicy` with rollout actors and a learner actor on Ray.

    Each iteration: every rollout actor collects ``num_steps_per_env`` steps in parallel; the
    learner concatenates the datasets along the env axis and runs one PPO update; its weights go
    into Ray's object store once and every actor loads them (behind its idle gate); each actor
    returns its weight fingerprint, which must match the learner's.

    Ray must already be initialized (``ray.init(...)``): locally, e.g.
    ``loopback_only_ray(); ray.init(num_cpus=4, include_dashboard=False,
    _node_ip_address="127.0.0.1")`` (every server on 127.0.0.1); on a cluster,
    ``ray.init(address="auto")``.

    Args:
        env_factory: ``() -> VecEnv``, pickled to every rollout actor and called there once. Torch's
            RNG is seeded per actor before the call, so factories that draw from it differ.
        train_cfg: rsl-rl-lib ``train_cfg`` dict.
        train_config: Run settings; ``None`` means ``TrainConfig()``.
        num_rollout_workers: Number of rollout actors ``K``.
        device: Learner device; ``None``: CUDA when the learner actor gets a GPU, else CPU.
        rollout_device: Rollout policies' device (``None``: CUDA if visible to the actor, else CPU).
        learner_options: Ray actor options of the learner; default ``{"num_cpus": 1}`` plus
            ``"num_gpus": 1`` when the cluster has a GPU.
        rollout_options: Ray actor options of each rollout actor; default ``{"num_cpus": 1}``.
        torch_threads: ``torch.set_num_threads`` in every actor; ``None`` leaves torch's default.
        timeout_s: Longest wait in seconds for any remote call; ``None`` waits forever.

    Raises:
        ImportError: If ray is not installed.
        RuntimeError: If Ray is not initialized.
        ValueError: If ``num_rollout_workers`` < 1.
    """

    def __init__(
        self,
        env_factory: Callable[[], VecEnv],
        train_cfg: dict[str, Any],
        train_config: TrainConfig | None = None,
        *,
        num_rollout_workers: int = 2,
        device: str | None = None,
        rollout_device: str | None = "cpu",
        learner_options: dict[str, Any] | None = None,
        rollout_options: dict[str, Any] | None = None,
        torch_threads: int | None = 1,
        timeout_s: float | None = 600.0,
    ) -> None:
        try:
            import ray
        except ImportError as error:
            raise ImportError(
                "RayEngine needs ray; install the extra: pip install 'rlightning-policy[ray]'."
            ) from error
        if not ray.is_initialized():
            raise RuntimeError(
                "RayEngine needs a running Ray: call ray.init(...) first (locally e.g. "
                "rlightning.engine.loopback_only_ray(); ray.init(num_cpus=4, "
                "include_dashboard=False, _node_ip_address='127.0.0.1'))."
            )
        if num_rollout_workers < 1:
            raise ValueError(f"num_rollout_workers must be >= 1, got {num_rollout_workers}.")
        PolicyConfig(train_cfg=train_cfg)  # fail here, not inside an actor, on a bad train_cfg
        self._ray = ray
        self.train_config = train_config if train_config is not None else TrainConfig()
        self.timeout_s = timeout_s
        seed = self.train_config.seed

        rollout_options = {"num_cpus": 1, **(rollout_options or {})}
        actor_cls: Any = ray.remote(RolloutActor)
        self.rollout_actors: list[Any] = [
            actor_cls.options(**rollout_options).remote(
                env_factory,
                train_cfg,
                f"env_{i}",
                rollout_device,
                torch_threads,
                None if seed is None else seed + 1 + i,
            )
            for i in range(num_rollout_workers)
        ]
        metas: list[Any] = self._get([a.env_meta.remote() for a in self.rollout_actors])
        # The learner sees all actors' envs side by side (datasets are concatenated on envs).
        learner_meta = dataclasses.replace(
            metas[0],
            env_id="learner",
            num_envs=sum(int(m.num_envs) for m in metas),
            get_observations=ObservationSnapshot(
                torch.cat([m.get_observations() for m in metas], dim=0)  # type: ignore[arg-type]
            ),
        )
        has_gpu = ray.cluster_resources().get("GPU", 0) >= 1
        learner_options = {
            "num_cpus": 1,
            "num_gpus": 1 if has_gpu else 0,
            **(learner_options or {}),
        }
        learner_cls: Any = ray.remote(LearnerActor)
        self.learner: Any = learner_cls.options(**learner_options).remote(
            train_cfg, self.train_config, learner_meta, device, torch_threads, seed
        )
        self._init_loop()
        self.last_mismatches: dict[int, list[str]] = {}
        self.broadcast_weights()

    def _get(self, refs: Any) -> Any:
        return self._ray.get(refs, timeout=self.timeout_s)

    def broadcast_weights(self) -> None:
        """Put the learner's weights in the object store once, load them on every rollout actor,
        and check each actor's fingerprint against the learner's.

        Raises:
            RuntimeError: If an actor's weights differ from the learner's after loading.
        """
        weights_ref = self.learner.get_weights.remote()
        actor_fingerprints = self._get(
            [a.set_weights.remote(weights_ref) for a in self.rollout_actors]
        )
        learner_fingerprint = self._get(self.learner.fingerprint.remote())
        self.last_mismatches = {
            i: bad
            for i, fingerprint in enumerate(actor_fingerprints)
            if (bad := fingerprint_mismatches(learner_fingerprint, fingerprint))
        }
        if self.last_mismatches:
            raise RuntimeError(
                f"Rollout actors run weights that differ from the learner's: {self.last_mismatches}"
            )

    def run_iteration(self) -> IterationReport:
        """Parallel rollouts -> one learner update -> weight broadcast; return the report."""
        start = time.perf_counter()
        refs = [a.collect.options(num_returns=2).remote() for a in self.rollout_actors]
        data_refs = [data for data, _ in refs]
        all_stats = self._get([stats for _, stats in refs])
        collect_time = time.perf_counter() - start
        start = time.perf_counter()
        losses = self._get(self.learner.train.remote(*data_refs))
        self.broadcast_weights()
        learn_time = time.perf_counter() - start

        env_log = mean_logs([s.env_log for s in all_stats])
        return self._report(all_stats, collect_time, learn_time, losses, env_log)

    def save_checkpoint(self, path: str | Path) -> None:
        """Atomic checkpoint of the learner's modules, written by the learner actor."""
        self._get(self.learner.save_checkpoint.remote(str(path)))

    def learner_fingerprint(self) -> dict[str, float]:
        """The learner's current weight fingerprint."""
        return self._get(self.learner.fingerprint.remote())

    def rollout_fingerprints(self) -> list[dict[str, float]]:
        """Each rollout actor's current weight fingerprint, in actor order."""
        return self._get([a.fingerprint.remote() for a in self.rollout_actors])

    def close(self) -> None:
        """Kill the engine's actors (Ray itself keeps running)."""
        for actor in [*self.rollout_actors, self.learner]:
            self._ray.kill(actor)
        self.rollout_actors = []

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
