"""Static environment facts a policy needs to build its networks."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym


@dataclass
class EnvMeta:
    """What a policy may know about an environment before it sees any data.

    It travels from the rollout side to the learner (over Ray too), so it must stay picklable.

    Raises:
        ValueError: If ``num_envs`` is given and is not a positive integer.
    """

    env_id: str | None = None
    """Name of the environment, e.g. ``"env_0"``."""

    action_space: gym.spaces.Space | None = None
    """Action space of one sub-environment (e.g. ``Box`` of shape ``(num_actions,)``)."""

    observation_space: gym.spaces.Space | None = None
    """Observation space of one sub-environment (often a ``Dict`` of observation groups)."""

    num_envs: int | None = None
    """Number of vectorized sub-environments behind ``env_id``."""

    def __post_init__(self) -> None:
        if self.num_envs is not None and (
            isinstance(self.num_envs, bool)
            or not isinstance(self.num_envs, int)
            or self.num_envs < 1
        ):
            raise ValueError(
                f"EnvMeta.num_envs must be a positive int or None, got {self.num_envs!r}."
            )
