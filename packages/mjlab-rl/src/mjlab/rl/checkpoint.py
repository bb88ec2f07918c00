"""Integrity of checkpoint files, checked before anything reads their contents.

A checkpoint written by `torch.save` is a zip archive whose records (one per tensor storage,
plus the pickled structure) each carry a CRC-32. `torch.load` does not check them, so a file
with flipped bits inside a weight tensor loads as a policy with wrong weights. `verify_checkpoint`
reads every record and compares its CRC-32 before `torch.load` runs (a few ms per 10 MB).
Torch >= 2.6 can save without checksums (`torch.utils.serialization.config.save.compute_crc32 =
False`): its records store CRC-32 0, and those are read (a truncated one is still refused) but
not compared.

The check is `mjlab.deploy.integrity.verify_zip_archive` (no torch is imported): a command can
check its checkpoint before it imports torch or builds an environment.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

# Torch's pre-1.6 (non-zip) format starts with a pickle protocol-2 header.
_LEGACY_TORCH_MAGIC = b"\x80\x02"


class CheckpointError(ValueError):
    """A checkpoint file that is damaged, truncated or not a torch file; the message names it."""


class CheckpointMismatchError(CheckpointError, RuntimeError):
    """A checkpoint whose state dicts do not fit the runner's networks (another task's or another
    network size's); the message names the file and one mismatch. A RuntimeError too, as torch's
    own strict-load error was."""


def verify_checkpoint(path: str | os.PathLike) -> Path:
    """Check that `path` is an undamaged torch checkpoint: a zip archive whose every record
    matches its CRC-32. Files in torch's pre-1.6 format (no zip, no checksums) pass unchecked:
    `torch.load` alone can judge them.

    Args:
        path: the checkpoint file (`model_<k>.pt`).

    Returns:
        The path, as a `Path`.

    Raises:
        FileNotFoundError: no such file.
        CheckpointError (a ValueError): truncated, empty, damaged (a record whose bytes do not
            match its CRC-32 is named) or not a torch file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint file at {path}.")
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(2)
    if not zipfile.is_zipfile(path):
        if head == _LEGACY_TORCH_MAGIC:
            return path

        raise CheckpointError(
            f"{path} is not a valid checkpoint ({size} bytes: truncated, empty or not a torch "
            "file). Use another checkpoint, or copy this one again."
        )
    from mjlab.deploy.integrity import verify_zip_archive

    return verify_zip_archive(
        path,
        what=f"checkpoint ({size} bytes)",
        error=CheckpointError,
        hint="use another checkpoint, or copy this one again",
    )
