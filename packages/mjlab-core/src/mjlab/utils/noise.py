"""Observation noise (mjlab 1.6's `mjlab.utils.noise`): noise configs drawn anew at every step,
and noise models that keep per-env state between steps (a bias drawn once per episode).

Set one as an observation term's `noise`; it is applied when the group has
`enable_corruption` (training), never in the exported policy:

    ObservationTermCfg(func=mdp.joint_pos_rel, noise=UniformNoiseCfg(n_min=-0.01, n_max=0.01))
    ObservationTermCfg(
        func=mdp.base_ang_vel,
        noise=NoiseModelWithAdditiveBiasCfg(
            noise_cfg=GaussianNoiseCfg(std=0.05),            # every step
            bias_noise_cfg=UniformNoiseCfg(n_min=-0.02, n_max=0.02),  # once per episode
        ),
    )

Every draw comes from the env's generator (`env.rng`), so a seed fixes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from mjlab.utils.config import Config
from mjlab.utils.math import rand, randn

_OPERATIONS = ("add", "scale", "abs")


def _combine(operation: str, data: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    if operation == "add":
        return data + noise
    if operation == "scale":
        return data * noise
    return noise  # "abs"


@dataclass(kw_only=True)
class NoiseCfg(Config):
    """Base of the noise configs: `apply(data, generator)` returns `data` with noise drawn for
    every element, combined by `operation`."""

    operation: Literal["add", "scale", "abs"] = "add"
    """How the draw combines with the value: "add" (value + draw), "scale" (value x draw) or
    "abs" (the draw replaces the value)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field for an unknown operation."""
        if self.operation not in _OPERATIONS:
            raise ValueError(
                f"{type(self).__name__}.operation is {self.operation!r}; give one of "
                f"{', '.join(repr(o) for o in _OPERATIONS)}."
            )

    def sample(
        self, shape: Sequence[int], device: torch.device | str, generator: torch.Generator | None
    ) -> torch.Tensor:
        """The draw, of `shape`, before `operation` combines it with a value."""
        raise NotImplementedError(f"{type(self).__name__} does not define sample()")

    def apply(self, data: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """`data` (num_envs, ...) with this noise applied; a new tensor of the same shape."""
        return _combine(self.operation, data, self.sample(data.shape, data.device, generator))


@dataclass(kw_only=True)
class ConstantNoiseCfg(NoiseCfg):
    """The same value `bias` for every element (with "add": a fixed offset)."""

    bias: float = 0.0
    """The value."""

    def sample(self, shape, device, generator) -> torch.Tensor:
        return torch.full(tuple(shape), float(self.bias), device=device)


@dataclass(kw_only=True)
class UniformNoiseCfg(NoiseCfg):
    """U(n_min, n_max) per element."""

    n_min: float = -1.0
    """Lower bound."""
    n_max: float = 1.0
    """Upper bound."""

    def validate(self) -> None:
        super().validate()
        # Names like n_max may hold inf elsewhere (a bound); noise of infinite width may not.
        for name in ("n_min", "n_max"):
            value = getattr(self, name)
            if isinstance(value, (int, float)) and math.isinf(value):
                raise ValueError(f"UniformNoiseCfg.{name} is {value}: give a finite noise bound.")

    def sample(self, shape, device, generator) -> torch.Tensor:
        return rand(tuple(shape), device, generator) * (self.n_max - self.n_min) + self.n_min

    def apply(self, data: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if self.operation != "add":
            return super().apply(data, generator)
        # Added in this order, as before `operation` existed: the same floats to the last bit.
        u = rand(data.shape, data.device, generator)
        return data + u * (self.n_max - self.n_min) + self.n_min


@dataclass(kw_only=True)
class GaussianNoiseCfg(NoiseCfg):
    """N(mean, std^2) per element."""

    mean: float = 0.0
    """Mean."""
    std: float = 1.0
    """Standard deviation, >= 0."""

    def validate(self) -> None:
        super().validate()
        if isinstance(self.std, (int, float)) and not self.std >= 0:
            raise ValueError(f"GaussianNoiseCfg.std is {self.std}: give a std >= 0.")

    def sample(self, shape, device, generator) -> torch.Tensor:
        return self.mean + self.std * randn(tuple(shape), device, generator)

    def apply(self, data: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if self.operation != "add":
            return super().apply(data, generator)
        return data + self.mean + self.std * randn(data.shape, data.device, generator)


class NoiseModel:
    """Applies its config's `noise_cfg` at every call; the base of stateful noise models.

    Args:
        noise_model_cfg: its `NoiseModelCfg`.
        num_envs: the number of envs.
        device: where its state lives.
        generator: where its draws come from (the observation manager passes `env.rng`).
        num_components: the size of the last dimension of the observation it corrupts.
    """

    def __init__(
        self,
        noise_model_cfg: NoiseModelCfg,
        num_envs: int,
        device: torch.device | str,
        generator: torch.Generator | None = None,
        num_components: int = 1,
    ):
        self.cfg = noise_model_cfg
        self.num_envs = num_envs
        self.device = device
        self.generator = generator
        self.num_components = num_components

    def reset(self, env_ids: torch.Tensor | Sequence[int] | None = None) -> None:
        """Start the episodes of `env_ids` (None: all): nothing for a stateless model."""

    def __call__(self, data: torch.Tensor) -> torch.Tensor:
        """`data` (num_envs, ...) with the noise applied."""
        return self.cfg.noise_cfg.apply(data, self.generator)

    def apply(self, data: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """As `__call__` (the observation manager's interface for noise configs and models)."""
        return self(data)


class NoiseModelWithAdditiveBias(NoiseModel):
    """`noise_cfg` at every step plus a bias drawn from `bias_noise_cfg` at every reset of an
    env, constant over its episode (e.g. a gyro's offset)."""

    def __init__(self, noise_model_cfg, num_envs, device, generator=None, num_components=1):
        super().__init__(noise_model_cfg, num_envs, device, generator, num_components)
        width = num_components if noise_model_cfg.sample_bias_per_component else 1
        self.bias = torch.zeros(num_envs, width, device=device)
        """(num_envs, num_components or 1) the bias of each env's episode."""
        self.reset()

    def reset(self, env_ids: torch.Tensor | Sequence[int] | None = None) -> None:
        ids = (
            torch.arange(self.num_envs, device=self.device)
            if env_ids is None
            else torch.as_tensor(env_ids, device=self.device, dtype=torch.long)
        )
        if len(ids):
            # The draw itself is the bias (the bias config's `operation` has no value to act on).
            shape = (len(ids), self.bias.shape[1])
            self.bias[ids] = self.cfg.bias_noise_cfg.sample(shape, self.device, self.generator)

    def __call__(self, data: torch.Tensor) -> torch.Tensor:
        bias = self.bias.view(self.num_envs, *([1] * (data.ndim - 2)), self.bias.shape[1])
        return super().__call__(data) + bias.to(data.dtype)


@dataclass(kw_only=True)
class NoiseModelCfg(Config):
    """A noise model: `class_type(cfg, num_envs, device)` is built once per observation term
    and reset with the env; `noise_cfg` is applied at every step."""

    noise_cfg: NoiseCfg
    """The per-step noise."""
    class_type: ClassVar[type[NoiseModel]] = NoiseModel
    """The model class (a subclass of a config sets its own with `class_type=` in its bases)."""

    def __init_subclass__(cls, class_type: type[NoiseModel] | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if class_type is not None:
            cls.class_type = class_type


@dataclass(kw_only=True)
class NoiseModelWithAdditiveBiasCfg(NoiseModelCfg, class_type=NoiseModelWithAdditiveBias):
    """Per-step noise plus a per-episode bias (`NoiseModelWithAdditiveBias`)."""

    bias_noise_cfg: NoiseCfg | None = None
    """The bias's distribution, drawn at every reset of an env (required; its draw is the
    bias, whatever its `operation`)."""
    sample_bias_per_component: bool = True
    """One bias per entry of the observation's last dimension (else one per env, shared by
    them)."""

    def __post_init__(self) -> None:
        if self.bias_noise_cfg is None:
            raise ValueError(
                "NoiseModelWithAdditiveBiasCfg.bias_noise_cfg is None: give the bias's "
                "distribution, e.g. UniformNoiseCfg(n_min=-0.02, n_max=0.02)."
            )


__all__ = [
    "ConstantNoiseCfg",
    "GaussianNoiseCfg",
    "NoiseCfg",
    "NoiseModel",
    "NoiseModelCfg",
    "NoiseModelWithAdditiveBias",
    "NoiseModelWithAdditiveBiasCfg",
    "UniformNoiseCfg",
]
