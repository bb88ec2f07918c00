"""Integrity of exported ONNX files: a sha256 digest of the file's own bytes, in its metadata.

`mjlab.export.export_policy` adds the `metadata_props` entry `DIGEST_KEY` with 64 zeros as its
value, serializes the model, hashes those bytes and writes the hex digest over the zeros (same
length: nothing else in the file moves). `verify_onnx_bytes` undoes that substitution and hashes
again, so any flipped bit anywhere in the file (a weight, the graph, the metadata) is found
before onnxruntime runs it. Standard library only: the robot side needs no `onnx` package.

A file edited on purpose after export (a doc string, metadata, an ONNX simplifier pass) no longer
matches its digest either; `seal_onnx(path)` writes a fresh digest into such a file after you
have checked the edit.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import zipfile

DIGEST_KEY = "mjlab.sha256"
"""ONNX `metadata_props` key of the file's digest (hex sha256, see the module docstring)."""
_PLACEHOLDER = b"0" * 64
# The serialized StringStringEntryProto: field 1 (key), then field 2 (value) of 64 bytes.
_ENTRY = b"\x0a" + bytes([len(DIGEST_KEY)]) + DIGEST_KEY.encode() + b"\x12\x40"


class OnnxIntegrityError(ValueError):
    """An ONNX file whose bytes do not match the digest written at export (damaged, or edited
    after export without `seal_onnx`)."""


def placeholder_digest() -> str:
    """The value to store under `DIGEST_KEY` before serializing (`seal_onnx_bytes` fills it)."""
    return _PLACEHOLDER.decode()


def seal_onnx_bytes(data: bytes) -> bytes:
    """Write the sha256 of `data` (a serialized model holding the placeholder digest entry)
    over the placeholder.

    Raises:
        ValueError: `data` does not hold exactly one placeholder entry.
    """
    at = data.find(_ENTRY + _PLACEHOLDER)
    if at < 0 or data.find(_ENTRY, at + 1) >= 0:
        raise ValueError(f"The model must hold one '{DIGEST_KEY}' placeholder entry to seal.")
    digest = hashlib.sha256(data).hexdigest().encode()
    start = at + len(_ENTRY)
    return data[:start] + digest + data[start + 64 :]


def verify_onnx_bytes(data: bytes, path: str | os.PathLike) -> bool:
    """Check a sealed ONNX file's digest.

    Args:
        data: the file's bytes.
        path: the file, for messages.

    Returns:
        True: the digest matches; False: the file has no digest (exported before mjlab-export
        wrote one, or by another tool): nothing to check.

    Raises:
        OnnxIntegrityError (a ValueError): the bytes do not match the digest (the file changed
            since export: damaged by bit rot or an incomplete copy, or edited), naming the file
            and both fixes (copy or export again; `seal_onnx` for a deliberate edit).
    """
    at = data.rfind(_ENTRY)
    if at < 0:
        return False
    start = at + len(_ENTRY)
    stored = data[start : start + 64]
    actual = hashlib.sha256(data[:start] + _PLACEHOLDER + data[start + 64 :]).hexdigest()
    if stored.decode("ascii", "replace") != actual:
        raise OnnxIntegrityError(
            f"{path} changed since export (damaged, or edited after export): its bytes do not "
            "match the sha256 written at export. If it is damaged, copy or export it again; if "
            "you edited it on purpose, re-seal it with "
            "mjlab.deploy.integrity.seal_onnx(path)."
        )
    return True


def seal_onnx(path: str | os.PathLike) -> Path:
    """Write a fresh digest into an ONNX file, in place, so that it loads again after a
    deliberate edit (a changed doc string or metadata, an ONNX simplifier pass).

    The digest then vouches for the edited bytes: check the edited model (e.g. with
    `mjlab.export.check_onnx_parity`) before sealing it. A file without a digest entry gets one
    (appended as a `metadata_props` entry; protobuf merges it into the model). The file is
    replaced atomically: a crash leaves the old file or the sealed one.

    Args:
        path: the `.onnx` file.

    Returns:
        `path` as a `Path`.

    Raises:
        FileNotFoundError: no file at `path`.
        ValueError: the file holds more than one digest entry.
    """
    path = Path(path)
    data = path.read_bytes()
    at = data.find(_ENTRY)
    if at < 0:
        entry = _ENTRY + _PLACEHOLDER
        # ModelProto field 14 (metadata_props), length-delimited: tag 0x72, then the length.
        data = data + b"\x72" + bytes([len(entry)]) + entry
    elif data.find(_ENTRY, at + 1) >= 0:
        raise ValueError(f"{path} holds more than one '{DIGEST_KEY}' entry; cannot seal it.")
    else:
        start = at + len(_ENTRY)
        data = data[:start] + _PLACEHOLDER + data[start + 64 :]
    sealed = seal_onnx_bytes(data)
    scratch = path.with_name(f".{path.name}.sealing")
    scratch.write_bytes(sealed)
    os.replace(scratch, path)
    return path


def verify_zip_archive(
    path: str | os.PathLike,
    *,
    what: str,
    error: type[Exception] = ValueError,
    hint: str = "copy it again",
) -> Path:
    """Check that `path` is an undamaged zip archive (a `.npz` file, a `torch.save` file): every
    entry is read in full and compared with its stored CRC-32. Nothing is unpickled.

    An entry whose stored CRC-32 is 0 while its data is not empty is read but not compared: only
    a writer that skipped the checksum stores that (`torch.save` with torch >= 2.6's
    `torch.utils.serialization.config.save.compute_crc32 = False`), and its readers accept it.
    Such an entry is still checked for truncation and decompression errors.

    Args:
        path: the file.
        what: what the file should be, for messages (e.g. ".npz motion file", "checkpoint").
        error: the exception type to raise; it is called with the message alone.
        hint: the fix, appended to every message (e.g. "copy it again").

    Returns:
        `path` as a `Path`.

    Raises:
        `error` (ValueError by default), naming the file: not a zip archive (its first bytes are
            shown), truncated (no zip directory), or damaged (the failing entry is named).
    """
    import zipfile
    import zlib

    path = Path(path)
    fix = f"; {hint}." if hint else "."
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as handle:
            head = handle.read(12)
        if head.startswith(b"PK"):
            raise error(
                f"{path} is a truncated or damaged {what} (its zip directory is missing){fix}"
            )
        raise error(f"{path} is not a {what} (a zip archive; it starts with {head!r}){fix}")
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if _entry_crc_mismatch(archive, info):
                    raise error(
                        f"{path} is damaged: its entry '{info.filename}' does not match its "
                        f"CRC-32 (bit rot or an incomplete copy){fix}"
                    )
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as err:
        if isinstance(err, error):
            raise
        raise error(f"{path} is a damaged {what} ({err}){fix}") from None
    return path


def _entry_crc_mismatch(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """Read one entry in full; True when its data does not match a stored (nonzero) CRC-32."""
    import zipfile

    try:
        with archive.open(info) as entry:
            while entry.read(1 << 20):
                pass
    except zipfile.BadZipFile as err:
        # zipfile compares the CRC only once the whole entry is read, so this message means
        # the data was complete; a stored 0 over nonempty data is "no checksum", not damage.
        if str(err).startswith("Bad CRC-32"):
            return not (info.CRC == 0 and info.file_size > 0)
        raise
    return False
