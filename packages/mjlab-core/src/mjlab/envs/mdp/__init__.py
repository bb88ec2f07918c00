"""The ready MDP term library: observations, rewards, terminations, events, commands,
curricula and actions, with mjlab / Isaac Lab names."""

# The randomization terms live under `mdp.dr` (names such as `body_mass` would clash here).
from mjlab.envs.mdp import dr as dr
from mjlab.envs.mdp.action_base import BaseAction as BaseAction
from mjlab.envs.mdp.action_base import BaseActionCfg as BaseActionCfg
from mjlab.envs.mdp.actions import *  # noqa: F403
from mjlab.envs.mdp.actions16 import *  # noqa: F403
from mjlab.envs.mdp.commands import *  # noqa: F403
from mjlab.envs.mdp.curriculums import *  # noqa: F403
from mjlab.envs.mdp.differential_ik import DifferentialIKAction as DifferentialIKAction
from mjlab.envs.mdp.differential_ik import DifferentialIKActionCfg as DifferentialIKActionCfg
from mjlab.envs.mdp.events import *  # noqa: F403
from mjlab.envs.mdp.metrics import *  # noqa: F403
from mjlab.envs.mdp.observations import *  # noqa: F403
from mjlab.envs.mdp.rewards import *  # noqa: F403
from mjlab.envs.mdp.terminations import *  # noqa: F403
