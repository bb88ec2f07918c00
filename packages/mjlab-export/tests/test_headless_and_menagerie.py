"""The pieces mjlab-core and the robot side share instead of keeping copies: the headless GL
backends and their error text (`mjlab.deploy.headless`), and the Menagerie loader
(`mjlab.deploy.menagerie`)."""

import os
import sys

import pytest

from mjlab.deploy import headless, menagerie


def test_menagerie_module_imports_without_mujoco():
    assert "mujoco" not in vars(menagerie)
    assert "mujoco_menagerie" not in vars(menagerie)


def test_no_context_message_names_each_backend_and_the_fix():
    text = headless.no_context_message("No OpenGL context for X", ["egl: a", "osmesa: b"])
    assert text == (
        "No OpenGL context for X (egl: a; osmesa: b). Headless: install EGL (libegl1 with a GPU "
        "driver or Mesa) or OSMesa (libosmesa6), or set MUJOCO_GL=egl/osmesa before mujoco is "
        "imported; with a display, MUJOCO_GL=glfw."
    )


@pytest.mark.parametrize(
    ("env", "missing"),
    [({}, True), ({"DISPLAY": ":0"}, False), ({"WAYLAND_DISPLAY": "wayland-0"}, False)],
)
def test_display_missing_only_on_linux_without_a_window_system(monkeypatch, env, missing):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert headless.display_missing() is (missing and sys.platform.startswith("linux"))


def test_unknown_menagerie_robot_is_one_error_with_the_local_copy_fix(monkeypatch, tmp_path):
    pytest.importorskip("mujoco_menagerie")
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))
    with pytest.raises(menagerie.RobotModelError) as caught:
        menagerie.menagerie_spec("no_such_robot", "scene")
    error = caught.value
    # Both contracts it replaces: the robot side raised FileNotFoundError, the tasks RuntimeError.
    assert isinstance(error, FileNotFoundError) and isinstance(error, RuntimeError)
    assert str(error).startswith("Could not load the robot model no_such_robot/scene from ")
    assert str(error).endswith(
        "Offline, point MENAGERIE_ROOT at a local copy laid out as <robot>/<entry>.xml "
        "(here no_such_robot/scene.xml)."
    )


def test_menagerie_root_local_copy_is_loaded(monkeypatch):
    pytest.importorskip("mujoco_menagerie")
    root = os.environ.get("MENAGERIE_ROOT")
    if not root or not os.path.isdir(os.path.join(root, "unitree_go1")):
        pytest.skip("no local Menagerie copy with unitree_go1 (MENAGERIE_ROOT)")
    spec = menagerie.menagerie_spec("unitree_go1", "go1")
    assert spec.compile().njnt > 0
