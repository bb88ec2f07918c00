"""Input files named on a command line, checked before any work starts. Standard library only."""

from __future__ import annotations

import os
from pathlib import Path


def require_readable_file(path: str | os.PathLike, option: str, hint: str = "") -> Path:
    """`path` as a Path when it names a readable regular file; otherwise a one-line error that
    names the option, the path and the fix.

    Commands call it first, so a typo in a path is reported in a second, before an env, a model
    or a renderer is built. Only existence and readability are checked here; what the file holds
    is checked by whatever loads it.

    Args:
        path: the file the user gave.
        option: how the user gave it, e.g. "--checkpoint-file" or "policy".
        hint: what a right value looks like, e.g. "a model_<it>.pt checkpoint from a run folder".

    Raises:
        FileNotFoundError: nothing exists at `path`.
        ValueError: `path` is a folder, or the file cannot be opened for reading.
    """
    file = Path(path).expanduser()
    tail = f"; give {hint}" if hint else ""
    if not file.exists():
        where = "" if file.is_absolute() else f" (relative to {Path.cwd()})"
        raise FileNotFoundError(f"{option} {str(path)!r}: no such file{where}{tail}.")
    if file.is_dir():
        raise ValueError(f"{option} {str(path)!r} is a folder, not a file{tail}.")
    try:
        with file.open("rb") as stream:
            stream.read(1)
    except OSError as err:
        raise ValueError(
            f"{option} {str(path)!r} cannot be read ({err.strerror or err}); check its "
            "permissions (chmod u+r) or copy it somewhere readable."
        ) from None
    return file
