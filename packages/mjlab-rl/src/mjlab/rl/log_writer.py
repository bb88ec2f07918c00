"""wandb log writer that also applies the run's tags (rsl-rl-lib's own writer takes none)."""

from __future__ import annotations

from collections.abc import Sequence

from rsl_rl.utils.wandb_log_writer import WandbLogWriter


class MjlabWandbLogWriter(WandbLogWriter):
    """rsl-rl's `WandbLogWriter` plus `RslRlBaseRunnerCfg.wandb_tags`.

    Selected by `to_rsl_rl_train_cfg` when `logger="wandb"`; rsl-rl builds it from the
    `train_cfg["logger"]` dict when training starts. Offline mode, entity and credentials come
    from wandb's own environment variables (WANDB_MODE, WANDB_USERNAME, WANDB_API_KEY).

    Args:
        log_dir: the run folder; its name becomes the wandb run name.
        project_name: the wandb project.
        tags: tags added to the run.

    Raises:
        ModuleNotFoundError: wandb is not installed.
    """

    def __init__(self, log_dir: str, project_name: str, tags: Sequence[str] = ()) -> None:
        super().__init__(log_dir, project_name)
        if tags:
            import wandb

            wandb.run.tags = (*(wandb.run.tags or ()), *tags)
