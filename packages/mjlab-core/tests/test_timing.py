"""Timers and first observations of an episode: command resampling and interval events count
whole env steps and start over at a reset (inside `step` or by `reset()` alike), the terrain
curriculum judges only episodes that ran, the height scan describes the reset state."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import CommandTerm, CommandTermCfg, EventTermCfg, TerminationTermCfg
from mjlab.tasks import load_env_cfg
from mjlab.utils.math import sample_duration_steps


class _CountingCommand(CommandTerm):
    """A zero command that records the step counter at each of its resamples."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.resampled_at: list[list[int]] = [[] for _ in range(self.num_envs)]

    @property
    def command(self) -> torch.Tensor:
        return torch.zeros(self.num_envs, 1, device=self.device)

    def _resample(self, env_ids):
        for i in env_ids.tolist():
            self.resampled_at[i].append(self.env.common_step_counter)


def _record_interval(env, env_ids):
    env.fired.append((env.common_step_counter, env_ids.tolist()))


def _end_at(step, envs):
    def func(env):
        done = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        done[envs] = env.common_step_counter == step
        return done

    return func


def _cartpole(num_envs=2, resampling=(1.0, 1.0), interval=None, end_at=None, end_envs=0):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = num_envs
    cfg.terminations = {}  # only the ones a test adds
    cfg.episode_length_s = 100.0
    cfg.commands = {
        "count": CommandTermCfg(class_type=_CountingCommand, resampling_time_range=resampling)
    }
    if interval is not None:
        cfg.events["tick"] = EventTermCfg(
            func=_record_interval, mode="interval", interval_range_s=interval
        )
    if end_at is not None:
        cfg.terminations["end"] = TerminationTermCfg(func=_end_at(end_at, end_envs))
    env = ManagerBasedRlEnv(cfg)
    env.fired = []
    return env


def _steps(env, n):
    for _ in range(n):
        env.step(torch.zeros(env.num_envs, 1))


def test_durations_count_whole_steps_without_float32_drift():
    steps = sample_duration_steps((1.0, 1.0), 0.02, 4, "cpu")
    assert steps.dtype == torch.int64 and steps.tolist() == [50] * 4
    assert sample_duration_steps((10.0, 10.0), 0.02, 1, "cpu").item() == 500
    # A zero duration still lasts one step; a duration between steps is never cut short.
    assert sample_duration_steps((0.0, 0.0), 0.02, 1, "cpu").item() == 1
    assert sample_duration_steps((0.05, 0.05), 0.02, 1, "cpu").item() == 3
    # Every whole step within the range, each about equally often.
    draws = sample_duration_steps((0.2, 0.3), 0.02, 60_000, "cpu", torch.Generator().manual_seed(0))
    counts = torch.bincount(draws)[10:]
    assert counts.numel() == 6 and counts.min() > 0.9 * counts.max()


def test_a_one_second_resampling_period_lasts_exactly_fifty_steps():
    env = _cartpole()
    assert env.step_dt == pytest.approx(0.02)
    env.reset(seed=0)
    _steps(env, 160)
    term = env.command_manager.get_term("count")
    assert term.resampled_at[1] == [0, 50, 100, 150]
    assert term.steps_left.dtype == torch.int64
    assert term.time_left[1].item() == pytest.approx(40 * 0.02)


def test_a_reset_inside_step_and_an_explicit_reset_hold_the_first_command_equally_long():
    # Env 0 ends in step 30 and is reset inside that step; env 1 was reset by reset() at step 0.
    env = _cartpole(end_at=30)
    env.reset(seed=0)
    _steps(env, 100)
    at = env.command_manager.get_term("count").resampled_at
    assert at[1] == [0, 50, 100]
    assert at[0] == [0, 30, 80]  # 50 steps after each start, as for env 1


def test_interval_events_count_steps_and_restart_when_an_env_resets():
    env = _cartpole(interval=(0.4, 0.4), end_at=10)
    env.reset(seed=0)
    _steps(env, 45)
    fired = {i: [s for s, ids in env.fired if i in ids] for i in (0, 1)}
    assert fired[1] == [20, 40]  # every 20 steps from the start
    # Env 0 was reset in step 10: its timer was redrawn then, so no event fires early.
    assert fired[0] == [30]


def test_an_interval_event_never_fires_before_its_shortest_interval_into_an_episode():
    # Every env ends in step 9 and is reset inside it; no event may follow within 10 steps.
    env = _cartpole(num_envs=8, interval=(0.2, 0.6), end_at=9, end_envs=slice(None))
    env.reset(seed=1)
    _steps(env, 40)
    assert env.fired  # the events do fire
    for step, _ids in env.fired:
        assert step < 9 + 1 or step >= 9 + 10, step


def _end_flagged(env):
    flags = getattr(env, "end_now", None)  # the manager probes the term before it is set
    return torch.zeros(env.num_envs, dtype=torch.bool) if flags is None else flags.clone()


@pytest.mark.slow
def test_height_scan_in_the_first_observation_of_an_episode_describes_the_reset_state():
    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 4
    cfg.terminations["end"] = TerminationTermCfg(func=_end_flagged)
    env = ManagerBasedRlEnv(cfg)
    env.end_now = torch.zeros(4, dtype=torch.bool)
    scan = env.scene["height_scan"]

    def observed():
        return env.observation_manager.raw_terms("critic")["height_scan"].clone()

    def cast_now():
        scan.update(env.step_dt)  # marks the scan stale: the next read casts from this state
        return scan.origin_z[:, None] - scan.heights - 0.5

    env.reset(seed=0)
    first = observed()
    assert torch.equal(first, cast_now())
    assert first.abs().max() > 0.05  # the robots stand above rough ground, not at zero height
    env.step(torch.zeros(4, 12))
    # Carry env 2's robot 3 m away and 0.4 m up, then let it end and reset inside the step.
    robot = env.scene["robot"]
    d = robot.data
    state = torch.cat([d.root_link_pos_w, d.root_link_quat_w, torch.zeros(4, 6)], dim=-1)
    state[2, :3] += torch.tensor([3.0, 3.0, 0.4])
    robot.write_root_state_to_sim(state)
    env.sim.forward()
    away = cast_now()[2]
    env.end_now[2] = True
    env.step(torch.zeros(4, 12))
    assert env.episode_length_buf[2] == 0
    reset_obs = observed()[2]
    assert torch.equal(reset_obs, cast_now()[2])
    assert (reset_obs - away).abs().max() > 0.1  # not the scan from before the reset


@pytest.mark.slow
def test_the_terrain_curriculum_does_not_judge_episodes_that_never_ran():
    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 8
    env = ManagerBasedRlEnv(cfg)
    terrain = env.scene.terrain
    env.reset(seed=0)
    levels = terrain.terrain_levels.clone()
    assert levels.max() > 0  # robots start on several rows, so moving down would show
    env.reset()
    env.reset(env_ids=torch.arange(4))
    assert torch.equal(terrain.terrain_levels, levels)
    # An episode that ran and went nowhere with a nonzero command still moves down.
    env.step(torch.zeros(8, 12))
    cmd = env.command_manager.get_command("twist")
    moving = cmd[:, :2].norm(dim=1) > 0.2
    env.reset()
    down = terrain.terrain_levels < levels
    assert moving.any() and torch.equal(down[moving], levels[moving] > 0)
