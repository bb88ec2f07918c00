"""mjlab 1.6's env viewers in mjlab.viewer: the names and parameters, ViewerConfig's checks,
BaseViewer's loop (pause, single step, speed, reset, stop), OffscreenRenderer's headless frames,
ViserPlayViewer on 127.0.0.1 over a real env, NativeMujocoViewer over a stand-in window."""

import contextlib

# triton's native library segfaults when first loaded after Mesa's EGL (mjlab-core's conftest):
# load it before the offscreen renderer makes an EGL context.
with contextlib.suppress(ImportError):
    import triton  # noqa: F401

import dataclasses
import inspect
import math
import os
import shutil
import signal
import subprocess
import time
import typing
from types import SimpleNamespace

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("viser", reason="needs mjlab-export[viewer]")

from mjlab.deploy.strict import UnknownFieldError  # noqa: E402
from mjlab.viewer import (  # noqa: E402
    BaseViewer,
    EnvProtocol,
    NativeMujocoViewer,
    OffscreenRenderer,
    PolicyProtocol,
    VerbosityLevel,
    ViewerConfig,
    ViserPlayViewer,
)

VIEWER_CONFIG_DEFAULTS = {
    "origin_type": ViewerConfig.OriginType.AUTO,
    "height": 240,
    "width": 320,
    "enable_reflections": True,
    "enable_shadows": True,
    "geom_group": (1, 1, 1, 0, 0, 0),
    "site_group": (1, 1, 1, 0, 0, 0),
    "env_idx": 0,
    "max_extra_envs": 2,
    "reward_bar_max_terms": 20,
    "distance": 5.0,
    "elevation": -45.0,
    "azimuth": 90.0,
    "fovy": None,
    "lookat": (0.0, 0.0, 0.0),
    "entity_name": None,
    "body_name": None,
}
"""mjlab 1.6's ViewerConfig fields, in its order, with its defaults."""


def _params(function) -> list[str]:
    return list(inspect.signature(function).parameters)[1:]  # without self


def test_the_names_import_with_mjlabs_parameters_and_fields():
    assert _params(BaseViewer.__init__) == ["env", "policy", "frame_rate", "verbosity"]
    assert _params(NativeMujocoViewer.__init__) == [
        "env", "policy", "frame_rate", "key_callback", "plot_cfg", "enable_perturbations",
        "verbosity",
    ]  # fmt: skip
    play = inspect.signature(ViserPlayViewer.__init__).parameters
    assert list(play)[1:5] == ["env", "policy", "frame_rate", "verbosity"]
    assert play["host"].kind is inspect.Parameter.KEYWORD_ONLY
    assert play["host"].default == "127.0.0.1"
    assert _params(OffscreenRenderer.__init__) == [
        "model", "cfg", "scene", "sim_model", "expanded_fields"
    ]  # fmt: skip
    fields = dataclasses.fields(ViewerConfig)
    assert [f.name for f in fields] == list(VIEWER_CONFIG_DEFAULTS)
    assert dataclasses.asdict(ViewerConfig()) == VIEWER_CONFIG_DEFAULTS
    with pytest.raises(TypeError):
        ViewerConfig(5.0)  # keyword-only, as mjlab's
    assert [o.name for o in ViewerConfig.OriginType] == [
        "AUTO", "WORLD", "ASSET_ROOT", "ASSET_BODY"
    ]  # fmt: skip
    assert [(v.name, int(v)) for v in VerbosityLevel] == [("SILENT", 0), ("INFO", 1), ("DEBUG", 2)]
    for protocol in (EnvProtocol, PolicyProtocol):
        assert typing.Protocol in protocol.__mro__
    assert "num_envs" in EnvProtocol.__annotations__
    with pytest.raises(TypeError, match="abstract"):
        BaseViewer(_FakeEnv(), lambda obs: obs)
    for name in (
        "setup", "sync_env_to_viewer", "sync_viewer_to_env", "close", "is_running", "run",
        "tick", "pause", "resume", "toggle_pause", "reset_environment", "request_reset",
        "request_toggle_pause", "request_single_step", "request_speed_up",
        "request_speed_down", "request_reset_speed", "request_action", "increase_speed",
        "decrease_speed", "reset_speed", "get_status", "log",
    ):  # fmt: skip
        assert callable(getattr(BaseViewer, name)), name


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"height": 0}, "height"),
        ({"width": 2.5}, "width"),
        ({"distance": 0.0}, "distance"),
        ({"elevation": -120.0}, "elevation"),
        ({"azimuth": math.nan}, "azimuth"),
        ({"fovy": 180.0}, "fovy"),
        ({"geom_group": (1, 1, 1)}, "geom_group"),
        ({"site_group": (2, 0, 0, 0, 0, 0)}, "site_group"),
        ({"lookat": (0.0, 0.0)}, "lookat"),
        ({"origin_type": "WORLD"}, "origin_type"),
        ({"env_idx": -1}, "env_idx"),
        ({"max_extra_envs": -1}, "max_extra_envs"),
        ({"reward_bar_max_terms": 0}, "reward_bar_max_terms"),
        ({"enable_shadows": "yes"}, "enable_shadows"),
        ({"entity_name": ""}, "entity_name"),
    ],
)
def test_a_bad_viewer_config_value_names_the_field(change, field):
    with pytest.raises(ValueError, match=rf"^ViewerConfig\.{field} "):
        ViewerConfig(**change)


