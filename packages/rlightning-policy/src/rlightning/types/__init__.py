"""Data that flows between environments, rollout actors and learners.

- :class:`EnvRet`: what an environment hands to a policy after a reset or a step.
- :class:`PolicyResponse`: what a policy hands back (actions, and whatever else it computed).
- :class:`EnvMeta`: static facts about an environment that a policy needs to build its networks.

All three are plain containers: they carry tensors (torch tensors, tensordict ``TensorDict``\\ s, or
nested dicts of them) and know how to move them between devices, which is what a Ray object store
or a CPU/GPU hand-off needs.
"""

from rlightning.types.env_meta import EnvMeta
from rlightning.types.env_ret import EnvRet
from rlightning.types.policy_response import PolicyResponse

__all__ = ["EnvMeta", "EnvRet", "PolicyResponse"]
