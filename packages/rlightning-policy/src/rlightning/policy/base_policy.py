"""The rlightning policy contract: one class, two roles.

A policy class is instantiated twice (or more) in a run:

- the **learner** (``PolicyRole.TRAIN``): ``init_train`` -> repeatedly ``update_dataset`` +
  ``train``; its weights leave through ``get_trainable_parameters``.
- one or more **actors** (``PolicyRole.EVAL``): ``init_eval`` -> repeatedly ``rollout_step`` and
  ``postprocess`` on environment data; new weights arrive through ``push_weights`` (or
  ``load_state_dict``).

Weights travel as ``{module_name: state_dict}`` dicts. On an actor, inference and weight loading
never overlap: both pass through the *idle gate* (a lock held while the policy computes). Weights
pushed while a rollout step runs are applied by a background thread as soon as the step ends.

Note that ``BasePolicy.train()`` is the training step of the contract and shadows
``nn.Module.train(mode)``; set train/eval mode on the registered sub-modules instead (``eval()`` is
overridden to do exactly that).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import weakref
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import torch
from tensordict import TensorDict
from torch import nn

from rlightning.policy.config import PolicyConfig, TrainConfig
from rlightning.types import EnvMeta, EnvRet, PolicyResponse

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10 has no enum.StrEnum

    class StrEnum(str, Enum):
        """``str`` enum whose members compare and format as their value."""

        def __str__(self) -> str:
            return str(self.value)


class PolicyRole(StrEnum):
    """What a policy instance is for."""

    TRAIN = "train"
    """The learner: owns the optimizer, consumes datasets, produces weights."""

    EVAL = "eval"
    """An actor: samples actions for environments, receives weights."""


class BasePolicy(nn.Module, ABC):
    """Abstract policy with the rlightning actor/learner contract.

    Subclasses implement the eight abstract methods; this class provides role set-up
    (``init_train``/``init_eval``), the idle gate, the background weight-update thread, atomic
    checkpoints and weight fingerprints.

    Args:
        config: What the policy is (networks, device, weight-update behaviour).
        role_type: ``PolicyRole.TRAIN`` or ``PolicyRole.EVAL`` (or their string values).

    Raises:
        ValueError: If ``role_type`` is not a ``PolicyRole`` value.
        TypeError: If ``config`` is not a ``PolicyConfig``.
    """

    def __init__(self, config: PolicyConfig, role_type: PolicyRole) -> None:
        super().__init__()
        if not isinstance(config, PolicyConfig):
            raise TypeError(f"config must be a PolicyConfig, got {type(config).__name__}.")
        try:
            self.role_type = PolicyRole(role_type)
        except ValueError:
            raise ValueError(
                f"role_type must be one of {[r.value for r in PolicyRole.__members__.values()]}, "
                f"got {role_type!r}."
            ) from None
        self.config = config
        if config.device is not None:
            self.device = str(torch.device(config.device))
        else:
            self.device = "cuda" if torch.cuda.is_available() else "cpu"

        self.model_list: list[tuple[str, nn.Module]] = []
        """``(module_name, module)`` pairs whose weights the policy exchanges."""
        self.is_init = False
        self.train_config: TrainConfig | None = None
        self.eval_config: Any = None
        self.dataset: deque[TensorDict] = deque()
        """Datasets handed over by ``update_dataset`` and not yet consumed by ``train``."""

        # Idle gate: held while the policy computes for an environment or loads weights.
        self._idle_gate = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending_weights: dict[str, dict[str, torch.Tensor]] | None = None
        self._weights_signal = threading.Event()
        self._weights_done = threading.Event()
        self._weights_done.set()
        self._weights_stop = threading.Event()
        self._weights_error: BaseException | None = None
        self._weights_thread: threading.Thread | None = None
        self.weight_version = 0
        """Number of weight loads applied through ``push_weights`` (EVAL role)."""

    # ------------------------------------------------------------------ abstract contract

    @abstractmethod
    def construct_network(
        self, model_config: Any = None, env_meta: EnvMeta | None = None, *args: Any, **kwargs: Any
    ) -> None:
        """Build the networks and register them in ``self.model_list``.

        Called once by ``init_train`` and ``init_eval`` (both roles), before anything else.

        Args:
            model_config: Network/algorithm description; ``None`` means "take it from
                ``self.config``".
            env_meta: Facts about the environment (spaces, number of envs).
        """

    @abstractmethod
    def setup_optimizer(self, optim_cfg: Any) -> None:
        """Create (or re-create) the optimizer over the trainable modules.

        Called by ``init_train`` with ``self.config.optim_cfg`` (TRAIN role only).
        """

    @abstractmethod
    def rollout_step(self, env_ret: EnvRet) -> PolicyResponse:
        """Compute actions for one batch of environment output.

        Called on an EVAL policy for every environment step, through ``rollout`` (which holds the
        idle gate and disables autograd).

        Args:
            env_ret: The environment's current observation, ``(N, ...)`` per group.

        Returns:
            A response whose ``actions`` field is ``(N, num_actions)``.
        """

    @abstractmethod
    def postprocess(self, env_ret: EnvRet, policy_resp: PolicyResponse) -> Any:
        """Turn (response, resulting environment output) into a training transition.

        Called on an EVAL policy after the environment executed ``policy_resp``'s actions, through
        ``process_transition`` (idle gate held, no autograd).

        Args:
            env_ret: The output of the step that executed ``policy_resp.actions``.
            policy_resp: The response that produced those actions.
        """

    @abstractmethod
    def update_dataset(self, data: TensorDict) -> None:
        """Hand a batch of transitions to the learner (TRAIN role); ``train`` consumes it."""

    @abstractmethod
    def train(self) -> Any:  # type: ignore[override]
        """Run one training update on the oldest pending dataset (TRAIN role).

        Returns:
            Training metrics, e.g. ``{"value": ..., "surrogate": ...}``.
        """

    @abstractmethod
    def get_trainable_parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """Return ``{module_name: state_dict}`` of every exchanged module (both roles)."""

    @abstractmethod
    def load_state_dict(self, state_dict: dict[str, dict[str, torch.Tensor]]) -> None:  # type: ignore[override]
        """Load ``{module_name: state_dict}`` weights, e.g. from ``get_trainable_parameters``."""

    # ------------------------------------------------------------------ role set-up

    def init_train(self, train_config: TrainConfig, env_meta: EnvMeta | None = None) -> None:
        """Make this policy a learner: build networks, set train mode, create the optimizer.

        Args:
            train_config: The run's training settings (kept as ``self.train_config``).
            env_meta: Environment facts for ``construct_network``.

        Raises:
            RuntimeError: If the policy's role is not TRAIN.
        """
        if self.role_type != PolicyRole.TRAIN:
            raise RuntimeError(
                f"init_train called on a {self.role_type.value} policy; build the learner with "
                "role_type=PolicyRole.TRAIN."
            )
        self.train_config = train_config
        self.construct_network(env_meta=env_meta)
        self._collect_models()
        for _, module in self.model_list:
            module.train(True)
        self.setup_optimizer(self.config.optim_cfg)
        self.is_init = True

    def init_eval(self, eval_config: Any = None, env_meta: EnvMeta | None = None) -> None:
        """Make this policy an actor: build networks, set eval mode, open the idle gate and (if
        ``config.weight_update_thread``) start the background weight-update thread.

        Args:
            eval_config: Free-form evaluation settings (kept as ``self.eval_config``).
            env_meta: Environment facts for ``construct_network``.

        Raises:
            RuntimeError: If the policy's role is not EVAL.
        """
        if self.role_type != PolicyRole.EVAL:
            raise RuntimeError(
                f"init_eval called on a {self.role_type.value} policy; build actors with "
                "role_type=PolicyRole.EVAL."
            )
        self.eval_config = eval_config
        self.construct_network(env_meta=env_meta)
        self._collect_models()
        for _, module in self.model_list:
            module.eval()
        if self.config.weight_update_thread and self._weights_thread is None:
            self._weights_thread = threading.Thread(
                target=_weight_update_loop,
                args=(weakref.ref(self), self._weights_signal, self._weights_stop),
                name=f"{type(self).__name__}-weight-update",
                daemon=True,
            )
            self._weights_thread.start()
        self.is_init = True

    def is_initialized(self) -> bool:
        """True once ``init_train`` or ``init_eval`` has completed."""
        return self.is_init

    def _collect_models(self) -> None:
        """Fill ``model_list`` with the sub-modules that have trainable parameters, unless
        ``construct_network`` registered them explicitly."""
        if self.model_list:
            for name, module in self.model_list:
                if not isinstance(module, nn.Module):
                    raise TypeError(f"model_list entry '{name}' is not an nn.Module.")
            return
        for name, child in self._modules.items():
            if child is not None and any(p.requires_grad for p in child.parameters()):
                self.model_list.append((name, child))

    def eval(self) -> BasePolicy:
        """Put every registered sub-module in eval mode (``nn.Module.eval`` would call the
        contract's ``train()``)."""
        for module in self.children():
            module.eval()
        return self

    # ------------------------------------------------------------------ idle gate

    @contextlib.contextmanager
    def idle_gate(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the idle gate for the duration of the ``with`` block.

        Args:
            timeout: Seconds to wait for the gate; ``None`` waits forever.

        Raises:
            TimeoutError: If the gate stayed busy for ``timeout`` seconds.
        """
        acquired = self._idle_gate.acquire(timeout=-1 if timeout is None else timeout)
        if not acquired:
            raise TimeoutError(f"{type(self).__name__} stayed busy for {timeout} s.")
        try:
            yield
        finally:
            self._idle_gate.release()

    def is_idle(self) -> bool:
        """True when neither inference nor a weight load is in progress."""
        return not self._idle_gate.locked()

    def check_idle(self, timeout: float | None = None) -> bool:
        """Wait until the policy is idle; return False if ``timeout`` seconds passed first."""
        try:
            with self.idle_gate(timeout):
                return True
        except TimeoutError:
            return False

    def rollout(self, env_ret: EnvRet) -> PolicyResponse:
        """``rollout_step`` behind the idle gate and without autograd (what engines call)."""
        with self.idle_gate(), torch.inference_mode():
            return self.rollout_step(env_ret)

    def process_transition(self, env_ret: EnvRet, policy_resp: PolicyResponse) -> Any:
        """``postprocess`` behind the idle gate and without autograd (what engines call)."""
        with self.idle_gate(), torch.inference_mode():
            return self.postprocess(env_ret, policy_resp)

    # ------------------------------------------------------------------ weight updates

    def push_weights(self, weights: dict[str, dict[str, torch.Tensor]]) -> None:
        """Queue new ``{module_name: state_dict}`` weights for this (EVAL) policy.

        With the background thread the call returns at once; the newest pushed weights win if
        several arrive before the gate frees. Without it, the weights load now, behind the gate.
        Use ``wait_for_weight_update_done`` to block until they are in place.
        """
        if self._weights_thread is None:
            with self.idle_gate():
                self.load_state_dict(weights)
                self.weight_version += 1
            return
        with self._pending_lock:
            self._pending_weights = weights
            self._weights_done.clear()
        self._weights_signal.set()

    def wait_for_weight_update_done(self, timeout: float | None = None) -> bool:
        """Block until every pushed weight set has been loaded.

        Returns:
            True when done, False if ``timeout`` seconds passed first.

        Raises:
            RuntimeError: If the background thread failed to load the weights (the original error
                is chained).
        """
        done = self._weights_done.wait(timeout=timeout)
        error, self._weights_error = self._weights_error, None
        if error is not None:
            raise RuntimeError(f"{type(self).__name__} failed to load pushed weights.") from error
        return done

    def _apply_pending_weights(self) -> None:
        """Load the newest pushed weights behind the idle gate (background thread)."""
        with self._pending_lock:
            weights, self._pending_weights = self._pending_weights, None
        try:
            if weights is not None:
                with self.idle_gate():
                    self.load_state_dict(weights)
                    self.weight_version += 1
        except BaseException as error:  # reported by wait_for_weight_update_done
            self._weights_error = error
        finally:
            with self._pending_lock:
                if self._pending_weights is None:
                    self._weights_done.set()

    def close(self) -> None:
        """Stop the background weight-update thread (idempotent)."""
        self._weights_stop.set()
        self._weights_signal.set()
        if self._weights_thread is not None:
            self._weights_thread.join(timeout=5.0)
            self._weights_thread = None

    # ------------------------------------------------------------------ checkpoints

    def save_checkpoint(self, path: str | os.PathLike[str]) -> None:
        """Write ``{module_name: state_dict}`` (CPU copies) to ``path`` with ``torch.save``.

        The file is written under a temporary name in the same folder and renamed into place, so
        a reader never sees a half-written checkpoint. Load it back with
        ``policy.load_state_dict(torch.load(path, weights_only=True))``.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = self.get_trainable_parameters()
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as file:
                torch.save(state, file)
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise

    def get_param_fingerprint(self) -> dict[str, float]:
        """A cheap summary of the weights: the L2 norm of every floating-point tensor.

        Returns:
            ``{"<module_name>.<tensor_name>": norm}`` over parameters and floating-point buffers
            (e.g. observation-normalizer statistics) of every module in ``model_list``.
        """
        fingerprint: dict[str, float] = {}
        for module_name, module in self.model_list:
            for name, tensor in module.state_dict().items():
                if torch.is_floating_point(tensor):
                    fingerprint[f"{module_name}.{name}"] = tensor.detach().double().norm().item()
        return fingerprint


def _weight_update_loop(
    policy_ref: weakref.ReferenceType[BasePolicy], signal: threading.Event, stop: threading.Event
) -> None:
    """Background thread body: apply pushed weights until the policy is closed or collected."""
    while True:
        signalled = signal.wait(timeout=1.0)
        policy = policy_ref()
        if policy is None or stop.is_set():
            return
        if signalled:
            signal.clear()
            policy._apply_pending_weights()
        del policy
