"""Zip archive checks (`verify_zip_archive`) and re-sealing of edited ONNX files."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from mjlab.deploy.integrity import verify_zip_archive


def _flip_in_largest_entry(path) -> str:
    with zipfile.ZipFile(path) as archive:
        info = max(archive.infolist(), key=lambda i: i.file_size)
    assert info.compress_type == zipfile.ZIP_STORED
    data = bytearray(path.read_bytes())
    # The local header is 30 bytes plus the name and extra field; the data follows.
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    at = info.header_offset + 30 + name_len + extra_len + info.file_size // 2
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    return info.filename


def test_torch_checkpoint_saved_without_crc32_is_accepted(tmp_path):
    torch = pytest.importorskip("torch")
    config = pytest.importorskip("torch.utils.serialization").config
    path = tmp_path / "model.pt"
    before = config.save.compute_crc32
    config.save.compute_crc32 = False
    try:
        torch.save({"w": torch.arange(1000.0)}, path)
    finally:
        config.save.compute_crc32 = before
    with zipfile.ZipFile(path) as archive:
        assert all(i.CRC == 0 for i in archive.infolist() if i.file_size > 0)
    assert torch.load(path, weights_only=True)["w"].shape == (1000,)
    assert verify_zip_archive(path, what="checkpoint") == path


def test_flipped_byte_in_checked_entry_is_refused_naming_the_entry(tmp_path):
    path = tmp_path / "motion.npz"
    np.savez(path, joint_pos=np.arange(4000.0))
    name = _flip_in_largest_entry(path)

    class CheckpointError(RuntimeError):
        pass

    with pytest.raises(CheckpointError, match="CRC-32") as err:
        verify_zip_archive(path, what="checkpoint", error=CheckpointError, hint="train again")
    assert str(path) in str(err.value) and name in str(err.value)
    assert str(err.value).endswith("; train again.")


def test_not_a_zip_and_truncated_zip_are_refused(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match=r"is not a \.npz motion file"):
        verify_zip_archive(text, what=".npz motion file")
    cut = tmp_path / "cut.npz"
    np.savez(cut, a=np.arange(4000.0))
    cut.write_bytes(cut.read_bytes()[:-200])
    with pytest.raises(ValueError, match="truncated or damaged"):
        verify_zip_archive(cut, what=".npz motion file")
