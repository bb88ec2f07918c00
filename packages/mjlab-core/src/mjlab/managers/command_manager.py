"""Command manager: goal generators (e.g. base velocity) resampled on a timer."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ClassTermManager
from mjlab.managers.manager_term_config import CommandTermCfg
from mjlab.utils.env_ids import mark_checked, resolve_env_ids
from mjlab.utils.math import sample_duration_steps


class CommandTerm:
    """Base of command generators.

    Subclasses implement `command` ((num_envs, dim) tensor), `_resample(env_ids)`,
    `_update_command()` (every step) and `_update_metrics()` (accumulate tracking errors into
    `self.metrics`, (num_envs,) tensors logged on reset; `_accumulate_episode_mean` keeps a
    metric the mean over the episode's steps).

    Resampling timers count whole env steps, drawn uniformly within
    `cfg.resampling_time_range` (`mjlab.utils.math.sample_duration_steps`). A reset draws a new command and timer,
    and the step in which an env was reset does not count, so an env reset inside `step` and
    one reset by `reset()` hold their first command equally long.
    """

    components: tuple[str, ...] = ()
    """Names of the command vector's values in order (a deployment reads them; empty: unnamed)."""
    _snapshot_exclude = ("_held", "_held_value", "debug_vis")  # a viewer's settings: not state

    def __init__(self, cfg: CommandTermCfg, env):
        self.cfg = cfg
        self.env = env
        self.num_envs = env.num_envs
        self.device = env.device
        self.metrics: dict[str, torch.Tensor] = {}
        self.steps_left = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        """(num_envs,) int64 env steps until each env's command is resampled."""
        self.command_counter = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self.metric_steps = torch.zeros(self.num_envs, device=self.device)
        """(num_envs,) float32 env steps of this episode whose metrics were accumulated."""
        self._held: torch.Tensor | None = None  # (num_envs,) bool, while any env is held
        self._held_value: torch.Tensor | None = None  # (num_envs, dim)
        self.debug_vis: bool = bool(getattr(cfg, "debug_vis", False))
        """Whether a viewer should draw this command (`CommandTermCfg.debug_vis`; see
        `set_debug_vis`)."""

    @property
    def has_debug_vis_implementation(self) -> bool:
        """Whether this term can draw itself: it overrides `_debug_vis_impl`."""
        return type(self)._debug_vis_impl is not CommandTerm._debug_vis_impl

    def set_debug_vis(self, debug_vis: bool) -> bool:
        """Switch the drawing on or off. Returns False (and changes nothing) for a term that
        cannot draw itself."""
        if not self.has_debug_vis_implementation:
            return False
        self.debug_vis = bool(debug_vis)
        return True

    def debug_vis_callback(self, scene) -> None:
        """Draw the command into a viewer's `mujoco.MjvScene`, when `debug_vis` is on."""
        if self.debug_vis and self.has_debug_vis_implementation:
            self._debug_vis_impl(scene)

    def _debug_vis_impl(self, scene) -> None:
        """Subclasses that can draw their command add geoms to `scene` here."""

    @property
    def command(self) -> torch.Tensor:
        raise NotImplementedError

    @property
    def time_left(self) -> torch.Tensor:
        """(num_envs,) time until each env's command is resampled, s (`steps_left * step_dt`):
        a new tensor, so writing into it changes nothing; write `steps_left` instead."""
        return self.steps_left.to(torch.float32) * self.env.step_dt

    def resample(self, env_ids: torch.Tensor) -> None:
        """Draw new commands and resampling timers for `env_ids`."""
        if len(env_ids) == 0:
            return
        self.steps_left[env_ids] = sample_duration_steps(
            self.cfg.resampling_time_range,
            self.env.step_dt,
            len(env_ids),
            self.device,
            self.env.rng,
        )
        self.command_counter[env_ids] += 1
        self._resample(env_ids)

    def compute(self, dt: float) -> None:
        """One env step: metrics, timers (one step; `dt` is accepted for Isaac Lab's
        signature), resampling of the commands that are due, then `_update_command`."""
        self.metric_steps += 1
        self._update_metrics()
        # An env reset in this step (episode length 0) already drew its command and timer.
        self.steps_left -= self.env.episode_length_buf.clamp(max=1)  # 1, or 0 just reset
        # Valid by construction: marked, so no range check (a host-device sync) below.
        self.resample(mark_checked((self.steps_left <= 0).nonzero().flatten()))
        self._update_command()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        log = {}
        for name, value in self.metrics.items():
            log[name] = value[env_ids].mean()  # a tensor: no host sync inside step
            value[env_ids] = 0.0
        self.metric_steps[env_ids] = 0
        self.command_counter[env_ids] = 0
        self.resample(env_ids)
        return log

    def hold(self, env_ids: torch.Tensor | list[int], value: torch.Tensor | list[float]) -> None:
        """Hold `value` as the command of `env_ids` until `release`: resampling and the term's
        per-step update (e.g. heading control) no longer change it there (a viewer's command
        sliders, scripted evaluations). The command manager applies it after every compute and
        reset, so observations and rewards see it from the next step on (and `command` at once).
        Holding needs a term whose `command` returns the tensor it keeps (as every built-in
        term's does), since the held values are written into it.

        Args:
            env_ids: the envs to hold.
            value: (dim,) or (len(env_ids), dim), in the command's units.

        Raises:
            ValueError: `value` does not have the command's dim values.
            TypeError: the term's `command` returns a new tensor on each call.
        """
        command = self.command
        if command.data_ptr() != self.command.data_ptr():
            raise TypeError(
                f"{type(self).__name__}.command returns a new tensor on each call, so a held "
                "value could not be written into it; return the stored command tensor."
            )
        ids = torch.as_tensor(env_ids, dtype=torch.long, device=self.device).reshape(-1)
        value = torch.as_tensor(value, dtype=command.dtype, device=self.device)
        if value.shape[-1:] != command.shape[-1:]:
            raise ValueError(
                f"{type(self).__name__}.hold: the command has {command.shape[-1]} values "
                f"{self.components or ''}, got a value of shape {tuple(value.shape)}."
            )
        if self._held is None or self._held_value is None:
            self._held = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
            self._held_value = torch.zeros_like(command)
        self._held[ids] = True
        self._held_value[ids] = value
        self._apply_hold()

    def release(self, env_ids: torch.Tensor | list[int] | None = None) -> None:
        """Let `env_ids` (None: every held env) follow the term's own commands again: they draw
        a new command and resampling time at once."""
        if self._held is None:
            return
        if env_ids is None:
            ids = mark_checked(self._held.nonzero().flatten())
            self._held, self._held_value = None, None
        else:
            ids = torch.as_tensor(env_ids, dtype=torch.long, device=self.device).reshape(-1)
            self._held[ids] = False
        self.resample(ids)
        self._update_command()
        self._apply_hold()

    def _apply_hold(self) -> None:
        """Write the held values into `command` (no-op while nothing is held)."""
        if self._held is not None and self._held_value is not None:
            command = self.command
            command.copy_(torch.where(self._held[:, None], self._held_value, command))

    def _resample(self, env_ids: torch.Tensor) -> None:
        raise NotImplementedError

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        pass

    def _accumulate_episode_mean(self, name: str, value: torch.Tensor) -> None:
        """Fold this step's (num_envs,) `value` into `metrics[name]`, the running mean over the
        episode's steps so far (call from `_update_metrics`)."""
        mean = self.metrics[name]
        mean += (value - mean) / self.metric_steps


class CommandManager(ClassTermManager):
    """Holds the command terms; `get_command(name)` returns (num_envs, dim)."""

    kind = "Command term"
    terms: dict[str, CommandTerm]

    def get_command(self, name: str) -> torch.Tensor:
        if name not in self.terms:
            raise KeyError(f"No command '{name}'. Commands: {list(self.terms)}.")
        return self.terms[name].command

    def compute(self, dt: float) -> None:
        for term in self.terms.values():
            term.compute(dt)
            term._apply_hold()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        log = {}
        for name, term in self.terms.items():
            for key, value in term.reset(env_ids).items():
                log[f"Metrics/{name}/{key}"] = value
            term._apply_hold()
        return log
