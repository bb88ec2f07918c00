"""The rlightning policy contract on rsl-rl-lib PPO.

rsl-rl-lib's ``OnPolicyRunner`` runs ``act -> env.step -> process_env_step`` for
``num_steps_per_env`` steps, then ``compute_returns -> update``, all in one process. Here the same
work is split by role:

- EVAL (actor): ``rollout_step`` is ``act`` (sample actions, record values, log-probs and
  distribution parameters); ``postprocess`` is ``process_env_step`` (reward/done of the step,
  time-out bootstrapping) plus the critic's value of the next state, so every transition is
  self-contained.
- TRAIN (learner): ``update_dataset`` receives ``(T, N)`` blocks of transitions; ``train`` fills an
  rsl-rl ``RolloutStorage``, computes GAE targets and runs ``PPO.update``.

Weights are exchanged as ``{"actor": state_dict, "critic": state_dict}``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import gymnasium as gym
import torch
from rsl_rl.algorithms import PPO
from rsl_rl.env import VecEnv
from rsl_rl.storage import RolloutStorage
from rsl_rl.utils import resolve_callable, resolve_optimizer
from tensordict import TensorDict

from rlightning.policy.base_policy import BasePolicy, PolicyRole
from rlightning.policy.config import Config, PolicyConfig, TrainConfig
from rlightning.policy.rsl_rl_policy import algorithms
from rlightning.policy.rsl_rl_policy.returns import compute_gae
from rlightning.types import EnvMeta, EnvRet, PolicyResponse

_DATASET_KEYS = (
    "observations",
    "actions",
    "rewards",
    "dones",
    "values",
    "next_values",
    "actions_log_prob",
    "distribution_params",
)


class ObservationSnapshot:
    """Picklable stand-in for ``env.get_observations``: returns a stored CPU copy.

    The learner (possibly in another process) only needs observation group names, shapes and
    dtypes to build its networks, not a live environment.
    """

    def __init__(self, observations: TensorDict) -> None:
        self._observations = observations.detach().to("cpu").clone()

    def __call__(self) -> TensorDict:
        return self._observations.clone()


@dataclass
class RSLRLVecEnvMeta(EnvMeta):
    """:class:`~rlightning.types.EnvMeta` of an rsl-rl ``VecEnv``.

    Build it with :func:`env_meta_from_vec_env`, which fills every field from a live env and
    makes ``get_observations`` a picklable snapshot.

    Raises:
        ValueError: If ``num_actions`` is given and is not a positive integer.
    """

    num_actions: int | None = None
    """Action dimension of one sub-environment."""

    get_observations: Callable[[], TensorDict] | None = None
    """Returns an observation ``TensorDict`` with batch size ``(num_envs,)``; only its group
    names, shapes and dtypes are used (to size the networks and the rollout storage)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_actions is not None and (
            isinstance(self.num_actions, bool)
            or not isinstance(self.num_actions, int)
            or self.num_actions < 1
        ):
            raise ValueError(
                f"RSLRLVecEnvMeta.num_actions must be a positive int or None, got "
                f"{self.num_actions!r}."
            )


def env_meta_from_vec_env(env: VecEnv, env_id: str = "env_0") -> RSLRLVecEnvMeta:
    """Describe an rsl-rl ``VecEnv`` (e.g. mjlab's ``RslRlVecEnvWrapper``) for a policy.

    Args:
        env: The environment; ``num_envs``, ``num_actions`` and ``get_observations()`` are read,
            and ``single_action_space`` / ``action_space`` if present.
        env_id: Name recorded in the meta and in every ``EnvRet`` of this env.

    Returns:
        A picklable :class:`RSLRLVecEnvMeta`. ``action_space`` is the env's per-env action space
        when it has the shape ``(num_actions,)``, otherwise an unbounded ``Box``;
        ``observation_space`` is a ``Dict`` of unbounded ``Box`` es, one per observation group.

    Raises:
        TypeError: If ``get_observations()`` does not return a ``TensorDict``.
    """
    observations = env.get_observations()
    if not isinstance(observations, TensorDict):
        raise TypeError(
            f"{type(env).__name__}.get_observations() returned {type(observations).__name__}; "
            "rsl-rl-lib 5 environments must return a TensorDict of observation groups."
        )
    num_envs, num_actions = int(env.num_envs), int(env.num_actions)
    action_space = None
    for name in ("single_action_space", "action_space"):
        space = getattr(env, name, None)
        if isinstance(space, gym.spaces.Box) and tuple(space.shape) == (num_actions,):
            action_space = space
            break
    if action_space is None:
        action_space = gym.spaces.Box(-math.inf, math.inf, shape=(num_actions,))
    observation_space = gym.spaces.Dict(
        {
            str(key): gym.spaces.Box(-math.inf, math.inf, shape=tuple(value.shape[1:]))
            for key, value in observations.items()
        }
    )
    return RSLRLVecEnvMeta(
        env_id=env_id,
        action_space=action_space,
        observation_space=observation_space,
        num_envs=num_envs,
        num_actions=num_actions,
        get_observations=ObservationSnapshot(observations),
    )


