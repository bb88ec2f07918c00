"""Actor/learner engine on Ray: K rollout actors, one learner actor, weights broadcast each update.

Ray is an optional dependency (``pip install rlightning-policy[ray]``); it is imported when a
:class:`RayEngine` is created, never at module import.
"""

from __future__ import annotations

import contextlib
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


class ActorRestarted(RuntimeError):
    """A rollout actor was asked to collect with weights it does not hold: Ray restarted it
    (its constructor ran again) since the engine last loaded weights into it."""


def _is_about(error: BaseException, actor: Any) -> bool:
    """Whether a Ray actor error names `actor` (an error without an actor id is assumed to)."""
    actor_id = getattr(error, "actor_id", None)
    if not actor_id:
        return True
    own = actor._actor_id.hex()
    return (actor_id.hex() if isinstance(actor_id, bytes) else str(actor_id)) == own


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

        self.weights_version = -1
        """Version of the weights loaded last (-1: none since this process started)."""

    def env_meta(self) -> RSLRLVecEnvMeta:
        """The env's meta (picklable)."""
        return self.meta

    def set_weights(
        self, weights: dict[str, dict[str, torch.Tensor]], version: int = 0
    ) -> tuple[dict[str, float], int]:
        """Push weights through the policy's weight-update thread and wait.

        Args:
            weights: ``{module_name: state_dict}``.
            version: The engine's count of broadcasts; `collect` checks it.

        Returns:
            ``(fingerprint of the loaded weights, version held before)`` (-1 before: this
            process never had weights, i.e. it just started or was restarted).
        """
        self.policy.push_weights(weights)
        self.policy.wait_for_weight_update_done()
        held_before, self.weights_version = self.weights_version, version
        return self.policy.get_param_fingerprint(), held_before

    def collect(self, version: int | None = None) -> tuple[TensorDict, Any]:
        """One rollout: ``(dataset on CPU, RolloutStats)``.

        Raises:
            ActorRestarted: ``version`` is not the version of the weights this actor holds (a
                restarted actor holds none): nothing is collected with stale weights.
        """
        if version is not None and version != self.weights_version:
            raise ActorRestarted(
                f"holds weights version {self.weights_version}, asked for {version}"
            )
        data, stats = self.worker.collect()
        stats.weights_version = self.weights_version
        return data.to("cpu"), stats

    def location(self) -> tuple[str, int]:
        """``(Ray node id, process id)`` of this actor."""
        import os

        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

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

    Rollout actors are spread over the cluster's nodes (Ray's ``"SPREAD"`` scheduling) and
    survive faults: a rollout actor whose process dies (killed, out of memory) is restarted by
    Ray (``max_restarts``), gets the current weights and collects its share of the iteration
    again, so no training is lost; the engine prints one line naming the actor and counts it in
    ``actor_restarts``. Weights are versioned and every rollout reports the version it ran: a
    restarted actor never collects with stale or initial weights. An actor that Ray does not
    restart (its restarts used up, or its constructor failed) or that stays unavailable for
    ``timeout_s`` ends the run with a RuntimeError naming it, after the learner saved a
    checkpoint. Data lost with a node (Ray's ObjectLostError) is not recovered.

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
        rollout_options: Ray actor options of each rollout actor, over the default
            ``{"num_cpus": 1, "scheduling_strategy": "SPREAD", "max_restarts":
            max_actor_restarts, "max_task_retries": 0}``.
        torch_threads: ``torch.set_num_threads`` in every actor; ``None`` leaves torch's default.
        timeout_s: Longest wait in seconds for any remote call; ``None`` waits forever.
        max_actor_restarts: How often each rollout actor may be restarted (>= 0).

    Raises:
        ImportError: If ray is not installed.
        RuntimeError: If Ray is not initialized; during `run`: a rollout actor died more than
            ``max_actor_restarts`` times, or the learner actor died (its weights since the last
            checkpoint are gone; the message names the checkpoint folder).
        ValueError: If ``num_rollout_workers`` < 1 or ``max_actor_restarts`` < 0.
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
        max_actor_restarts: int = 3,
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
        if max_actor_restarts < 0:
            raise ValueError(f"max_actor_restarts must be >= 0, got {max_actor_restarts}.")
        PolicyConfig(train_cfg=train_cfg)  # fail here, not inside an actor, on a bad train_cfg
        self._ray = ray
        self.train_config = train_config if train_config is not None else TrainConfig()
        self.timeout_s = timeout_s
        seed = self.train_config.seed

        self.actor_restarts = [0] * num_rollout_workers
        """Restarts of each rollout actor so far, in actor order."""
        rollout_options = {
            "num_cpus": 1,
            "scheduling_strategy": "SPREAD",
            "max_restarts": max_actor_restarts,
            # A call in flight when the actor died fails; the engine re-arms and repeats it.
            "max_task_retries": 0,
            **(rollout_options or {}),
        }
        # The budget Ray applies (rollout_options may set max_restarts itself).
        self.max_actor_restarts = int(rollout_options["max_restarts"])
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
        self._weights_version = 0
        self._weights_ref: Any = None
        self._updates = 0  # learner updates done (the learner's weights are after update n-1)
        self.broadcast_weights()

    def _get(self, refs: Any) -> Any:
        return self._ray.get(refs, timeout=self.timeout_s)

    def _on_each_actor(self, call: Callable[[Any], Any]) -> list[Any]:
        """``call(actor)`` on every rollout actor in parallel; the results in actor order.

        ``call`` returns an object ref, or a list of refs whose last one is waited on (the
        list is returned). Faults are recovered here: while Ray restarts an actor its calls
        fail as unavailable and are repeated; a restarted actor (`ActorRestarted`) is counted
        (`_count_restart`), gets the current weights and is called again. An actor that Ray
        will not restart (its restarts are used up) or that stays unavailable for
        ``timeout_s`` ends the run (`_lost`).
        """
        exceptions = self._ray.exceptions
        refs = [call(actor) for actor in self.rollout_actors]
        results = []
        for i in range(len(refs)):
            unavailable_since = None
            while True:
                ref = refs[i]
                try:
                    value = self._get(ref[-1] if isinstance(ref, (tuple, list)) else ref)
                    break
                except ActorRestarted as error:
                    self._discard(ref)
                    self._count_restart(i, error)
                    unavailable_since = None
                    actor = self.rollout_actors[i]
                    # Calls run in submission order: the weights arrive before the call.
                    actor.set_weights.remote(self._weights_ref, self._weights_version)
                    refs[i] = call(actor)
                except exceptions.RayActorError as error:
                    self._discard(ref)
                    actor = self.rollout_actors[i]
                    if not _is_about(error, actor):
                        raise  # another actor failed (the learner, whose weights this needed)
                    if not isinstance(error, exceptions.ActorUnavailableError):
                        # Died for good: restarts used up, or its constructor failed. (While
                        # Ray restarts an actor, its calls fail as unavailable.)
                        raise self._lost(i, error) from error
                    now = time.monotonic()
                    unavailable_since = unavailable_since or now
                    if self.timeout_s is not None and now - unavailable_since > self.timeout_s:
                        raise self._lost(i, error, waited=now - unavailable_since) from error
                    time.sleep(0.2)
                    refs[i] = call(actor)
            results.append(ref if isinstance(ref, (tuple, list)) else value)
        return results

    def _discard(self, ref: Any) -> None:
        """Read the errors of a failed call's other refs, so that Ray does not report them as
        unhandled when they are garbage-collected."""
        for other in ref[:-1] if isinstance(ref, (tuple, list)) else ():
            with contextlib.suppress(Exception):
                self._ray.get(other, timeout=1.0)

    def _count_restart(self, i: int, error: BaseException | None = None) -> None:
        """Count a restart of rollout actor ``i`` and say so in one line."""
        self.actor_restarts[i] += 1
        count, limit = self.actor_restarts[i], self.max_actor_restarts
        if count > limit:  # Ray restarts at most max_restarts times; kept as a safeguard
            raise self._lost(i, error)
        print(
            f"[rlightning] rollout actor env_{i} was lost and Ray restarted it ({count}/{limit}): "
            "it got the current weights and collects again.",
            flush=True,
        )

    def _lost(
        self, i: int, error: BaseException | None, waited: float | None = None
    ) -> RuntimeError:
        """The error that ends a run whose rollout actor ``i`` is gone for good (after a
        checkpoint of the learner)."""
        saved = self._save_after_failure()
        cause = type(error).__name__ if error is not None else "unknown"
        restarts = f"{self.actor_restarts[i]} restart(s), max_actor_restarts="
        restarts += str(self.max_actor_restarts)
        if waited is not None:
            what = f"stayed unavailable for {waited:.0f} s (timeout_s; {restarts})"
        elif getattr(error, "actor_init_failed", False):
            what = f"failed in its constructor, so Ray does not restart it ({restarts})"
        else:
            what = f"was lost ({cause}) and Ray does not restart it ({restarts})"
        return RuntimeError(f"Rollout actor env_{i} {what}. {saved}")

    def _save_after_failure(self) -> str:
        """Checkpoint the learner after a fatal fault; a sentence saying where (or why not)."""
        folder = self.train_config.save_dir
        if folder is None:
            return "No checkpoint was saved (train_config.save_dir is None)."
        if self._updates == 0:
            return "No checkpoint was saved: the learner had not updated yet."
        path = Path(folder) / f"model_{self._updates - 1}.pt"
        try:
            self.save_checkpoint(path)
        except Exception as error:  # the original fault matters more than this one
            return f"Saving a checkpoint failed too ({error})."
        return f"The learner's weights after iteration {self._updates - 1} are saved in {path}."

    def _learner_died(self, error: BaseException) -> RuntimeError:
        folder = self.train_config.save_dir
        where = f"the checkpoints in {folder}" if folder else "no checkpoint (save_dir is None)"
        return RuntimeError(
            "The learner actor died "
            f"({type(error).__name__}); its weights since the last checkpoint are lost. "
            f"Resume from {where}."
        )

    def broadcast_weights(self) -> None:
        """Put the learner's weights in the object store once, load them on every rollout actor,
        and check each actor's fingerprint against the learner's.

        Raises:
            RuntimeError: If an actor's weights differ from the learner's after loading.
        """
        self._weights_version += 1
        self._weights_ref = self.learner.get_weights.remote()
        version = self._weights_version
        try:
            loaded = self._on_each_actor(lambda a: a.set_weights.remote(self._weights_ref, version))
            learner_fingerprint = self._get(self.learner.fingerprint.remote())
        except self._ray.exceptions.RayActorError as error:
            raise self._learner_died(error) from error
        for i, (_, held_before) in enumerate(loaded):
            if held_before == -1 and version > 1:  # a fresh process: Ray restarted the actor
                self._count_restart(i)
        actor_fingerprints = [fingerprint for fingerprint, _ in loaded]
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
        version = self._weights_version
        refs = self._on_each_actor(lambda a: a.collect.options(num_returns=2).remote(version))
        data_refs = [data for data, _ in refs]
        all_stats = self._get([stats for _, stats in refs])
        self.last_collect_versions = [s.weights_version for s in all_stats]
        """Weights version each actor's last rollout ran, in actor order."""
        if any(v != version for v in self.last_collect_versions):  # an invariant, kept checked
            raise RuntimeError(
                f"Rollouts ran weights versions {self.last_collect_versions}, not {version}."
            )
        collect_time = time.perf_counter() - start
        start = time.perf_counter()
        try:
            losses = self._get(self.learner.train.remote(*data_refs))
        except self._ray.exceptions.RayActorError as error:
            raise self._learner_died(error) from error
        self._updates += 1
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

    def rollout_locations(self) -> list[tuple[str, int]]:
        """``(Ray node id, process id)`` of each rollout actor, in actor order."""
        return self._on_each_actor(lambda a: a.location.remote())

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
