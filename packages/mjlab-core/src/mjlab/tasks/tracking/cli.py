"""`mjlab-motion`: make and inspect reference motion files for the tracking tasks.

    mjlab-motion from-csv walk.csv -o walk.npz --fps 30 --output-fps 50
    mjlab-motion synthetic squat -o squat.npz
    mjlab-motion info squat.npz

A mistake (a missing file, a wrong column count, a bad quaternion, no fps) is one line on
stderr and exit status 2; `--debug` shows the traceback instead.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import tyro

from mjlab.tasks.tracking.motion import Motion
from mjlab.utils.config import Config


@dataclass
class FromCsv(Config):
    """Convert a retargeted CSV (per frame: root x y z, root quaternion, joint angles in model
    order) to a motion file, by forward kinematics on the robot model."""

    csv: tyro.conf.Positional[Path]
    """The CSV file."""
    output: Annotated[Path, tyro.conf.arg(aliases=("-o",))]
    """The motion file to write (.npz)."""
    fps: float | None = None
    """Frames per second of the CSV (required: a CSV does not record it; LAFAN1 retargets: 30)."""
    output_fps: float | None = 50.0
    """Resample to this rate; the tracking tasks step at 50 Hz. None keeps --fps."""
    quat_order: Literal["xyzw", "wxyz"] = "xyzw"
    """Order of the root quaternion's columns (LAFAN1 retargets: xyzw)."""
    robot: str = "unitree_g1/scene_mjx"
    """The robot model as <menagerie robot>/<entry>."""


@dataclass
class Synthetic(Config):
    """Write a synthetic clip made from the G1 model (labelled "synthetic" in the file)."""

    clip: tyro.conf.Positional[Literal["squat", "arm_swing"]]
    """The clip."""
    output: Annotated[Path, tyro.conf.arg(aliases=("-o",))]
    """The motion file to write (.npz)."""
    fps: float = 50.0
    """Frames per second."""
    depth: float | None = None
    """Amplitude, rad (None: the clip's default)."""


@dataclass
class Info(Config):
    """Print what a motion file holds."""

    motion: tyro.conf.Positional[Path]
    """The motion file."""


def describe(motion: Motion) -> str:
    """A few lines about a motion: source, frames, rate, joints, bodies, hash."""
    return "\n".join(
        [
            f"source: {motion.source or '(not recorded)'}",
            f"frames: {motion.num_frames} at {motion.fps:g} fps ({motion.duration_s:.2f} s)",
            f"joints: {len(motion.joint_names)} ({', '.join(motion.joint_names[:3])}, ...)",
            f"bodies: {len(motion.body_names)} ({', '.join(motion.body_names[:3])}, ...)",
            f"content hash: {motion.content_hash()}",
        ]
    )


def _model(robot: str):
    from mjlab.tasks.robots import menagerie_spec

    name, _, entry = robot.partition("/")
    if not name or not entry:
        raise ValueError(
            f"--robot must be <menagerie robot>/<entry>, e.g. unitree_g1/scene_mjx; got {robot!r}."
        )
    return menagerie_spec(name, entry).compile()


def _dispatch(args: list[str]) -> None:
    cmd = tyro.cli(
        Annotated[FromCsv, tyro.conf.subcommand("from-csv")]
        | Annotated[Synthetic, tyro.conf.subcommand("synthetic")]
        | Annotated[Info, tyro.conf.subcommand("info")],
        args=args,
        prog="mjlab-motion",
        description="Make and inspect reference motions for the tracking tasks (--debug: tracebacks).",
    )
    if isinstance(cmd, Info):
        print(describe(Motion.load(cmd.motion)))
        return
    if isinstance(cmd, FromCsv):
        from mjlab.tasks.tracking.motion import motion_from_csv

        motion = motion_from_csv(
            cmd.csv, _model(cmd.robot), cmd.fps, cmd.quat_order, cmd.output_fps
        )
    else:
        from mjlab.tasks.tracking.synthetic import g1_synthetic_motion

        motion = g1_synthetic_motion(cmd.clip, cmd.fps, cmd.depth)
    path = motion.save(cmd.output)
    print(f"wrote {path}\n{describe(motion)}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of `mjlab-motion`."""
    from mjlab.tasks.robots import RobotModelError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    try:
        _dispatch(args)
    except (FileNotFoundError, ValueError, RobotModelError) as err:
        if debug:
            raise
        print(f"mjlab-motion: error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
