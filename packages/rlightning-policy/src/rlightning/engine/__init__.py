"""Engines that run the actor/learner loop for an env factory and an rsl-rl ``train_cfg``.

- :class:`LocalEngine`: everything in this process, synchronous.
- :class:`RayEngine`: K rollout actors and one learner actor on Ray (``ray`` extra).
- :class:`RolloutWorker`: one env + one EVAL policy -> ``(T, N)`` datasets (used by both).
"""

from rlightning.engine.local_engine import LocalEngine
from rlightning.engine.ray_engine import RayEngine, loopback_only_ray
from rlightning.engine.report import IterationReport, RolloutStats
from rlightning.engine.rollout_worker import RolloutWorker

__all__ = [
    "IterationReport",
    "LocalEngine",
    "RayEngine",
    "RolloutStats",
    "RolloutWorker",
    "loopback_only_ray",
]
