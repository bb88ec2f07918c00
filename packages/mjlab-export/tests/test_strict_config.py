"""mjlab-export's configs (deploy settings, metadata, command-line commands) refuse an
attribute they do not declare, naming the field meant, on the robot-side install too."""

import copy
import dataclasses
import pickle

import pytest

from mjlab.deploy import SafetyCfg
from mjlab.deploy.cli import Run
from mjlab.deploy.metadata import RobotModelSpec
from mjlab.deploy.strict import UnknownFieldError


def test_a_misspelt_safety_setting_is_refused_naming_the_field_meant():
    cfg = SafetyCfg()
    with pytest.raises(
        UnknownFieldError,
        match=r"SafetyCfg has no field 'max_fault_cycle'; did you mean 'max_fault_cycles'\?",
    ):
        cfg.max_fault_cycle = 3
    assert "max_fault_cycle" not in vars(cfg)
    cfg.max_fault_cycles = 3  # a declared field is set as before
    assert cfg.max_fault_cycles == 3
    for clone in (copy.deepcopy(cfg), pickle.loads(pickle.dumps(cfg)), dataclasses.replace(cfg)):
        assert clone == cfg
        with pytest.raises(AttributeError):
            clone.max_fault_cycle = 3


def test_metadata_and_command_line_configs_refuse_undeclared_attributes():
    for obj in (object.__new__(RobotModelSpec), object.__new__(Run)):
        with pytest.raises(
            UnknownFieldError, match=f"{type(obj).__name__} has no field 'not_a_field'"
        ):
            obj.not_a_field = 1