def test_a_value_edited_after_construction_is_checked_where_the_config_is_used():
    cfg = ViewerConfig()
    cfg.distance = -1.0  # plain assignment, as a task edits its config
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
    with pytest.raises(ValueError, match=r"ViewerConfig\.distance must be .* > 0 m, got -1\.0"):
        OffscreenRenderer(model, cfg, SimpleNamespace(entities={}, num_envs=1))
    with pytest.raises(UnknownFieldError, match="did you mean 'distance'"):
        cfg.distnace = 3.0


# -- BaseViewer's loop --------------------------------------------------------------------------
class _FakeEnv:
    """What the loop needs of an env: a step counter, 2 ms steps, a failure switch."""

    num_envs = 1
    device = "cpu"
    step_dt = 0.002

    def __init__(self):
        self.cfg = SimpleNamespace(viewer=ViewerConfig())
        self.steps = 0
        self.resets = 0
        self.fail = False

    @property
    def unwrapped(self):
        return self

    def get_observations(self):
        return self.steps

    def step(self, actions):
        if self.fail:
            raise RuntimeError("the physics diverged")
        self.steps += 1

    def reset(self):
        self.resets += 1

    def close(self):
        pass


class _Policy:
    def __init__(self):
        self.calls = 0
        self.resets = 0
        self.on_call = None

    def __call__(self, obs):
        self.calls += 1
        if self.on_call is not None:
            self.on_call(self.calls)
        return obs

    def reset(self):
        self.resets += 1


class _RecordingViewer(BaseViewer):
    def __init__(self, env, policy, **kwargs):
        super().__init__(env, policy, **kwargs)
        self.frames = 0
        self.set_up = self.closed = False

    def setup(self):
        self.set_up, self.closed = True, False

    def sync_env_to_viewer(self):
        self.frames += 1

    def sync_viewer_to_env(self):
        pass

    def close(self):
        self.closed = True

    def is_running(self):
        return not self.closed


