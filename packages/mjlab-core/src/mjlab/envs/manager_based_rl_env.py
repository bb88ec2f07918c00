"""`ManagerBasedRlEnv`: a batched RL environment whose MDP is a set of manager terms."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from mjlab.deploy.headless import renderer_error
from mjlab.deploy.metadata import DeploymentMetadata
from mjlab.envs.deployment import deployment_metadata
from mjlab.envs.manager_based_rl_env_cfg import ManagerBasedRlEnvCfg
from mjlab.managers import (
    ActionManager,
    CommandManager,
    CurriculumManager,
    EventManager,
    MetricsManager,
    NullRecorderManager,
    ObservationManager,
    RecorderManager,
    RewardManager,
    TerminationManager,
)
from mjlab.scene import Scene
from mjlab.sim import Simulation
from mjlab.utils import snapshot
from mjlab.utils.config import copy_config, freeze_config, validate_config
from mjlab.utils.env_ids import mark_checked, resolve_env_ids

VecEnvObs = dict[str, torch.Tensor | dict[str, torch.Tensor]]
"""Observations by group: a (num_envs, dim) tensor, or a dict of terms for a group that does
not concatenate them."""
VecEnvStepReturn = tuple[VecEnvObs, torch.Tensor, torch.Tensor, torch.Tensor, dict]
"""What `step` returns: (observations, reward (num_envs,), terminated (num_envs,) bool,
truncated (num_envs,) bool, extras)."""


class ManagerBasedRlEnv:
    """`num_envs` environments stepped together (Isaac Lab / mjlab semantics).

    One `step(action)`: process the action; `decimation` physics steps with the actuator
    targets held; sensors update; terminations; rewards (weight * term * step_dt); envs that
    are done (or whose physics diverged) are reset inside the step; commands, step and interval
    events advance; observations are computed once (history advances once). Recorder terms
    (`cfg.recorders`, `mjlab.managers.RecorderTerm`) see the step through their hooks:
    `record_pre_reset(ids)` just before the done envs reset, `record_post_reset(ids)` and then
    `record_post_step()` once the observations are computed; `reset` ends with
    `record_post_reset(env_ids)`.

    Args:
        cfg: the task config. The env works on its own copy (`self.cfg`, made by
            `mjlab.utils.config.copy_config`: the config structure is copied, term functions and
            live objects in params are shared): building and running it never changes `cfg`,
            so one config can build several independent envs. `self.cfg` is read-only
            (`mjlab.utils.config.freeze_config`): assigning to it, or to anything in it, raises
            `FrozenConfigError` (an AttributeError); change `cfg` (or
            `copy.deepcopy(env.cfg)`) and build a new env instead.
        device: "cpu" or "cuda:N"; the simulation backend follows it (cfg.sim.backend="auto").
        render_mode: None or "rgb_array".
        rng_device: device of the env's random generator `rng` (None: `device`). "cpu" makes a
            CUDA env draw the same resets, commands, randomization and noise as a CPU env with
            the same seed (each draw is then copied to the device: for comparisons, not speed).

    Raises:
        mjlab.utils.config.ConfigError (a ValueError): an invalid field anywhere in `cfg`
            (checked again here: fields edited after the config was made), named by its path,
            e.g. `cfg.observations['actor'].terms['joint_pos']: ObservationTermCfg.delay ...`.
        ValueError: a config error found while building (unknown entity, regex with no match,
            missing reward weight, a term whose output has the wrong shape or dtype), naming the
            term.
    """

    _snapshot_exclude = ("_dr_defaults", "recorder_manager")
    """`mdp.dr`'s copy of the compiled model's values (constants, made on first use), and the
    recorders: what they captured is a record of the run, not state it depends on."""

    cfg: ManagerBasedRlEnvCfg
    """The env's own read-only copy of the config it was given."""
    metadata: ClassVar[dict] = {"render_modes": [None, "rgb_array"]}
    is_vector_env = True

    def __init__(
        self,
        cfg: ManagerBasedRlEnvCfg,
        device: str | torch.device = "cpu",
        render_mode: str | None = None,
        rng_device: str | torch.device | None = None,
    ):
        # The whole config, again: fields edited after construction are checked here.
        validate_config(cfg)
        # The env's own copy, read-only from here on: everything below (simulation, buffers,
        # managers) is built from it once, so a later edit could only half-apply.
        self.cfg = freeze_config(copy_config(cfg), "env.cfg")
        cfg = self.cfg
        self.device = torch.device(device)
        self.render_mode = render_mode
        self.num_envs = cfg.scene.num_envs
        self.rng = torch.Generator(device=torch.device(rng_device or self.device))
        self.seed(cfg.seed)

        self.scene = Scene(cfg.scene, self.device)
        self.sim = Simulation(self.num_envs, cfg.sim, self.scene.compile(), self.device)
        self.scene.initialize(self.sim, self.rng)
        self.physics_dt = self.sim.physics_dt
        self.step_dt = self.physics_dt * cfg.decimation
        self.max_episode_length_s = cfg.episode_length_s
        self.max_episode_length = math.ceil(cfg.episode_length_s / self.step_dt)

        n = self.num_envs
        self.episode_length_buf = torch.zeros(n, dtype=torch.long, device=self.device)
        self.common_step_counter = 0
        self.extras: dict[str, Any] = {"log": {}}
        self.reset_buf = torch.zeros(n, dtype=torch.bool, device=self.device)
        self.reset_terminated = torch.zeros_like(self.reset_buf)
        self.reset_time_outs = torch.zeros_like(self.reset_buf)
        self.reward_buf = torch.zeros(n, device=self.device)
        self.awaiting_reset = torch.zeros(n, dtype=torch.bool, device=self.device)
        """(num_envs,) with `cfg.auto_reset=False`: envs whose episode ended and that were not
        reset yet."""

        # Default state everywhere before any term looks at it.
        all_ids = torch.arange(n, device=self.device)
        self.sim.reset(forward=False)
        self.scene.reset(all_ids)
        self.sim.forward()

        # Order matters: terms may read commands and actions (Isaac Lab's order).
        self.event_manager = EventManager(cfg.events, self)
        self.command_manager = CommandManager(cfg.commands, self)
        self.action_manager = ActionManager(cfg.actions, self)
        self.observation_manager = ObservationManager(cfg.observations, self)
        self.termination_manager = TerminationManager(cfg.terminations, self)
        self.reward_manager = RewardManager(cfg.rewards, self)
        self.curriculum_manager = CurriculumManager(cfg.curriculum, self)
        self.metrics_manager = MetricsManager(cfg.metrics, self)
        # Recorders only observe: built last, after every manager they may read. No terms:
        # the null manager, whose hooks return at once.
        if any(term is not None for term in (cfg.recorders or {}).values()):
            self.recorder_manager = RecorderManager(cfg.recorders, self)
        else:
            self.recorder_manager = NullRecorderManager()
        self._configure_spaces()

        self.event_manager.apply("startup")
        self.obs_buf: VecEnvObs = {}
        self._renderer = None

    # -- properties ---------------------------------------------------------------------------------
    @property
    def unwrapped(self) -> ManagerBasedRlEnv:
        return self

    def _configure_spaces(self) -> None:
        # Imported when an env is built, not with this module: task configs import
        # `mjlab.envs`, and loading a config should not pay for gymnasium's import.
        import gymnasium as gym

        self.single_observation_space = gym.spaces.Dict()
        for group, dims in self.observation_manager.group_dims.items():
            self.single_observation_space[group] = gym.spaces.Box(
                -np.inf, np.inf, shape=dims, dtype=np.float32
            )
        a = self.action_manager.total_action_dim
        self.single_action_space = gym.spaces.Box(-np.inf, np.inf, shape=(a,), dtype=np.float32)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)

    # -- seeding --------------------------------------------------------------------------------------
    def seed(self, seed: int | None = None) -> int:
        """Seed the env's generators (`self.rng` torch, `self.np_rng` numpy). Returns the seed."""
        seed = 0 if seed is None else int(seed)
        self.rng.manual_seed(seed)
        self.np_rng = np.random.default_rng(seed)
        self._seed = seed
        return seed

    # -- state (exact resume) ---------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """Everything the env's future depends on, copied: a checkpoint of the env.

        `"sim"`: the physics state of every world (`Simulation.get_state`, with the solver's warm
        start); `"env"`: every mutable leaf of the env and its managers, terms, sensors and
        entities (`mjlab.utils.snapshot.capture`: episode lengths, the step counter, command
        values and timers, event timers, action and observation buffers and histories, delay
        buffers, per-world model fields, the generators `rng` / `np_rng`, ...). Configs are not
        in it. Plain types only (tensors, numbers, dicts), so `torch.save` stores it.

        An env built from the same config that gets this state with `set_state` continues
        exactly as this one would (bit for bit on the C MuJoCo backend and on MuJoCo Warp's CPU device;
        `packages/mjlab-core/tests/test_env_state.py`).
        """
        return {"sim": self.sim.get_state(), "env": snapshot.capture(self)}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a `get_state` copy into this env, which must be built from the same config
        (same task, num_envs, backend and device).

        Raises:
            ValueError: the state does not fit this env (another config); the message names
                the first attribute or physics field that differs. Nothing is written then.
        """
        # All or nothing: the physics is checked first, `restore` checks every path before it
        # writes, and a checked physics state cannot fail to be written.
        self.sim.check_state(state["sim"])
        snapshot.restore(self, state["env"])
        # Curriculum stages write term configs, which are not state: written again here.
        self.curriculum_manager.after_set_state()
        self.sim.set_state(state["sim"])
        if self.sim._expanded:  # per-world model fields: their derived constants too
            self.sim.set_const()

    # -- reset / step -------------------------------------------------------------------------------
    def reset(
        self,
        seed: int | None = None,
        env_ids: torch.Tensor | None = None,
        options: dict | None = None,
    ) -> tuple[VecEnvObs, dict]:
        """Reset `env_ids` (None: all) and return (observations, extras).

        With a seed, the generators are reseeded first, so the same seed gives the same rollout.
        Only the reset envs' observation histories advance. The recorders'
        `record_post_reset(env_ids)` runs last, with the new observations in `obs_buf`.

        Args:
            seed: reseed the env's generators first (None: keep them).
            env_ids: integer ids in [0, num_envs) (tensor, array, list or int), or a boolean
                mask of shape (num_envs,) (e.g. `terminated | truncated`) meaning its True
                entries; None: every env (`mjlab.utils.env_ids.resolve_env_ids`).

        Raises:
            TypeError: float (or other non-integer) ids; nothing is reset.
            ValueError: ids out of range or a mask of the wrong length; nothing is reset.
        """
        env_ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        if seed is not None:
            self.seed(seed)
        self.extras = {"log": {}}
        self._reset_idx(env_ids)
        self.awaiting_reset[env_ids] = False
        full = len(env_ids) == self.num_envs
        self.obs_buf = self.observation_manager.compute(
            update_history=True, env_ids=None if full else env_ids
        )
        self.recorder_manager.record_post_reset(env_ids)
        return self.obs_buf, self.extras

    def step(self, action: torch.Tensor) -> VecEnvStepReturn:
        """Advance every env by one policy step.

        Args:
            action: (num_envs, action_dim) float.

        Returns:
            obs {group: (num_envs, D)}, reward (num_envs,), terminated (num_envs,) bool,
            truncated (num_envs,) bool, extras {"log": {...}} with everything logged in this step
            (including episode sums of the envs that reset in it).

        Raises:
            ValueError: wrong action shape, dtype or device, or NaN/Inf in the action (on the
                CPU; a CUDA env does not read the action back to the host: NaN/Inf act as 0
                and are logged as `Metrics/nonfinite_actions`, see
                `ActionManager.host_checks`).
            RuntimeError: with `cfg.auto_reset=False`, an env whose episode ended was not
                reset (the envs are named; call `reset(env_ids=...)`).
        """
        if not self.cfg.auto_reset and bool(self.awaiting_reset.any()):  # one sync, opt-in
            ids = self.awaiting_reset.nonzero().flatten().tolist()
            raise RuntimeError(
                f"Envs {ids[:10]}{' ...' if len(ids) > 10 else ''} ended their episode and were "
                "not reset (cfg.auto_reset=False): call env.reset(env_ids=...) before the next "
                "step."
            )
        self.extras = {"log": {}}
        self.action_manager.process_action(action)
        # Targets are held over the decimation: apply once, then step the physics as one call.
        self.action_manager.apply_action()
        self.sim.step(self.cfg.decimation)
        self.episode_length_buf += 1
        self.common_step_counter += 1
        self.scene.update(self.step_dt)

        dones = self.termination_manager.compute()
        terminated = self.termination_manager.terminated
        truncated = self.termination_manager.truncated
        diverged = self.sim.diverged
        if self.cfg.sim.check_divergence:
            # A world whose physics blew up ends its episode; it never poisons the others.
            # (New tensors: the termination manager's own stay as its terms returned them.)
            self.reset_terminated = terminated | diverged
            self.reset_time_outs = truncated & ~diverged
            self.reset_buf = dones | diverged
        else:
            self.reset_buf = dones  # a new tensor from the manager
            self.reset_terminated = terminated.clone()
            self.reset_time_outs = truncated.clone()
        self.reward_buf = self.reward_manager.compute(
            dt=self.step_dt if self.cfg.scale_rewards_by_dt else 1.0,
            ignore=diverged if self.cfg.sim.check_divergence else None,
        )
        if self.cfg.sim.check_divergence:
            self.reward_buf = torch.where(diverged, 0.0, self.reward_buf)
            # A tensor: no host-device sync inside step (the logger averages it).
            self.extras["log"]["Metrics/physics_divergence"] = diverged.sum().float()
        self.metrics_manager.compute()

        resetting = False
        if self.cfg.auto_reset:
            reset_ids = mark_checked(self.reset_buf.nonzero().flatten())  # valid by making
            resetting = len(reset_ids) > 0
            if resetting:
                # The terminal step's action, reward and done flags, before the reset clears them.
                self.recorder_manager.record_pre_reset(reset_ids)
                self._reset_idx(reset_ids)
        else:
            self.awaiting_reset |= self.reset_buf
        self.command_manager.compute(dt=self.step_dt)
        self.event_manager.apply("step", dt=self.step_dt)
        self.event_manager.apply("interval", dt=self.step_dt)
        self.obs_buf = self.observation_manager.compute(update_history=True)
        self.extras["log"]["Metrics/nonfinite_observations"] = (
            self.observation_manager.nonfinite.float()
        )
        if not self.action_manager.host_checks:
            self.extras["log"]["Metrics/nonfinite_actions"] = self.action_manager.nonfinite.float()
        if resetting:
            self.recorder_manager.record_post_reset(reset_ids)
        self.recorder_manager.record_post_step()
        if self.cfg.is_finite_horizon:
            terminated, truncated = self.reset_buf.clone(), torch.zeros_like(self.reset_buf)
        else:
            terminated, truncated = self.reset_terminated, self.reset_time_outs
        return self.obs_buf, self.reward_buf, terminated, truncated, self.extras

    def _reset_idx(self, env_ids: torch.Tensor) -> None:
        """Reset envs: curriculum, physics state to defaults, reset events, manager resets.
        Everything every manager logs is merged into `extras["log"]`, none of it dropped."""
        self.curriculum_manager.compute(env_ids)
        self.sim.reset(env_ids, forward=False)
        self.scene.reset(env_ids)
        self.event_manager.apply("reset", env_ids)
        if self.cfg.sim.check_divergence:
            # Before the forward: C MuJoCo's forward already auto-resets a world whose state is
            # invalid (NaN, |qvel| > 1e10), silently. Such a reset counts as a divergence of the
            # world's next step.
            self.sim.flag_invalid_state(env_ids)
        self.sim.forward(env_ids)
        log = self.extras.setdefault("log", {})
        for manager in (
            self.observation_manager,
            self.action_manager,
            self.reward_manager,
            self.curriculum_manager,
            self.command_manager,
            self.event_manager,
            self.termination_manager,
            self.metrics_manager,
        ):
            log.update(manager.reset(env_ids))
        self.episode_length_buf[env_ids] = 0

    # -- deployment -----------------------------------------------------------------------------------
    def deployment_metadata(
        self,
        task_id: str = "",
        actor_group: str = "actor",
        clip_actions: float | None = None,
        image_groups: tuple[str, ...] = (),
        joint_vel_limit: float | Sequence[float] | Mapping[str, float] | None = None,
    ) -> DeploymentMetadata:
        """What a policy trained on this env needs on a robot, in the policy file's schema
        (`mjlab.deploy.metadata.DeploymentMetadata`): `mjlab.envs.deployment.deployment_metadata`
        (the arguments and what is recorded are documented there).

        Raises:
            mjlab.deploy.metadata.UnsupportedTermError (a ValueError): something the robot-side
                runtime cannot reproduce exactly; the message names the term and the fix.
        """
        return deployment_metadata(
            self,
            task_id=task_id,
            actor_group=actor_group,
            clip_actions=clip_actions,
            image_groups=image_groups,
            joint_vel_limit=joint_vel_limit,
        )

    # -- rendering ------------------------------------------------------------------------------------
    def render(self, env_id: int = 0) -> np.ndarray | None:
        """(height, width, 3) uint8 frame of env `env_id` with MuJoCo's renderer.

        Raises:
            mjlab.deploy.headless.HeadlessGLError (a RuntimeError): MuJoCo has no OpenGL
                context (headless without MUJOCO_GL set before mujoco was imported; `play
                --video` chooses a backend itself).
        """
        if self.render_mode != "rgb_array":
            return None
        import mujoco

        view = self.cfg.viewer
        model = self.sim.get_model(env_id)
        data = self.sim.get_data(env_id)
        if self._renderer is None:
            # The offscreen buffer must hold the frame (MuJoCo's default is 640 x 480).
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, view.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, view.height)
            try:
                self._renderer = mujoco.Renderer(model, height=view.height, width=view.width)
            except Exception as error:
                converted = renderer_error(error)
                if converted is error:
                    raise
                raise converted from error
            self._camera = mujoco.MjvCamera()
        if view.camera is not None:
            self._renderer.update_scene(data, camera=view.camera)
        else:
            c = self._camera
            c.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            c.trackbodyid = view.body_id
            c.distance = view.distance
            c.elevation = view.elevation
            c.azimuth = view.azimuth
            self._renderer.update_scene(data, camera=c)
        return self._renderer.render()

    def close(self) -> None:
        """Free the renderers (`render`'s and the scene's camera sensors'), close the recorder
        terms (`RecorderTerm.close`) and issue NaN warnings still on their way from the GPU."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        for sensor in self.scene.sensors.values():
            sensor.close()
        self.recorder_manager.close()
        self.observation_manager.flush_warnings()
