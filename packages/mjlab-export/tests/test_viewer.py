"""mjlab.viewer: geoms to meshes, the web viewer without a browser (the browser test is
tests/test_viewer_browser.py), sim2sim with a viewer."""

import shutil
import socket
import subprocess
import time

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("viser", reason="needs mjlab-export[viewer]")

from mjlab.viewer import CommandSlider, WebViewer  # noqa: E402
from mjlab.viewer.geometry import moving_bodies, root_body, visual_geoms  # noqa: E402

MJCF = """
<mujoco>
  <asset>
    <material name="red" rgba="1 0 0 1"/>
    <mesh name="tetra" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/>
    <hfield name="bumps" nrow="3" ncol="4" size="2 1 0.5 0.1"
            elevation="0 0 0 0  0 1 1 0  0 0 0 0"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 0.1"/>
    <geom name="terrain" type="hfield" hfield="bumps" pos="5 0 0"/>
    <body name="base" pos="0 0 1">
      <freejoint/>
      <geom name="box" type="box" size="0.1 0.2 0.3" pos="0.5 0 0"/>
      <geom name="ball" type="sphere" size="0.25" material="red"/>
      <geom name="painted" type="sphere" size="0.1" material="red" rgba="0 1 0 1"/>
      <geom name="collision" type="capsule" size="0.05 0.2" group="3"/>
      <geom name="invisible" type="sphere" size="0.05" rgba="1 1 1 0"/>
      <body name="arm" pos="0 0 -0.5">
        <joint type="hinge" axis="0 1 0"/>
        <geom name="rod" type="capsule" size="0.05 0.2"/>
        <geom name="can" type="cylinder" size="0.05 0.1" euler="90 0 0"/>
        <geom name="egg" type="ellipsoid" size="0.1 0.2 0.3"/>
        <geom name="tetra" type="mesh" mesh="tetra"/>
      </body>
    </body>
    <body name="target" mocap="true" pos="1 1 1">
      <geom name="marker" type="sphere" size="0.02" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(MJCF)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_visible_geoms_become_meshes_in_their_body_frame(model):
    meshes = {m.name: m for m in visual_geoms(model)}
    # Group 3 (collision) and fully transparent geoms are left out, like MuJoCo's viewer.
    assert "collision" not in meshes and "invisible" not in meshes
    assert set(meshes) == {
        "floor", "terrain", "box", "ball", "painted", "rod", "can", "egg", "tetra", "marker"
    }  # fmt: skip
    box = meshes["box"].vertices
    np.testing.assert_allclose(box.min(0), [0.4, -0.2, -0.3], atol=1e-6)  # geom_pos applied
    np.testing.assert_allclose(box.max(0), [0.6, 0.2, 0.3], atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(meshes["ball"].vertices, axis=1), 0.25, atol=1e-6)
    np.testing.assert_allclose(np.ptp(meshes["rod"].vertices, axis=0), [0.1, 0.1, 0.5], atol=1e-3)
    # The cylinder is turned about x: its axis lies along y in the body frame.
    np.testing.assert_allclose(np.ptp(meshes["can"].vertices, axis=0), [0.1, 0.2, 0.1], atol=1e-3)
    np.testing.assert_allclose(np.ptp(meshes["egg"].vertices, axis=0), [0.2, 0.4, 0.6], atol=1e-3)
    assert meshes["tetra"].faces.shape == (4, 3)
    np.testing.assert_allclose(meshes["box"].pos, [0.5, 0, 0])
    np.testing.assert_allclose(meshes["egg"].half_size, [0.1, 0.2, 0.3], atol=1e-3)
    # An infinite plane is drawn 400 m wide; a height field keeps its size and heights.
    np.testing.assert_allclose(np.ptp(meshes["floor"].vertices, axis=0), [400, 400, 0])
    np.testing.assert_allclose(meshes["floor"].half_size, [200, 200, 0])
    assert meshes["floor"].is_plane
    terrain = meshes["terrain"].vertices
    np.testing.assert_allclose(terrain.min(0), [3, -1, 0], atol=1e-6)
    np.testing.assert_allclose(terrain.max(0), [7, 1, 0.5], atol=1e-6)
    assert meshes["terrain"].faces.shape == (2 * 2 * 3, 3)
    # MuJoCo's layout: row r of the elevation at y = -ry + 2 ry r / (nrow - 1), column c at
    # x = -rx + 2 rx c / (ncol - 1); the raised samples are row 1, columns 1 and 2.
    raised = terrain[terrain[:, 2] > 0.25] - [5, 0, 0]
    np.testing.assert_allclose(raised, [[-2 / 3, 0, 0.5], [2 / 3, 0, 0.5]], atol=1e-6)
    # Colour: a material's unless the geom sets its own rgba (MuJoCo's rule).
    np.testing.assert_allclose(meshes["ball"].rgba, [1, 0, 0, 1])
    np.testing.assert_allclose(meshes["painted"].rgba, [0, 1, 0, 1])
    for m in meshes.values():
        assert m.faces.max() < len(m.vertices) and m.vertices.dtype == np.float32


def test_moving_bodies_are_the_jointed_and_mocap_ones(model):
    ids = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in moving_bodies(model)]
    assert ids == ["base", "arm", "target"]
    assert root_body(model) == 1


def test_without_a_browser_the_viewer_reads_nothing_and_does_not_pace(model):
    def no_read(name):
        raise AssertionError(f"read {name} with nobody connected")

    port = _free_port()
    with WebViewer(model, step_dt=0.5, port=port, reward_terms=["alive"]) as viewer:
        assert viewer.url == f"http://127.0.0.1:{port}"
        start = time.perf_counter()
        for _ in range(20):
            viewer.wait()  # 20 steps of 0.5 s would take 10 s if paced
            assert viewer.update(no_read, rewards=lambda: {"alive": 1.0}) is False
        assert time.perf_counter() - start < 2.0
        assert viewer.num_clients == 0 and viewer.command is None
        # It listens on this machine only.
        if shutil.which("ss"):
            listeners = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
            assert f"127.0.0.1:{port} " in listeners
            assert f"0.0.0.0:{port} " not in listeners and f"*:{port} " not in listeners
    assert not viewer.running


def test_the_viewer_starts_on_a_viser_without_its_private_messages_module(model, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def without_messages(name, globals=None, locals=None, fromlist=(), level=0):
        # A viser release that renamed or dropped its private `viser._messages` module (viser
        # itself keeps using its copy: only the import by name fails).
        if name == "viser" and "_messages" in (fromlist or ()):
            raise ImportError("cannot import name '_messages' from 'viser'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", without_messages)
    with WebViewer(model, step_dt=0.02, port=_free_port()) as viewer:
        assert viewer.running and viewer.num_clients == 0
    assert not viewer.running


class _Browser:
    """What `WebViewer` needs of a connected client when no browser runs (the Chromium test,
    tests/test_viewer_browser.py, connects a real one)."""


def test_with_a_client_each_update_sends_the_poses_shifts_the_scene_and_plots(model):
    with WebViewer(model, step_dt=0.02, port=0, num_envs=2, reward_terms=["alive"]) as viewer:
        viewer.server.get_clients = lambda: {7: _Browser()}
        data = mujoco.MjData(model)
        data.qpos[:3] = [3.0, -1.0, 0.8]
        data.qpos[7] = 0.4  # the arm's hinge
        mujoco.mj_kinematics(model, data)
        assert viewer.update(
            lambda name: getattr(data, name),
            rewards=lambda: {"alive": 2.0},
            status=lambda: "step 1",
        )
        for handle, body in zip(viewer._body_handles, viewer._bodies, strict=True):
            np.testing.assert_allclose(handle.position, data.xpos[body])
            np.testing.assert_allclose(handle.wxyz, data.xquat[body])
        # The base keeps its place on screen: the scene moved by minus its displacement.
        np.testing.assert_allclose(viewer._world.position, [-3.0, 1.0, 0.0])
        assert viewer._status.content == "step 1"
        np.testing.assert_allclose([row[-1] for row in viewer._plot.data], [0.02, 2.0])
        # Another env: the plot starts over.
        viewer.env_index = 1
        viewer._panel_due = 0.0
        viewer.update(lambda name: getattr(data, name), rewards=lambda: {"alive": 3.0})
        assert [len(row) for row in viewer._plot.data] == [1, 1]
        # Without follow the scene stays where it was.
        viewer.follow = False
        data.qpos[:3] = [0.0, 0.0, 0.8]
        mujoco.mj_kinematics(model, data)
        viewer.update(lambda name: getattr(data, name))
        np.testing.assert_allclose(viewer._world.position, [-3.0, 1.0, 0.0])
        # A pause ends when the last browser leaves (nobody could resume it).
        viewer._set_paused(True)
        viewer.server.get_clients = dict
        viewer.wait()
        assert not viewer.paused


def test_a_busy_port_moves_to_the_next_and_a_bad_port_is_refused(model):
    port = _free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        with WebViewer(model, step_dt=0.02, port=port) as viewer:
            assert viewer.port != port
    with pytest.raises(
        ValueError, match=r"port must be in 0..65535 \(0: any free one\), got 70000"
    ):
        WebViewer(model, step_dt=0.02, port=70000)
    # An address of another machine (TEST-NET-3): nothing is sent, binding fails at once.
    with pytest.raises(ValueError, match=r"cannot listen on host '203\.0\.113\.9'.*127\.0\.0\.1"):
        WebViewer(model, step_dt=0.02, host="203.0.113.9", port=_free_port())


def test_command_sliders_apply_only_while_the_toggle_is_on(model):
    sliders = [CommandSlider("lin_vel_x", -1.0, 1.0, 0.5), CommandSlider("ang_vel_z", -1, 1)]
    with WebViewer(model, step_dt=0.02, port=_free_port(), commands=sliders) as always:
        np.testing.assert_allclose(always.command, [0.5, 0.0])
    with WebViewer(
        model, step_dt=0.02, port=_free_port(), commands=sliders, command_toggle=True
    ) as viewer:
        assert viewer.command is None  # the task's own commands run
        viewer._command_toggle.value = True  # what the checkbox does
        viewer._command_sliders[1].value = -0.25
        np.testing.assert_allclose(viewer.command, [0.5, -0.25])
    with pytest.raises(ValueError, match="'vx': low must be below high"):
        CommandSlider("vx", 1.0, 1.0)


def _until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_values_a_page_sends_outside_a_controls_range_are_dropped_and_logged(model, caplog):
    """A WebSocket client on 127.0.0.1 sends what a browser sends when a slider moves, with
    values no slider can produce: each is dropped with a warning, the control goes back to its
    last accepted value, the viewer keeps running, and values in range still apply."""
    import logging

    import msgspec
    import viser
    from websockets.sync.client import connect

    sliders = [CommandSlider("lin_vel_x", -1.0, 1.0, 0.5)]
    viewer = WebViewer(model, step_dt=0.02, port=0, num_envs=3, commands=sliders)
    handles = viewer.server.gui._gui_input_handle_from_uuid.items()
    uuid = {h.label: u for u, h in handles}
    gui = {h.label: h for _, h in handles}
    url = f"ws://127.0.0.1:{viewer.port}"
    with (
        viewer,
        caplog.at_level(logging.WARNING, logger="mjlab.viewer.web"),
        connect(url, subprotocols=[f"viser-v{viser.__version__}"]) as page,
    ):
        # A browser's first message: its camera (viser counts a page as connected from then).
        camera = {
            "type": "ViewerCameraMessage",
            "wxyz": (1.0, 0.0, 0.0, 0.0),
            "position": (3.0, 3.0, 2.0),
            "fov": 1.0,
            "near": 0.01,
            "far": 100.0,
            "image_height": 480,
            "image_width": 640,
            "look_at": (0.0, 0.0, 0.0),
            "up_direction": (0.0, 0.0, 1.0),
        }
        page.send(msgspec.msgpack.encode(camera))
        _until(lambda: viewer.num_clients == 1, "the page to connect")

        def send(label: str, value, prop: str = "value") -> None:
            update = {"type": "GuiUpdateMessage", "uuid": uuid[label], "updates": {prop: value}}
            page.send(msgspec.msgpack.encode(update))

        bad = [
            ("Env", -100, "value"),
            ("Speed", 50.0, "value"),
            ("Speed", float("nan"), "value"),
            ("lin_vel_x", 7.0, "value"),
            ("Env", "two", "value"),  # not a number: viser cannot cast it
            ("Env", 1, "no_such_property"),
        ]
        for n, (label, value, prop) in enumerate(bad, start=1):
            send(label, value, prop)
            _until(lambda n=n: len(caplog.records) == n, f"the warning on {label} = {value}")
            _until(lambda label=label: gui[label].value in (0, 1.0, 0.5), f"{label} restored")
        assert viewer.env_index == 0 and viewer.speed == 1.0
        np.testing.assert_allclose(viewer.command, [0.5])
        lines = [r.getMessage() for r in caplog.records]
        assert (
            "dropped Env = -100 from a page (a whole number in 0..2 expected); keeping 0"
            in (lines[0])
        )
        assert "dropped a control message from a page ({'value': 'two'}; ValueError" in lines[4]
        assert all("\n" not in line for line in lines)
        assert viewer.running
        # The run goes on with the watched env, and values in range still apply.
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        assert viewer.update(lambda name: getattr(data, name))
        send("Env", 2)
        send("Speed", 2.0)
        send("lin_vel_x", -0.25)
        _until(
            lambda: viewer.env_index == 2 and viewer.speed == 2.0 and viewer.command[0] == -0.25,
            "the values in range",
        )
        assert len(caplog.records) == len(bad)


def test_sim2sim_runs_with_a_viewer_and_its_command_sliders(tmp_path, go1_twist_meta, make_policy):
    from mjlab.deploy.sim2sim import Sim2Sim, sim2sim_viewer

    go1_meta = go1_twist_meta
    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    sim = Sim2Sim(path)
    viewer = sim2sim_viewer(sim, "web", (0.3, 0.0, 0.0), port=_free_port())
    try:
        names = [s.label for s in viewer._command_sliders]
        assert names == list(go1_meta.commands[0].components)
        np.testing.assert_allclose(viewer.command, [0.3, 0.0, 0.0])
        viewer._command_sliders[0].value = 0.0
        report = sim.run(seconds=0.2, command=(0.3, 0.0, 0.0), viewer=viewer)
        assert report.command == (0.0, 0.0, 0.0)  # the slider's value ran
        assert report.seconds == pytest.approx(0.2) and report.falls == 0
        assert len(viewer.geoms) > 5  # the robot and the floor
    finally:
        viewer.close()
    with pytest.raises(ValueError, match="needs a viewer"):
        sim.run(seconds=None)


def test_ctrl_c_while_watching_sim2sim_ends_with_the_report_of_what_ran(
    tmp_path, go1_meta, make_policy
):
    from mjlab.deploy.sim2sim import Sim2Sim, sim2sim_viewer

    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    sim = Sim2Sim(path)
    with sim2sim_viewer(sim, "web", (0.0, 0.0, 0.0), port=0) as viewer:
        waits = viewer.wait
        calls = []

        def wait():
            calls.append(1)
            if len(calls) == 6:
                raise KeyboardInterrupt  # what Ctrl-C raises in the loop
            waits()

        viewer.wait = wait
        report = sim.run(seconds=None, command=(0.0, 0.0, 0.0), viewer=viewer)
        assert report.interrupted and report.seconds == pytest.approx(5 * 0.02)
        assert "stopped with Ctrl-C" in report.summary()
        with pytest.raises(ValueError, match="needs a length"):
            sim.run(seconds=None, viewer=viewer, video=tmp_path / "v.mp4")


def test_deploy_sim2sim_with_the_web_viewer_from_the_command_line(
    tmp_path, go1_meta, make_policy, capsys
):
    from mjlab.deploy.cli import main

    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    viewer = ["--viewer", "web", "--viewer-port", "0"]
    main(["sim2sim", str(path), "--command", "0,0,0", "--seconds", "0.2", *viewer])
    out = capsys.readouterr().out
    assert "[mjlab] web viewer: http://127.0.0.1:" in out and "sim2sim 0.2 s" in out
    with pytest.raises(SystemExit) as stop:
        main(["sim2sim", str(path), "--viewer", "web", "--viewer-host", "203.0.113.9"])
    assert stop.value.code == 2
    assert "cannot listen on host '203.0.113.9'" in capsys.readouterr().err


def test_ctrl_c_twice_stops_the_loop_once_and_raises_nothing(model):
    """`uv run` forwards the terminal's SIGINT, so a command gets it twice: the first ends the
    viewer's loop, the second is ignored (no KeyboardInterrupt cutting the summary short)."""
    import os
    import signal

    from mjlab.viewer import stop_on_interrupt

    before = signal.getsignal(signal.SIGINT)
    try:
        with WebViewer(model, step_dt=0.02, port=0) as viewer:
            with stop_on_interrupt(viewer) as interrupted:
                assert viewer.running and not interrupted
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)
                assert not viewer.running and interrupted == [True]
            os.kill(os.getpid(), signal.SIGINT)  # a late twin after the loop: still ignored
            time.sleep(0.1)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with WebViewer(model, step_dt=0.02, port=0) as viewer:
            with stop_on_interrupt(viewer) as interrupted:
                assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            # No Ctrl-C: the handler before it is back.
            assert not interrupted
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