def _ticks(viewer, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        viewer.tick()
        time.sleep(0.001)


def _draw(viewer) -> None:
    """Tick until a frame is drawn."""
    while not viewer.tick():
        time.sleep(0.001)


def test_the_loop_paces_pauses_single_steps_resumes_and_resets():
    env, policy = _FakeEnv(), _Policy()
    assert isinstance(env, EnvProtocol) and isinstance(policy, PolicyProtocol)
    viewer = _RecordingViewer(env, policy, frame_rate=100.0)
    viewer.run(num_steps=1, catch_sigint=False)  # the first step imports torch (no_grad)
    start = time.perf_counter()
    viewer.run(num_steps=21, catch_sigint=False)
    # Paced at real time: 20 steps of 2 ms take 40 ms at least (not as fast as possible).
    assert time.perf_counter() - start >= 0.035
    assert viewer.set_up and viewer.closed and viewer.frames >= 1
    assert viewer.get_status().step_count == env.steps == policy.calls == 21

    viewer.closed = False
    viewer.request_toggle_pause()
    viewer.tick()
    assert viewer.get_status().paused
    paused_at, frames = env.steps, viewer.frames
    _ticks(viewer, 0.3)
    assert env.steps == paused_at  # no step while paused
    assert viewer.frames > frames  # frames are still drawn
    viewer.request_single_step()
    viewer.tick()
    assert env.steps == paused_at + 1 and viewer.get_status().paused
    viewer.request_toggle_pause()
    viewer.tick()
    _ticks(viewer, 0.02)
    resumed = env.steps - (paused_at + 1)
    # It goes on from the resume: the 0.3 s paused (150 steps' worth) are not made up.
    assert 1 <= resumed < 100

    viewer.request_toggle_pause()
    viewer.request_reset()
    viewer.tick()
    assert env.resets == 1 and policy.resets == 1 and viewer.get_status().step_count == 0

    for _ in range(2):
        viewer.request_speed_up()
    viewer.tick()
    assert (viewer.get_status().speed_multiplier, viewer.get_status().speed_label) == (4.0, "4x")
    for _ in range(3):
        viewer.request_speed_down()
    viewer.tick()
    assert viewer.get_status().speed_label == "1/2x"
    for _ in range(20):
        viewer.request_speed_up()
    viewer.tick()
    assert viewer.get_status().speed_multiplier == 8.0  # the fastest preset, no further
    viewer.request_reset_speed()
    viewer.tick()
    assert viewer.get_status().speed_multiplier == 1.0


def test_a_failing_step_pauses_the_loop_with_its_error_and_request_stop_ends_run(capsys):
    env, policy = _FakeEnv(), _Policy()
    viewer = _RecordingViewer(env, policy)
    env.fail = True
    _ticks(viewer, 0.02)
    status = viewer.get_status()
    assert status.paused and "RuntimeError: the physics diverged" in status.last_error
    assert "[ERROR] The step failed; paused" in capsys.readouterr().out
    env.fail = False
    viewer.request_toggle_pause()
    viewer.tick()
    assert viewer.get_status().last_error is None

    policy.calls, before = 0, env.steps
    policy.on_call = lambda calls: calls == 5 and viewer.request_stop()
    viewer.run(catch_sigint=False)  # no step limit: ends on request_stop
    assert 5 <= env.steps - before < 10 and viewer.closed


def test_ctrl_c_ends_run_once_and_closes_the_viewer():
    env, policy = _FakeEnv(), _Policy()
    viewer = _RecordingViewer(env, policy)
    policy.on_call = lambda calls: calls == 3 and os.kill(os.getpid(), signal.SIGINT)
    before = signal.getsignal(signal.SIGINT)
    try:
        viewer.run()
        assert viewer.closed and 3 <= env.steps < 10
    finally:
        signal.signal(signal.SIGINT, before)


# -- a real env ---------------------------------------------------------------------------------
@pytest.fixture
def cartpole():
    """Cartpole Balance with 3 worlds, behind rsl-rl's wrapper (what `play` hands a viewer)."""
    pytest.importorskip("mjlab.envs", reason="needs mjlab-core")
    wrapper = pytest.importorskip("mjlab.rl.vecenv_wrapper", reason="needs mjlab-rl")
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg

    env = ManagerBasedRlEnv(cartpole_balance_env_cfg(3))
    yield wrapper.RslRlVecEnvWrapper(env)
    env.close()


def _body(model, name: str) -> int:
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)


def test_the_offscreen_renderer_renders_env_frames_headless(cartpole, monkeypatch):
    env = cartpole.unwrapped
    # Headless with nothing set: the renderer picks an OpenGL backend itself.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL"):
        monkeypatch.delenv(name, raising=False)
    model = env.sim.mj_model

    def frame(**changes):
        cfg = ViewerConfig(**{"width": 96, "height": 64, "distance": 3.0, **changes})
        with OffscreenRenderer(model, cfg, env.scene, sim_model=env.sim) as renderer:
            renderer.update(env.sim.data)
            return renderer.render(), renderer

    image, renderer = frame(max_extra_envs=0)
    assert image.shape == (64, 96, 3) and image.dtype == np.uint8
    assert image.max() > 100 and image.std() > 10  # lit and varied, not black
    assert "MUJOCO_GL" not in os.environ  # chosen for the renderer, not for the process
    assert renderer.tracked_body == _body(model, "cartpole/cart")  # AUTO: the first moving body
    again, _ = frame(max_extra_envs=0)
    np.testing.assert_array_equal(again, image)  # so the differences below are the camera's
    for change in ({"distance": 6.0}, {"elevation": -80.0}, {"azimuth": 180.0}):
        other, _ = frame(max_extra_envs=0, **change)
        assert np.abs(other.astype(int) - image).mean() > 3, change
    # The neighbouring worlds (env origins 1 m apart) are drawn too, the watched one first.
    crowded, renderer = frame(env_idx=1, max_extra_envs=2)
    assert renderer.env_ids[0] == 1 and sorted(renderer.env_ids) == [0, 1, 2]
    assert np.abs(crowded.astype(int) - image).mean() > 1
    _, renderer = frame(origin_type=ViewerConfig.OriginType.ASSET_BODY, body_name="pole")
    assert renderer.tracked_body == _body(model, "cartpole/pole")
    with pytest.raises(ValueError, match=r"ViewerConfig\.body_name 'tip' is not a body of entity"):
        frame(origin_type=ViewerConfig.OriginType.ASSET_BODY, body_name="tip")
    with pytest.raises(ValueError, match=r"ViewerConfig\.entity_name 'robot' is not in the scene"):
        frame(origin_type=ViewerConfig.OriginType.ASSET_ROOT, entity_name="robot")
    with pytest.raises(RuntimeError, match="call initialize"):
        OffscreenRenderer(model, ViewerConfig(), env.scene).render()


