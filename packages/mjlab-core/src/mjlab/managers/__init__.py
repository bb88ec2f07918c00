"""Managers of the manager-based env: one per MDP part, each a dict of terms."""

from mjlab.managers.action_manager import ActionManager, ActionTerm
from mjlab.managers.command_manager import CommandManager, CommandTerm
from mjlab.managers.curriculum_manager import CurriculumManager
from mjlab.managers.event_manager import EventManager
from mjlab.managers.manager_base import ManagerBase, ManagerTermBase
from mjlab.managers.manager_term_config import (
    ActionTermCfg,
    CommandTermCfg,
    CurriculumTermCfg,
    EventMode,
    EventTermCfg,
    GaussianNoiseCfg,
    ManagerTermBaseCfg,
    MetricsTermCfg,
    NoiseCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
    UniformNoiseCfg,
)
from mjlab.managers.metrics_manager import MetricsManager
from mjlab.managers.null_managers import (
    NullCommandManager,
    NullCurriculumManager,
    NullMetricsManager,
    NullRecorderManager,
)
from mjlab.managers.observation_manager import ObservationManager
from mjlab.managers.recorder_manager import RecorderManager, RecorderTerm, RecorderTermCfg
from mjlab.managers.reward_manager import RewardManager
from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.managers.termination_manager import TerminationManager

__all__ = [
    "ActionManager",
    "ActionTerm",
    "ActionTermCfg",
    "CommandManager",
    "CommandTerm",
    "CommandTermCfg",
    "CurriculumManager",
    "CurriculumTermCfg",
    "EventManager",
    "EventMode",
    "EventTermCfg",
    "GaussianNoiseCfg",
    "ManagerBase",
    "ManagerTermBase",
    "ManagerTermBaseCfg",
    "MetricsManager",
    "MetricsTermCfg",
    "NoiseCfg",
    "NullCommandManager",
    "NullCurriculumManager",
    "NullMetricsManager",
    "NullRecorderManager",
    "ObservationGroupCfg",
    "ObservationManager",
    "ObservationTermCfg",
    "RecorderManager",
    "RecorderTerm",
    "RecorderTermCfg",
    "RewardManager",
    "RewardTermCfg",
    "SceneEntityCfg",
    "TerminationManager",
    "TerminationTermCfg",
    "UniformNoiseCfg",
]
