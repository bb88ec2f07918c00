"""Return and advantage targets for PPO from a ``(T, N)`` block of transitions."""

from __future__ import annotations

import torch


@torch.no_grad()
def compute_gae(
    rewards: torch.Tensor,
    dones: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation (Schulman et al. 2016, arXiv:1506.02438, eq. 16).

    Every transition carries its own bootstrap value ``next_values[t] = V(s_{t+1})``, so blocks
    collected by different actors can be concatenated along the env axis. With
    ``next_values[t] == values[t + 1]`` this equals rsl-rl-lib's ``PPO.compute_returns``.

    Args:
        rewards: ``(T, N)`` rewards (time-out bootstrapping already added).
        dones: ``(T, N)`` bool or 0/1, True where the step ended the episode.
        values: ``(T, N)`` critic values ``V(s_t)`` at collection time.
        next_values: ``(T, N)`` critic values ``V(s_{t+1})`` (ignored where ``dones`` is True).
        gamma: Discount factor.
        lam: GAE lambda.

    Returns:
        ``(returns, advantages)``, both ``(T, N)``; ``returns = advantages + values``. The
        advantages are not normalized.

    Raises:
        ValueError: If the four tensors do not share one ``(T, N)`` shape.
    """
    shape = rewards.shape
    for name, tensor in (("dones", dones), ("values", values), ("next_values", next_values)):
        if tensor.shape != shape:
            raise ValueError(
                f"compute_gae: '{name}' has shape {tuple(tensor.shape)}, rewards {tuple(shape)}; "
                "all must be (T, N)."
            )
    not_done = 1.0 - dones.float()
    deltas = rewards + gamma * not_done * next_values - values
    advantages = torch.zeros_like(values)
    running = torch.zeros_like(values[0])
    for t in range(shape[0] - 1, -1, -1):
        running = deltas[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages + values, advantages
