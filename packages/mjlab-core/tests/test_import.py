import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    ["mjlab.sim", "mjlab.scene", "mjlab.entity", "mjlab.managers", "mjlab.envs", "mjlab.tasks"],
)
def test_core_modules_import_as_namespace_package(name):
    module = importlib.import_module(name)
    assert module.__name__ == name
    # mjlab is a PEP 420 namespace package shared by three distributions.
    assert getattr(importlib.import_module("mjlab"), "__file__", None) is None