def _listeners() -> str:
    return subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout


def _zero_policy(env):
    import torch

    return lambda obs: torch.zeros(env.num_envs, env.num_actions)


def test_the_viser_play_viewer_serves_on_localhost_and_plays_the_env(cartpole):
    seen = {}
    zeros = _zero_policy(cartpole)

    def policy(obs):
        if not seen:  # while the loop runs
            web = viewer.web
            seen.update(host=web.host, port=web.port, url=web.url)
            seen["listeners"] = _listeners() if shutil.which("ss") else None
        return zeros(obs)

    viewer = ViserPlayViewer(cartpole, policy, port=0)
    viewer.run(num_steps=5)
    env = cartpole.unwrapped
    assert viewer.get_status().step_count == 5 and env.common_step_counter == 5
    assert seen["host"] == "127.0.0.1" and seen["url"] == f"http://127.0.0.1:{seen['port']}"
    assert not viewer.is_running()
    if seen["listeners"] is not None:
        port = seen["port"]
        assert f"127.0.0.1:{port} " in seen["listeners"]
        assert f"0.0.0.0:{port} " not in seen["listeners"]
        assert f"127.0.0.1:{port} " not in _listeners()  # closed with the run


def test_the_viser_play_viewers_first_view_and_plot_follow_the_config(cartpole):
    viewer = ViserPlayViewer(cartpole, _zero_policy(cartpole), port=0)
    viewer.cfg = ViewerConfig(
        origin_type=ViewerConfig.OriginType.WORLD,
        lookat=(1.0, 2.0, 0.5),
        distance=4.0,
        elevation=-90.0,
        fovy=60.0,
        reward_bar_max_terms=2,
    )
    with pytest.warns(UserWarning, match=r"first 2 of 5 reward terms .*cart_vel"):
        viewer.setup()
    try:
        camera = viewer.web.server.initial_camera
        np.testing.assert_allclose(camera.look_at, [1.0, 2.0, 0.5])
        np.testing.assert_allclose(camera.position, [1.0, 2.0, 4.5], atol=1e-9)  # from above
        assert camera.fov == pytest.approx(math.radians(60.0))
        assert not viewer.web.follow  # WORLD: a free camera
        assert len(viewer.web._history) == 1 + 2  # time, then the first 2 terms
    finally:
        viewer.close()


class _Page:
    """A connected page, as far as WebViewer checks (`get_clients`)."""


def test_the_pages_controls_drive_the_loop(cartpole):
    env = cartpole.unwrapped
    viewer = ViserPlayViewer(cartpole, _zero_policy(cartpole), port=0)
    viewer.cfg = ViewerConfig(env_idx=1, distance=3.0)
    viewer.setup()
    try:
        web = viewer.web
        assert viewer.env_idx == 1 and web.env_index == 1  # the config's world first
        web.server.get_clients = lambda: {1: _Page()}  # so that frames are sent
        _ticks(viewer, 0.3)  # the panels refresh 5 times a second
        viewer.request_toggle_pause()
        _draw(viewer)  # paused: the frame shows the state now
        assert web.paused and web._pause_button.label == "Resume"  # shown on the page
        data = env.sim.data
        for handle, body in zip(web._body_handles, web._bodies, strict=True):
            np.testing.assert_allclose(handle.wxyz, data.xquat[1, body].numpy(), atol=1e-6)
        assert web._status.content.startswith(f"env 1: step {env.common_step_counter}, paused")
        times = web._plot.data[0]
        assert len(times) > 0 and times[-1] > 0  # the reward plot has the steps' points

        web._set_paused(False)  # what the pause button does
        viewer.tick()
        assert not viewer.get_status().paused
        web._set_paused(True)
        viewer.tick()
        paused_at = env.common_step_counter
        assert viewer.get_status().paused
        _ticks(viewer, 0.1)
        assert env.common_step_counter == paused_at
        web._step_once = True  # what the step button does
        viewer.tick()
        assert env.common_step_counter == paused_at + 1
        web._reset = True  # what the reset button does
        viewer.tick()
        assert viewer.get_status().step_count == 0
        assert env.episode_length_buf.tolist() == [0, 0, 0]

        web._speed_slider.value = 2.0  # the speed slider
        viewer.tick()
        assert viewer.get_status().speed_multiplier == 2.0
        viewer.request_speed_up()
        viewer.tick()
        assert viewer.get_status().speed_multiplier == 4.0 and web.speed == 4.0  # shown
        web._env_slider.value = 2  # the env slider
        viewer.request_toggle_pause()
        _ticks(viewer, 0.1)
        assert not web.paused  # the loop's state is shown on the page
        viewer.request_toggle_pause()
        _draw(viewer)
        for handle, body in zip(web._body_handles, web._bodies, strict=True):
            np.testing.assert_allclose(handle.wxyz, data.xquat[2, body].numpy(), atol=1e-6)
        assert web._status.content.startswith("env 2: step ")
    finally:
        viewer.close()
    assert not viewer.is_running()


