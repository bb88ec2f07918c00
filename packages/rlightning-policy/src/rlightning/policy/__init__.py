"""Policies with the rlightning actor/learner contract.

- :class:`PolicyRole`: TRAIN (learner) or EVAL (actor).
- :class:`PolicyConfig`, :class:`TrainConfig`: pydantic configs of a policy and of a run.
- :class:`~rlightning.policy.base_policy.BasePolicy`: the abstract contract.
- :mod:`rlightning.policy.rsl_rl_policy`: the contract implemented on rsl-rl-lib PPO.
"""

from rlightning.policy.base_policy import BasePolicy, PolicyRole
from rlightning.policy.config import PolicyConfig, TrainConfig

__all__ = ["BasePolicy", "PolicyConfig", "PolicyRole", "TrainConfig"]
