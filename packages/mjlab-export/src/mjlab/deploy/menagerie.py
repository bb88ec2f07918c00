"""Robot models from mujoco-menagerie by (robot, entry): the one loader that mjlab-core's tasks
(`mjlab.tasks.robots.menagerie_spec`) and the robot side's `MujocoRobot` both use.

mujoco-menagerie downloads a robot into its cache on first use, or reads a local copy laid out
as `<robot>/<entry>.xml` under `MENAGERIE_ROOT` (its own environment variable, honoured by
`mujoco_menagerie.get`). mujoco and mujoco-menagerie (mjlab-export[sim]) are imported when a
model is loaded, not with this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mujoco


class RobotModelError(FileNotFoundError, RuntimeError):
    """A robot model could not be loaded from mujoco-menagerie (offline, not downloaded, an
    unknown robot or entry); the message says how to use a local copy (`MENAGERIE_ROOT`).

    A FileNotFoundError (what `MujocoRobot.load_spec` has always raised) and a RuntimeError
    (what `mjlab.tasks.robots.RobotModelError` has always been).
    """


def load_error_message(robot: str, entry: str, error: Exception) -> str:
    """The one text for a Menagerie model that did not load.

    Args:
        robot: the Menagerie robot, e.g. "unitree_go1".
        entry: its entry (MJCF file stem), e.g. "go1".
        error: mujoco-menagerie's error; its type and first line are quoted.
    """
    cause = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return (
        f"Could not load the robot model {robot}/{entry} from mujoco-menagerie "
        f"({type(error).__name__}: {cause}). Offline, point MENAGERIE_ROOT at a local "
        f"copy laid out as <robot>/<entry>.xml (here {robot}/{entry}.xml)."
    )


def menagerie_spec(robot: str, entry: str) -> mujoco.MjSpec:
    """A fresh, uncompiled MjSpec of Menagerie's `robot`/`entry` (downloaded on first use,
    or read from `MENAGERIE_ROOT`).

    Args:
        robot: the Menagerie robot, e.g. "unitree_go1".
        entry: its entry (MJCF file stem), e.g. "go1" or "scene_mjx".

    Raises:
        RobotModelError: mujoco-menagerie could not find, download or load the model; the
            message (`load_error_message`) says how to use a local copy.
        ImportError: mujoco-menagerie is not installed (`pip install mjlab-export[sim]`).
    """
    import mujoco_menagerie

    try:
        return mujoco_menagerie.get(robot).spec(entry)
    except mujoco_menagerie.MenagerieError as error:
        raise RobotModelError(load_error_message(robot, entry, error)) from error
