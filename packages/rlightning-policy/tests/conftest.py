"""Fixtures of the rlightning-policy tests.

The test env lives in ``point_mass_env.py`` next to this file. Tests run with
``--import-mode=importlib`` (the folder is not on ``sys.path``), so the module is loaded by path
and handed to tests through the ``pm`` fixture.
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

_MODULE_NAME = "rlightning_policy_test_point_mass_env"


def _load_point_mass_env() -> ModuleType:
    if _MODULE_NAME in sys.modules:
        return sys.modules[_MODULE_NAME]
    spec = importlib.util.spec_from_file_location(
        _MODULE_NAME, Path(__file__).with_name("point_mass_env.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def pm() -> ModuleType:
    """The point-mass test env module (``PointMassEnv``, ``point_mass_train_cfg``, ...)."""
    return _load_point_mass_env()


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Tiny networks run fastest single-threaded, and the test machine is shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
