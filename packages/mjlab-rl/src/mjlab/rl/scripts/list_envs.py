"""`list-envs`: a table of the registered tasks."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    from mjlab.tasks import list_tasks, load_env_cfg

    keyword = (sys.argv[1:] if argv is None else argv) or [""]
    table = Table(title="mjlab tasks")
    table.add_column("task", no_wrap=True, min_width=34)
    for column in ("model", "num_envs", "step_dt (s)", "episode (s)"):
        table.add_column(column, no_wrap=True)
    for task_id in list_tasks():
        if keyword[0].lower() not in task_id.lower():
            continue
        cfg = load_env_cfg(task_id)
        step_dt = cfg.sim.mujoco.timestep * cfg.decimation
        models = [
            "/".join(e.menagerie) if e.menagerie else name for name, e in cfg.scene.entities.items()
        ]
        table.add_row(
            task_id,
            ", ".join(models),
            str(cfg.scene.num_envs),
            f"{step_dt:g}",
            f"{cfg.episode_length_s:g}",
        )
    Console(width=max(100, Console().width)).print(table)


if __name__ == "__main__":
    main()
