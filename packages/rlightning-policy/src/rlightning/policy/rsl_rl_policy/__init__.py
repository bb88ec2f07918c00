"""rsl-rl-lib PPO behind the rlightning policy contract.

- :class:`RSLRLPolicy`: actor/learner policy on ``rsl_rl.algorithms.PPO``.
- :class:`RSLRLVecEnvMeta`: environment facts of an rsl-rl ``VecEnv``.
- :func:`env_meta_from_vec_env`: build that meta from any ``VecEnv``.
"""

from rlightning.policy.rsl_rl_policy.rsl_rl_policy import (
    RSLRLPolicy,
    RSLRLVecEnvMeta,
    env_meta_from_vec_env,
)

__all__ = ["RSLRLPolicy", "RSLRLVecEnvMeta", "env_meta_from_vec_env"]
