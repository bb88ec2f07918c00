"""mjlab 1.6's recorders: a RecorderTerm configured in ManagerBasedRlEnvCfg.recorders sees a
rollout through its hooks (pre-reset, post-reset, post-step, close) in mjlab's order; an env
without recorders has a NullRecorderManager whose hooks do nothing; building an env leaves the
config as it was; a bad recorder config raises an error naming the term."""

import copy

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import (
    NullRecorderManager,
    RecorderManager,
    RecorderTerm,
    RecorderTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
)
from mjlab.managers import recorder_manager as recorder_module
from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg


class _Tape(RecorderTerm):
    """Keeps every hook call with what the env held at that moment."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.entity = cfg.params["entity"]
        self.calls: list[tuple] = []
        self.closed = False

    def _snap(self, ids=None):
        env = self._env
        rows = slice(None) if ids is None else ids
        return {
            "obs": env.obs_buf["actor"][rows].clone() if env.obs_buf else None,
            "action": env.action_manager.action[rows].clone(),
            "episode_length": env.episode_length_buf[rows].clone(),
        }

    def record_pre_reset(self, env_ids):
        snap = self._snap(env_ids)
        snap["reward"] = self._env.reward_buf[env_ids].clone()
        snap["time_outs"] = self._env.reset_time_outs[env_ids].clone()
        self.calls.append(("pre_reset", env_ids.tolist(), snap))

    def record_post_reset(self, env_ids):
        self.calls.append(("post_reset", env_ids.tolist(), self._snap(env_ids)))

    def record_post_step(self):
        snap = self._snap()
        snap["reset_buf"] = self._env.reset_buf.clone()
        self.calls.append(("post_step", None, snap))

    def close(self):
        self.closed = True


def _cfg(num_envs=3, **recorders):
    cfg = cartpole_balance_env_cfg(num_envs)
    cfg.episode_length_s = 0.1  # 5 steps of 0.02 s: time-outs come quickly
    cfg.terminations["pole_fell"] = None  # only the time-out ends an episode
    cfg.terminations["cart_out"] = None
    cfg.recorders = recorders
    return cfg


def _tape_cfg(**params):
    params.setdefault("entity", SceneEntityCfg("cartpole", joint_names=("slider",)))
    return RecorderTermCfg(func=_Tape, params=params)


def test_a_recorder_captures_actions_observations_and_resets_in_mjlab_order():
    env = ManagerBasedRlEnv(_cfg(tape=_tape_cfg()))
    try:
        manager = env.recorder_manager
        assert isinstance(manager, RecorderManager) and manager.active_terms == ["tape"]
        tape = manager.get_term("tape")
        assert isinstance(tape, _Tape) and "tape" in manager and "other" not in manager
        assert tape.entity.joint_ids == [0]  # its SceneEntityCfg param resolved on the scene
        assert tape.calls == []  # building the env records nothing

        obs, _ = env.reset()
        assert [c[:2] for c in tape.calls] == [("post_reset", [0, 1, 2])]
        torch.testing.assert_close(tape.calls[0][2]["obs"], obs["actor"])

        n_action = env.action_manager.total_action_dim
        returned, applied = [], []
        for step in range(7):
            if step == 2:  # env 0 starts over: its time-out comes 2 steps after the others'
                env.reset(env_ids=torch.tensor([0]))
            action = torch.full((3, n_action), 0.01 * (step + 1))
            action[:, 0] += torch.tensor([0.0, 0.1, 0.2])
            applied.append(action)
            returned.append(env.step(action))
    finally:
        env.close()
    assert tape.closed

    kinds = [(kind, ids) for kind, ids, _ in tape.calls]
    step_calls = [("post_step", None)]
    assert kinds == [
        ("post_reset", [0, 1, 2]),
        *step_calls * 2,
        ("post_reset", [0]),  # the manual reset of env 0
        *step_calls * 2,
        # Step 5 of envs 1 and 2: time-out, reset inside the step.
        ("pre_reset", [1, 2]),
        ("post_reset", [1, 2]),
        ("post_step", None),
        ("post_step", None),
        ("pre_reset", [0]),  # env 0's fifth step since its reset
        ("post_reset", [0]),
        ("post_step", None),
    ]

    post_steps = [snap for kind, _, snap in tape.calls if kind == "post_step"]
    for step, snap in enumerate(post_steps):
        obs = returned[step][0]
        torch.testing.assert_close(snap["obs"], obs["actor"])  # what the step returned
        reset = snap["reset_buf"]
        # The applied action, except for envs reset in this step (0 there).
        expected = torch.where(reset[:, None], 0.0, applied[step])
        torch.testing.assert_close(snap["action"], expected)

    pre_resets = [(ids, snap) for kind, ids, snap in tape.calls if kind == "pre_reset"]
    post_resets = [(ids, snap) for kind, ids, snap in tape.calls if kind == "post_reset"]
    for (ids, snap), step in zip(pre_resets, (4, 6), strict=True):
        # The terminal step's action and reward, still intact; the obs the action was chosen
        # from (the previous step's).
        torch.testing.assert_close(snap["action"], applied[step][ids])
        torch.testing.assert_close(snap["reward"], returned[step][1][ids])
        torch.testing.assert_close(snap["obs"], returned[step - 1][0]["actor"][ids])
        assert snap["time_outs"].all() and snap["episode_length"].tolist() == [5] * len(ids)
    for (ids, snap), step in zip(post_resets[-2:], (4, 6), strict=True):
        # The new episode: its first observation (what the step returned), no action yet.
        torch.testing.assert_close(snap["obs"], returned[step][0]["actor"][ids])
        assert not snap["action"].any() and not snap["episode_length"].any()
        assert snap["obs"].abs().max() < 0.2  # a fresh start (reset offsets within 0.1)


def test_without_auto_reset_step_records_only_post_step_and_reset_records_post_reset():
    cfg = _cfg(tape=_tape_cfg())
    cfg.auto_reset = False
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        tape = env.recorder_manager.get_term("tape")
        actions = torch.zeros(3, env.action_manager.total_action_dim)
        for _ in range(5):  # the fifth ends every episode, nothing resets
            _, _, _, truncated, _ = env.step(actions)
        assert truncated.all()
        env.reset(env_ids=truncated)
    finally:
        env.close()
    assert [c[:2] for c in tape.calls] == [
        ("post_reset", [0, 1, 2]),
        *[("post_step", None)] * 5,
        ("post_reset", [0, 1, 2]),
    ]


def test_the_default_env_has_a_null_recorder_manager_whose_hooks_do_nothing():
    cfg = _cfg()
    assert cfg.recorders == {}
    env = ManagerBasedRlEnv(cfg)
    try:
        manager = env.recorder_manager
        assert isinstance(manager, NullRecorderManager)
        assert not isinstance(manager, RecorderManager)
        assert manager.active_terms == [] and "tape" not in manager and manager.cfg is None
        with pytest.raises(KeyError, match="tape"):
            manager.get_term("tape")
        env.reset()
        ids = torch.tensor([0, 2])

        class _Ops(TorchDispatchMode):
            count = 0

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                _Ops.count += 1
                return func(*args, **(kwargs or {}))

        with _Ops():
            manager.record_pre_reset(ids)
            manager.record_post_reset(ids)
            manager.record_post_step()
            manager.close()
        assert _Ops.count == 0  # no tensor work at all
        with _Ops():
            torch.zeros(1) + 1  # the counter does count tensor work
        assert _Ops.count > 0
        env.step(torch.zeros(3, env.action_manager.total_action_dim))
    finally:
        env.close()
    # Disabled terms only: no recorder either.
    env = ManagerBasedRlEnv(_cfg(tape=None))
    assert isinstance(env.recorder_manager, NullRecorderManager)
    env.close()
    assert recorder_module.NullRecorderManager is NullRecorderManager


def test_building_an_env_leaves_the_config_unchanged_and_recordings_are_not_env_state():
    cfg = _cfg(tape=_tape_cfg())
    before = copy.deepcopy(cfg)
    env = ManagerBasedRlEnv(cfg)
    other = ManagerBasedRlEnv(cfg)
    try:
        assert cfg == before
        term_cfg = cfg.recorders["tape"]
        assert term_cfg.func is _Tape  # still the class, not the built term
        original = term_cfg.params["entity"]
        resolved = env.recorder_manager.get_term("tape").entity
        assert resolved is not original and resolved.joint_ids == [0]
        assert original.joint_ids == slice(None)  # the config's own stays unresolved
        assert env.cfg.recorders["tape"].func is _Tape
        # Each env builds its own term.
        assert env.recorder_manager.get_term("tape") is not other.recorder_manager.get_term("tape")

        env.reset()
        other.reset()
        for _ in range(3):
            env.step(torch.zeros(3, env.action_manager.total_action_dim))
        state = env.get_state()
        assert not any("recorder" in path for path in state["env"])
        # The tapes differ (4 calls and 1): what a term captured is not env state, and
        # restoring a state leaves the other env's recording as it was.
        other.set_state(state)
        assert len(other.recorder_manager.get_term("tape").calls) == 1
        assert len(env.recorder_manager.get_term("tape").calls) == 4
        torch.testing.assert_close(other.episode_length_buf, env.episode_length_buf)
    finally:
        env.close()
        other.close()


def _not_a_term(env):
    return torch.zeros(env.num_envs)


class _NeedsPath(RecorderTerm):
    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.path = cfg.params["path"]


class _Picky(RecorderTerm):
    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        raise ValueError("rate must be positive")


@pytest.mark.parametrize(
    ("term", "error", "message"),
    [
        (
            RecorderTermCfg(func=_not_a_term),
            TypeError,
            r"Recorder term 'bad': func must be a RecorderTerm subclass.*function",
        ),
        (
            RecorderTermCfg(func=_Tape, params={"entity": SceneEntityCfg("no_such_robot")}),
            ValueError,
            r"Recorder term 'bad', param 'entity': .*no_such_robot",
        ),
        (RecorderTermCfg(func=_NeedsPath), KeyError, r"Recorder term 'bad': 'path'"),
        (RecorderTermCfg(func=_Picky), ValueError, r"Recorder term 'bad': rate must be positive"),
    ],
)
def test_a_bad_recorder_config_raises_naming_the_term(term, error, message):
    cfg = _cfg(fine=_tape_cfg(), bad=term)
    with pytest.raises(error, match=message):
        ManagerBasedRlEnv(cfg)


def test_recorders_must_be_recorder_term_cfgs_and_a_term_is_not_called():
    cfg = _cfg()
    cfg.recorders["x"] = RewardTermCfg(func=_not_a_term, weight=1.0)
    with pytest.raises(ValueError, match=r"recorders\['x'\].*RecorderTermCfg"):
        ManagerBasedRlEnv(cfg)
    env = ManagerBasedRlEnv(_cfg(tape=_tape_cfg()))
    try:
        with pytest.raises(NotImplementedError, match="record_"):
            env.recorder_manager.get_term("tape")()
    finally:
        env.close()
