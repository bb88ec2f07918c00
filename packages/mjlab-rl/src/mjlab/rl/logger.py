"""`MjlabLogger`: rsl-rl-lib's `Logger` with mjlab's console: one progress line per iteration."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import statistics
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.utils.logger import Logger


@dataclasses.dataclass(frozen=True)
class IterationSummary:
    """What one PPO iteration's progress line shows."""

    iteration: int
    """The iteration just finished (rsl-rl's `it`, counted from 0)."""
    start: int
    """The first iteration of this `learn` call."""
    total: int
    """The iteration this `learn` call stops before."""
    steps_per_second: float
    """Env steps of all envs (all GPUs) per second of collection and update."""
    mean_reward: float | None
    """Mean return of the last (up to 100) finished episodes; None before the first."""
    mean_length: float | None
    """Mean length of those episodes, in env steps; None before the first."""
    terms: dict[str, float]
    """Each reward term's mean episode value ("Episode_Reward/<term>" of the env's extras)."""
    collect_s: float
    """Seconds spent collecting the rollout."""
    update_s: float
    """Seconds spent in the PPO update."""


class MjlabLogger(Logger):
    """rsl-rl's `Logger`, quiet on the console unless `verbose`, with a hook per iteration.

    What reaches tensorboard or wandb is unchanged. Unless `verbose`, rsl-rl's console output
    (the git-diff note when the writer starts, its ~25-line block per iteration) is swallowed
    and `on_iteration` gets an `IterationSummary` instead (the runner prints one progress line
    from it). rsl-rl's `OnPolicyRunner` builds a plain `Logger` in its constructor with no way
    to choose the class, so `MjlabOnPolicyRunner` builds this one with the same arguments right
    after and uses it instead.

    Args:
        verbose: print rsl-rl's own output as well.
        on_iteration: called after each logged iteration on the process that logs (rank 0).
        **logger_args: rsl-rl's `Logger` arguments (log_dir, cfg, env_cfg, num_envs,
            is_distributed, gpu_world_size, gpu_global_rank, device).
    """

    def __init__(
        self,
        *,
        verbose: bool = False,
        on_iteration: Callable[[IterationSummary], None] | None = None,
        **logger_args: Any,
    ) -> None:
        super().__init__(**logger_args)
        self.verbose = verbose
        self.on_iteration = on_iteration

    def init_logging_writer(self) -> None:
        """rsl-rl's writer start (tensorboard or wandb, git diff), quiet unless verbose."""
        with _stdout_hidden(not self.verbose):
            super().init_logging_writer()

    def log(
        self,
        it: int,
        start_it: int,
        total_it: int,
        collect_time: float,
        learn_time: float,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        """rsl-rl's `log` (its writer calls as before; its console block only when verbose),
        then `on_iteration` with the iteration's summary. Ranks > 0 (no writer) log nothing."""
        if self.writer is None:
            return super().log(it, start_it, total_it, collect_time, learn_time, *args, **kwargs)
        # Read before rsl-rl's log, which clears the episode extras.
        terms = self._reward_terms()
        rewards, lengths = self.rewbuffer, self.lenbuffer
        steps = self.cfg["num_steps_per_env"] * self.num_envs * self.gpu_world_size
        with _stdout_hidden(not self.verbose):
            super().log(it, start_it, total_it, collect_time, learn_time, *args, **kwargs)
        if self.on_iteration is not None:
            self.on_iteration(
                IterationSummary(
                    iteration=it,
                    start=start_it,
                    total=total_it,
                    steps_per_second=steps / max(collect_time + learn_time, 1e-9),
                    mean_reward=statistics.mean(rewards) if len(rewards) else None,
                    mean_length=statistics.mean(lengths) if len(lengths) else None,
                    terms=terms,
                    collect_s=collect_time,
                    update_s=learn_time,
                )
            )
        return None

    def _reward_terms(self) -> dict[str, float]:
        """Mean of each "Episode_Reward/<term>" over this iteration's episode extras."""
        terms = {}
        for key in dict.fromkeys(k for info in self.ep_extras for k in info):
            if key.startswith("Episode_Reward/"):
                values = [
                    torch.as_tensor(info[key], dtype=torch.float32).flatten().cpu()
                    for info in self.ep_extras
                    if key in info
                ]
                terms[key.split("/", 1)[1]] = float(torch.cat(values).mean())
        return terms


def _stdout_hidden(hide: bool) -> Any:
    """A context that swallows what is printed to stdout when `hide`, else does nothing."""
    return contextlib.redirect_stdout(io.StringIO()) if hide else contextlib.nullcontext()