class RSLRLPolicy(BasePolicy):
    """rsl-rl-lib PPO (actor + critic models) as an rlightning policy.

    Args:
        config: ``config.train_cfg`` is the rsl-rl ``train_cfg`` dict (``"algorithm"``,
            ``"actor"``, ``"critic"``, ``"obs_groups"``, ``"num_steps_per_env"``).
        role_type: ``PolicyRole.TRAIN`` for the learner, ``PolicyRole.EVAL`` for actors.
    """

    algo: algorithms.Agent
    """The rsl-rl algorithm instance (``None`` until ``construct_network``); a
    ``rsl_rl.algorithms.PPO`` (or subclass) instance."""

    algo_cls: type[algorithms.Agent]
    """The algorithm class resolved from ``train_cfg["algorithm"]["class_name"]``."""

    def __init__(self, config: PolicyConfig, role_type: PolicyRole) -> None:
        super().__init__(config, role_type)
        self.algo = None  # type: ignore[assignment]
        self.algo_cls = None  # type: ignore[assignment]
        self.train_cfg: dict[str, Any] | None = None
        """The ``train_cfg`` the networks were built from, with observation sets resolved."""
        self.env_meta: RSLRLVecEnvMeta | None = None
        """Set by ``construct_network``; may be set earlier so ``rollout_step`` can act randomly
        within ``env_meta.action_space`` before the networks exist."""
        self.num_updates = 0
        """Number of PPO updates ``train`` has run."""

    # ------------------------------------------------------------------ construction

    def construct_network(
        self,
        model_config: Config | None = None,
        env_meta: EnvMeta | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        """Create the rsl-rl algorithm (actor, critic, storage, optimizer) and register the actor
        and critic as the modules ``"actor"`` and ``"critic"``.

        Args:
            model_config: the policy's config: a :class:`PolicyConfig` (its ``train_cfg`` is
                used) or an rsl-rl ``train_cfg`` dict; ``None`` uses ``self.config.train_cfg``.
                ``algorithm.class_name`` defaults to ``"PPO"``. It is deep-copied, not changed.
            env_meta: An :class:`RSLRLVecEnvMeta` (``num_envs``, ``num_actions``,
                ``get_observations``); see :func:`env_meta_from_vec_env`.
            *args: Accepted for interface compatibility; unused.
            **kwargs: Accepted for interface compatibility; unused.

        Raises:
            ValueError: If the config lacks a required key, asks for an unsupported feature
                (RND, recurrent or deterministic actor), or names a non-PPO algorithm; or if
                ``env_meta`` lacks ``num_envs``/``num_actions``/``get_observations``.
        """
        if model_config is None:
            model_config = self.config.train_cfg
        elif isinstance(model_config, PolicyConfig):
            model_config = model_config.train_cfg
        cfg = copy.deepcopy(dict(model_config))
        for key in ("algorithm", "actor", "critic", "num_steps_per_env"):
            if key not in cfg:
                raise ValueError(
                    f"RSLRLPolicy: train_cfg lacks '{key}'. Pass an rsl-rl-lib train_cfg dict "
                    "(the one OnPolicyRunner takes) as PolicyConfig.train_cfg."
                )
        steps = cfg["num_steps_per_env"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(
                f"train_cfg['num_steps_per_env'] must be a positive int, got {steps!r}."
            )
        cfg.setdefault("obs_groups", {})
        cfg.setdefault("multi_gpu", None)
        cfg["algorithm"].setdefault("class_name", "PPO")
        if cfg["algorithm"].get("rnd_cfg") is not None:
            raise ValueError(
                "train_cfg['algorithm']['rnd_cfg'] is set, but RSLRLPolicy does not support RND "
                "(its intrinsic reward is computed inside rsl-rl's single-process env loop). "
                "Set it to None."
            )
        self._check_env_meta(env_meta)
        meta: Any = env_meta

        resolved = resolve_callable(cfg["algorithm"]["class_name"])
        if not (isinstance(resolved, type) and issubclass(resolved, PPO)):
            raise ValueError(
                f"train_cfg['algorithm']['class_name'] resolves to {resolved!r}; RSLRLPolicy "
                "needs rsl_rl.algorithms.PPO or a subclass."
            )
        algo_cls: type[PPO] = resolved  # the policy needs PPO's rollout/update interface
        observations = meta.get_observations().to(self.device)
        # rsl-rl prints the observation sets and the actor/critic modules while it builds them:
        # in every Ray worker too. train_cfg["verbose"] keeps them.
        quiet = contextlib.redirect_stdout(io.StringIO())
        with contextlib.nullcontext() if cfg.get("verbose", False) else quiet:
            algo = algo_cls.construct_algorithm(observations, meta, cfg, self.device)
        actor, critic = algo._raw_actor, algo._raw_critic
        if actor.is_recurrent or critic.is_recurrent:
            raise ValueError(
                "train_cfg['actor'/'critic'] builds a recurrent model; RSLRLPolicy supports "
                "feed-forward models only (use MLPModel or CNNModel)."
            )
        if getattr(actor, "distribution", None) is None:
            raise ValueError(
                "train_cfg['actor'] has no 'distribution_cfg'; PPO needs a stochastic actor, e.g. "
                "distribution_cfg={'class_name': 'GaussianDistribution', 'init_std': 1.0}."
            )

        self.algo, self.algo_cls = algo, algo_cls
        self.train_cfg, self.env_meta = cfg, meta
        self.actor = actor
        self.critic = critic
        self.model_list = [("actor", actor), ("critic", critic)]

    @staticmethod
    def _check_env_meta(env_meta: Any) -> None:
        for name in ("num_envs", "num_actions", "get_observations"):
            if getattr(env_meta, name, None) is None:
                raise ValueError(
                    f"RSLRLPolicy needs env_meta.{name}; build the meta with "
                    "env_meta_from_vec_env(env)."
                )

    def setup_optimizer(self, optim_cfg: Mapping[str, Any] | None) -> None:
        """Re-create the PPO optimizer over the actor and critic parameters.

        Args:
            optim_cfg: ``None`` keeps the choice of ``train_cfg["algorithm"]`` (``"optimizer"``,
                default ``"adam"``; ``"learning_rate"``, default ``1e-3``); a mapping with either
                key overrides it.

        Raises:
            RuntimeError: If the networks do not exist yet.
            ValueError: If ``optim_cfg`` has keys other than ``"optimizer"``/``"learning_rate"``.
        """
        if self.algo is None or self.train_cfg is None:
            raise RuntimeError("setup_optimizer needs the networks; call construct_network first.")
        settings = {
            "optimizer": self.train_cfg["algorithm"].get("optimizer", "adam"),
            "learning_rate": self.train_cfg["algorithm"].get("learning_rate", 1e-3),
        }
        if optim_cfg is not None:
            unknown = set(optim_cfg) - set(settings)
            if unknown:
                raise ValueError(
                    f"optim_cfg has unknown keys {sorted(unknown)}; allowed: {sorted(settings)}."
                )
            settings.update(optim_cfg)
        parameters = chain(self.algo.actor.parameters(), self.algo.critic.parameters())
        self.algo.optimizer = resolve_optimizer(settings["optimizer"])(
            parameters, lr=float(settings["learning_rate"])
        )
        self.algo.learning_rate = float(settings["learning_rate"])

    def init_train(self, train_config: TrainConfig, env_meta: EnvMeta | None = None) -> None:
        """Build the learner: networks in train mode, rollout storage, optimizer.

        Args:
            train_config: The run's settings; ``None`` is taken as ``TrainConfig()``.
            env_meta: See ``construct_network``.
        """
        super().init_train(train_config if train_config is not None else TrainConfig(), env_meta)
        self.algo.train_mode()

    def init_eval(self, eval_config: Any = None, env_meta: EnvMeta | None = None) -> None:
        """Build an actor: networks in eval mode, idle gate, weight-update thread.

        The actor keeps no rollout storage (transitions leave through ``postprocess``).

        Args:
            eval_config: Free-form settings kept as ``self.eval_config``.
            env_meta: See ``construct_network``.
        """
        super().init_eval(eval_config, env_meta)
        self.algo.eval_mode()
        self.algo.storage = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ acting

    def _as_observations(self, observation: Any) -> TensorDict:
        if isinstance(observation, TensorDict):
            return observation.to(self.device)
        if isinstance(observation, Mapping):
            batch = next(iter(observation.values())).shape[0]
            return TensorDict(dict(observation), batch_size=[batch]).to(self.device)
        raise TypeError(
            f"EnvRet.observation is {type(observation).__name__}; RSLRLPolicy needs a TensorDict "
            "(or dict) of observation groups such as {'actor': (N, D_a), 'critic': (N, D_c)}."
        )

    def rollout_step(self, env_ret: EnvRet) -> PolicyResponse:
        """Sample actions for ``env_ret.observation`` (rsl-rl's ``PPO.act``).

        Args:
            env_ret: Current observations, a ``TensorDict`` with batch size ``(N,)``.

        Returns:
            ``PolicyResponse(env_ret.env_id, ...)`` with fields, on the policy's device:
            ``observations`` (the input ``TensorDict``), ``actions`` ``(N, A)``, ``values``
            ``(N,)``, ``actions_log_prob`` ``(N,)`` and ``distribution_params`` (``TensorDict``
            ``{"param_0": ..., "param_1": ...}``, e.g. mean and std, each ``(N, A)``).
            Before the networks exist (but with ``env_meta`` set) the actions are drawn uniformly
            within ``env_meta.action_space`` (unbounded dimensions: within [-1, 1]) and the
            response has only ``observations`` and ``actions``.

        Raises:
            RuntimeError: If neither the networks nor ``env_meta`` exist.
        """
        observations = self._as_observations(env_ret.observation)
        if self.algo is None:
            return PolicyResponse(
                env_ret.env_id,
                observations=observations,
                actions=self._random_actions(observations.batch_size[0]),
            )
        with torch.inference_mode():
            actor, critic = self.algo.actor, self.algo.critic
            actions = actor(observations, stochastic_output=True)
            log_prob = actor.get_output_log_prob(actions)
            params = actor.output_distribution_params
            values = critic(observations)
        batch = observations.batch_size
        return PolicyResponse(
            env_ret.env_id,
            observations=observations,
            actions=actions,
            values=values.reshape(batch),
            actions_log_prob=log_prob.reshape(batch),
            distribution_params=TensorDict(
                {f"param_{i}": p for i, p in enumerate(params)}, batch_size=batch
            ),
        )

    def _random_actions(self, num_envs: int) -> torch.Tensor:
        space = getattr(self.env_meta, "action_space", None)
        if not isinstance(space, gym.spaces.Box):
            raise RuntimeError(
                "rollout_step before the networks exist draws uniform random actions and needs "
                "policy.env_meta.action_space (a gymnasium Box); call init_eval(env_meta=...) or "
                "set policy.env_meta first."
            )
        low = torch.as_tensor(space.low, dtype=torch.float32, device=self.device)
        high = torch.as_tensor(space.high, dtype=torch.float32, device=self.device)
        bounded = torch.isfinite(low) & torch.isfinite(high)
        low = torch.where(bounded, low, torch.full_like(low, -1.0))
        high = torch.where(bounded, high, torch.full_like(high, 1.0))
        unit = torch.rand((num_envs, *low.shape), device=self.device)
        return low + unit * (high - low)

    def postprocess(self, env_ret: EnvRet, policy_resp: PolicyResponse) -> PolicyResponse:
        """Complete the transition started by ``policy_resp`` (rsl-rl's ``process_env_step``).

        Reward and done are those of ``env_ret`` (the step that executed
        ``policy_resp.actions``), so transition ``t`` holds ``(s_t, a_t, r_t, done_t)``. Where the
        episode hit its time limit, the reward is bootstrapped as rsl-rl does:
        ``r_t += gamma * V(s_t)``.

        Args:
            env_ret: Output of the step that executed ``policy_resp.actions``: ``last_reward``,
                ``last_terminated``, ``last_truncated`` ``(N,)`` and the next ``observation``.
            policy_resp: The ``rollout_step`` response for the previous observation.

        Returns:
            ``PolicyResponse`` with the fields of ``policy_resp`` (``observations`` are those of
            ``s_t``) plus ``rewards`` ``(N,)`` float, ``dones`` ``(N,)`` bool, ``time_outs``
            ``(N,)`` bool and ``next_values`` ``(N,)`` = ``V(s_{t+1})``, the bootstrap value that
            the learner's GAE needs.

        Raises:
            ValueError: If ``env_ret`` is a reset (no ``last_*`` fields), the env ids differ, or
                ``policy_resp`` came from the random policy (no ``values``).
        """
        if env_ret.env_id != policy_resp.env_id:
            raise ValueError(
                f"postprocess got an EnvRet of '{env_ret.env_id}' and a response for "
                f"'{policy_resp.env_id}'; pair each response with its own env's next output."
            )
        if env_ret.last_reward is None or env_ret.last_terminated is None:
            raise ValueError(
                "postprocess needs the EnvRet returned by the step that executed the response's "
                "actions; this one has no last_reward/last_terminated (a reset?)."
            )
        if "values" not in policy_resp:
            raise ValueError(
                "policy_resp has no 'values' (it came from the random pre-initialization policy); "
                "only responses of the built networks can become training transitions."
            )
        batch = policy_resp.actions.shape[:1]
        with torch.inference_mode():
            terminated = env_ret.last_terminated.to(self.device).reshape(batch).bool()
            if env_ret.last_truncated is None:
                time_outs = torch.zeros_like(terminated)
            else:
                time_outs = env_ret.last_truncated.to(self.device).reshape(batch).bool()
            rewards = env_ret.last_reward.to(self.device, torch.float32).reshape(batch).clone()
            rewards += self.algo.gamma * policy_resp.values * time_outs
            next_observations = self._as_observations(env_ret.observation)
            next_values = self.algo.critic(next_observations).reshape(batch)
        fields = {name: policy_resp[name] for name in policy_resp}
        return PolicyResponse(
            policy_resp.env_id,
            **fields,
            rewards=rewards,
            dones=terminated | time_outs,
            time_outs=time_outs,
            next_values=next_values,
        )

    # ------------------------------------------------------------------ learning

    def update_dataset(self, data: TensorDict) -> None:
        """Queue a ``(T, N)`` block of transitions for ``train``.

        Args:
            data: ``TensorDict`` with batch size ``(T, N)`` (time, env) holding the ``postprocess``
                fields stacked over time: ``observations`` (groups ``(T, N, D)``), ``actions``
                ``(T, N, A)``, ``rewards``/``dones``/``values``/``next_values``/
                ``actions_log_prob`` ``(T, N)``, ``distribution_params`` (``(T, N, A)`` each).
                Blocks of several actors may be concatenated along the env axis.

        Raises:
            ValueError: If the batch size is not 2-D or a key is missing.
        """
        if len(data.batch_size) != 2:
            raise ValueError(
                f"update_dataset expects batch size (T, N), got {tuple(data.batch_size)}; stack "
                "transitions over time with torch.stack(steps, dim=0)."
            )
        # TensorDict has no `in`; membership goes through keys().
        missing = [key for key in _DATASET_KEYS if key not in data.keys()]  # noqa: SIM118
        if missing:
            raise ValueError(
                f"update_dataset: dataset lacks {missing}; build it from postprocess() outputs."
            )
        self.dataset.append(data)

    def train(self) -> dict[str, float]:  # type: ignore[override]
        """Pop the oldest queued dataset and run one PPO update on it.

        Returns:
            rsl-rl's mean losses over the update (``"value"``, ``"surrogate"``, ``"entropy"``,
            plus ``"symmetry"`` when configured) and the ``"learning_rate"`` after the update.

        Raises:
            RuntimeError: If this is not an initialized TRAIN policy or no dataset is queued.
        """
        if self.role_type != PolicyRole.TRAIN or self.algo is None:
            raise RuntimeError("train() needs a TRAIN policy after init_train().")
        if not self.dataset:
            raise RuntimeError("train() found no dataset; call update_dataset(data) first.")
        data = self.dataset.popleft().to(self.device)
        storage = self._fill_storage(data)
        returns, advantages = compute_gae(
            data["rewards"].float(),
            data["dones"],
            data["values"].float(),
            data["next_values"].float(),
            self.algo.gamma,
            self.algo.lam,
        )
        if not self.algo.normalize_advantage_per_mini_batch:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        storage.returns.copy_(returns.unsqueeze(-1))
        storage.advantages = advantages.unsqueeze(-1).clone()
        self.algo.train_mode()
        losses = self.algo.update()
        self.num_updates += 1
        return {
            **{k: float(v) for k, v in losses.items()},
            "learning_rate": self.algo.learning_rate,
        }

    def _fill_storage(self, data: TensorDict) -> RolloutStorage:
        """Copy a dataset into an rsl-rl ``RolloutStorage`` of matching size (re-allocated when
        the number of steps, envs or observation groups changed)."""
        num_steps, num_envs = data.batch_size
        observations = data["observations"]
        storage = self.algo.storage
        if (
            storage is None
            or storage.num_transitions_per_env != num_steps
            or storage.num_envs != num_envs
            or set(storage.observations.keys()) != set(observations.keys())
        ):
            storage = RolloutStorage(
                "rl",
                num_envs,
                num_steps,
                observations[0],
                [int(data["actions"].shape[-1])],
                self.device,
            )
            self.algo.storage = storage
        storage.observations.copy_(observations)
        storage.actions.copy_(data["actions"])
        storage.rewards.copy_(data["rewards"].unsqueeze(-1))
        storage.dones.copy_(data["dones"].unsqueeze(-1))
        storage.values.copy_(data["values"].unsqueeze(-1))
        storage.actions_log_prob.copy_(data["actions_log_prob"].unsqueeze(-1))
        params = data["distribution_params"]
        storage.distribution_params = tuple(
            params[f"param_{i}"].clone() for i in range(len(params.keys()))
        )
        storage.step = num_steps
        return storage

    # ------------------------------------------------------------------ weights

    def get_trainable_parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """Snapshot of ``{"actor": state_dict, "critic": state_dict}`` as detached CPU copies
        (parameters and buffers such as observation-normalizer statistics).

        Raises:
            RuntimeError: If the networks do not exist yet.
        """
        if not self.model_list:
            raise RuntimeError("get_trainable_parameters needs the networks; call init first.")
        return {
            name: {
                key: value.detach().to("cpu", copy=True)
                for key, value in module.state_dict().items()
            }
            for name, module in self.model_list
        }

    def load_state_dict(self, state_dict: Mapping[str, Mapping[str, torch.Tensor]]) -> None:  # type: ignore[override]
        """Load ``{module_name: state_dict}`` weights into the matching modules, with a
        ``UserWarning`` for every mismatch.

        Mismatches that are warned about and skipped: module names this policy does not have;
        modules of this policy absent from ``state_dict`` (they keep their weights); within a
        module, missing and unexpected tensor names and tensors of the wrong shape (the module's
        other tensors load; the skipped ones keep their values). A complete, matching dict loads
        silently.

        Raises:
            RuntimeError: If the networks do not exist yet.
        """
        if not self.model_list:
            raise RuntimeError(
                "load_state_dict needs the networks; call init_train/init_eval first."
            )
        modules = dict(self.model_list)
        unknown = sorted(set(state_dict) - set(modules))
        missing = sorted(set(modules) - set(state_dict))
        if unknown:
            warnings.warn(
                f"RSLRLPolicy.load_state_dict: unknown modules {unknown} were not loaded; this "
                f"policy has {sorted(modules)}.",
                stacklevel=2,
            )
        if missing:
            warnings.warn(
                f"RSLRLPolicy.load_state_dict: modules {missing} are missing from the given state "
                "dict and keep their current weights.",
                stacklevel=2,
            )
        for name, module in modules.items():
            if name not in state_dict:
                continue
            own = module.state_dict()
            given = dict(state_dict[name])
            wrong_shape = sorted(
                k for k, v in given.items() if k in own and tuple(v.shape) != tuple(own[k].shape)
            )
            for key in wrong_shape:
                del given[key]
            result = module.load_state_dict(given, strict=False)
            problems = []
            if wrong_shape:
                problems.append(f"tensors of the wrong shape {wrong_shape} were not loaded")
            missing_keys = sorted(set(result.missing_keys) - set(wrong_shape))
            if missing_keys:
                problems.append(f"tensors {missing_keys} are missing")
            if result.unexpected_keys:
                problems.append(f"unexpected tensors {sorted(result.unexpected_keys)} were ignored")
            if problems:
                warnings.warn(
                    f"RSLRLPolicy.load_state_dict: module '{name}': "
                    + "; ".join(problems)
                    + " (those keep their current values).",
                    stacklevel=2,
                )
