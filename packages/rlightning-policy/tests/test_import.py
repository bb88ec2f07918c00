import importlib


def test_rlightning_is_a_namespace_package():
    for name in ("rlightning.types", "rlightning.policy", "rlightning.policy.rsl_rl_policy"):
        assert importlib.import_module(name).__name__ == name
    assert getattr(importlib.import_module("rlightning"), "__file__", None) is None
