import importlib


def test_rl_module_imports_next_to_core_and_export():
    for name in ("mjlab.rl", "mjlab.sim", "mjlab.export"):
        assert importlib.import_module(name).__name__ == name