# -- NativeMujocoViewer -------------------------------------------------------------------------
def test_the_native_viewer_needs_a_display_and_draws_no_plots(cartpole, monkeypatch):
    from mjlab.viewer.native import NoDisplayError

    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    viewer = NativeMujocoViewer(cartpole, _zero_policy(cartpole))
    with pytest.raises(NoDisplayError, match="needs a display"):
        viewer.run(num_steps=1)
    with pytest.raises(ValueError, match="plot_cfg must be None"):
        NativeMujocoViewer(cartpole, _zero_policy(cartpole), plot_cfg=object())


class _Window:
    """Stands in for `mujoco.viewer.launch_passive`'s handle (no display here)."""

    def __init__(self, model, data, key_callback=None):
        self.data, self.key_callback = data, key_callback
        self.cam, self.opt = mujoco.MjvCamera(), mujoco.MjvOption()
        self.user_scn = mujoco.MjvScene(model, maxgeom=10)
        self.syncs, self.texts, self.open = 0, None, True

    @contextlib.contextmanager
    def lock(self):
        yield

    def sync(self):
        self.syncs += 1

    def set_texts(self, texts):
        self.texts = texts

    def is_running(self):
        return self.open

    def close(self):
        self.open = False


def test_the_native_viewer_shows_the_watched_world_and_takes_keys_and_pushes(cartpole, monkeypatch):
    import mujoco.viewer

    from mjlab.viewer import native

    windows = []

    def launch_passive(model, data, *, key_callback=None):
        windows.append(_Window(model, data, key_callback))
        return windows[-1]

    monkeypatch.setattr(native, "has_display", lambda: True)
    monkeypatch.setattr(mujoco.viewer, "launch_passive", launch_passive)
    env = cartpole.unwrapped
    keys = []
    viewer = NativeMujocoViewer(cartpole, _zero_policy(cartpole), key_callback=keys.append)
    viewer.cfg = ViewerConfig(distance=2.0, elevation=-10.0, enable_shadows=False)
    viewer.setup()
    window = windows[0]
    cart = _body(env.sim.mj_model, "cartpole/cart")
    assert (window.cam.type, window.cam.trackbodyid) == (mujoco.mjtCamera.mjCAMERA_TRACKING, cart)
    assert (window.cam.distance, window.cam.elevation) == (2.0, -10.0)
    assert window.user_scn.flags[mujoco.mjtRndFlag.mjRND_SHADOW] == 0
    _ticks(viewer, 0.1)
    assert window.syncs > 0 and env.common_step_counter > 0
    assert window.texts[3].startswith("1/3\n")

    window.key_callback(32)  # space: pause
    _draw(viewer)
    assert viewer.get_status().paused and keys == [32]
    np.testing.assert_allclose(window.data.qpos, env.sim.data.qpos[0].numpy())
    window.key_callback(46)  # period: the next world
    _draw(viewer)
    assert viewer.env_idx == 1 and keys == [32, 46] and window.texts[3].startswith("2/3\n")
    np.testing.assert_allclose(window.data.qpos, env.sim.data.qpos[1].numpy())

    viewer.request_toggle_pause()
    viewer.tick()
    xfrc = env.sim.data.xfrc_applied
    xfrc[1, 1, 0] = 3.0  # the env's own push (an event): left alone
    viewer.sync_viewer_to_env()
    assert float(xfrc[1, 1, 0]) == 3.0
    window.data.xfrc_applied[2, 2] = 5.0  # the mouse pushes the pole
    viewer.sync_viewer_to_env()
    assert float(xfrc[1, 2, 2]) == 5.0 and float(xfrc[1, 1, 0]) == 0.0
    window.data.xfrc_applied[:] = 0.0  # released: cleared once
    viewer.sync_viewer_to_env()
    assert not xfrc[1].any()
    viewer.close()
    assert not window.open and not viewer.is_running()
