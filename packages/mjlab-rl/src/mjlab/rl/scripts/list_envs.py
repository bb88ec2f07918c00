"""`list-envs [KEYWORD]`: a table of the registered tasks (those whose id contains KEYWORD)."""

from __future__ import annotations

import sys

COLUMNS = ("task", "model", "num_envs", "step_dt (s)", "episode (s)")


def task_rows(keyword: str = "") -> list[tuple[str, ...]]:
    """One row per registered task whose id contains `keyword` (any case), as `COLUMNS`."""
    from mjlab.tasks import list_tasks, load_env_cfg

    rows = []
    for task_id in list_tasks():
        if keyword.lower() not in task_id.lower():
            continue
        cfg = load_env_cfg(task_id)
        step_dt = cfg.sim.mujoco.timestep * cfg.decimation
        models = [
            "/".join(e.menagerie) if e.menagerie else name for name, e in cfg.scene.entities.items()
        ]
        rows.append(
            (
                task_id,
                ", ".join(models),
                str(cfg.scene.num_envs),
                f"{step_dt:g}",
                f"{cfg.episode_length_s:g}",
            )
        )
    return rows


def plain_table(rows: list[tuple[str, ...]]) -> str:
    """`rows` under `COLUMNS` as aligned plain text, nothing cut (for a pipe or a file)."""
    widths = [max(len(r[i]) for r in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [COLUMNS, *rows]
    )


def main(argv: list[str] | None = None) -> None:
    keyword = ((sys.argv[1:] if argv is None else argv) or [""])[0]
    rows = task_rows(keyword)
    if not sys.stdout.isatty():
        print(plain_table(rows))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="mjlab tasks")
    for i, column in enumerate(COLUMNS):
        table.add_column(column, no_wrap=True, min_width=34 if i == 0 else None)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


if __name__ == "__main__":
    main()
