"""Domain randomization of model fields (mjlab 1.6's `mjlab.envs.mdp.dr`): per-env draws
from a `Distribution`, combined with the compiled-model defaults by an `Operation`.

    EventTermCfg(func=dr.geom_friction, mode="startup",
                 params={"ranges": (0.3, 1.2), "operation": "abs"})
"""

from mjlab.envs.mdp.dr.core import (
    Distribution,
    Operation,
    abs,
    add,
    gaussian,
    log_uniform,
    scale,
    uniform,
)
from mjlab.envs.mdp.dr.fields import *  # noqa: F403
from mjlab.envs.mdp.dr.fields import __all__ as _fields_all

__all__ = [
    "Distribution",
    "Operation",
    "abs",
    "add",
    "gaussian",
    "log_uniform",
    "scale",
    "uniform",
    *_fields_all,
]
