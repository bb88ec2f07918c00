"""Integrity of checkpoint files, checked before anything reads their contents.

A checkpoint written by `torch.save` is a zip archive whose records (one per tensor storage,
plus the pickled structure) each carry a CRC-32. `torch.load` does not check them, so a file
with flipped bits inside a weight tensor loads as a policy with wrong weights. `verify_checkpoint`
reads every record and compares its CRC-32 before `torch.load` runs (a few ms per 10 MB).
Torch >= 2.6 can save without checksums (`torch.utils.serialization.config.save.compute_crc32 =
False`): its records store CRC-32 0, and those are read (a truncated one is still refused) but
not compared.

Only the standard library is imported here: a command can check its checkpoint before it
imports torch or builds an environment.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

# Torch's pre-1.6 (non-zip) format starts with a pickle protocol-2 header.
_LEGACY_TORCH_MAGIC = b"\x80\x02"


class CheckpointError(ValueError):
    """A checkpoint file that is damaged, truncated or not a torch file; the message names it."""


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
    try:
        bad = _first_bad_record(path)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as err:
        raise CheckpointError(
            f"{path} is damaged ({size} bytes; {err}). Use another checkpoint, or copy this one "
            "again."
        ) from None
    if bad is not None:
        raise CheckpointError(
            f"{path} is damaged: its record '{bad}' does not match its CRC-32 (bit rot or an "
            "incomplete copy). Use another checkpoint, or copy this one again."
        )
    return path


def _first_bad_record(path: Path) -> str | None:
    """The name of the first record whose bytes do not match its stored CRC-32, else None.
    Records stored with CRC-32 0 (saved without checksums) are read but not compared.

    Raises:
        zipfile.BadZipFile, zlib.error, EOFError: a truncated or unreadable archive.
    """
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            try:
                with archive.open(info) as record:
                    while record.read(1 << 20):
                        pass
            except zipfile.BadZipFile as err:
                # zipfile compares CRC-32s only once a record is read to its end.
                if "CRC-32" not in str(err):
                    raise
                if info.CRC != 0:
                    return info.filename
    return None
