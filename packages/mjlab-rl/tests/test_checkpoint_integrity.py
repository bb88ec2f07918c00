"""Checkpoint files are checked (zip CRC-32 of every record) before anything is loaded."""

import struct
import zipfile
from pathlib import Path

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.rl.checkpoint import CheckpointError, verify_checkpoint
from mjlab.tasks import load_env_cfg, load_rl_cfg


def _runner(tmp_path=None):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    agent.num_steps_per_env = 8
    return MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path) if tmp_path else None)


def _flip_bytes_in_largest_tensor(path: Path, count: int = 400) -> str:
    """Invert `count` bytes inside the largest tensor record (bit rot in a weight), keeping the
    zip directory intact; returns the record's name."""
    with zipfile.ZipFile(path) as archive:
        info = max(
            (i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size
        )
    raw = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack(
        "<HH", raw[info.header_offset + 26 : info.header_offset + 30]
    )
    start = info.header_offset + 30 + name_len + extra_len
    n = min(count, info.compress_size)
    raw[start : start + n] = bytes(b ^ 0xFF for b in raw[start : start + n])
    path.write_bytes(bytes(raw))
    return info.filename


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ckpt")
    runner = _runner(folder)
    runner.save(str(folder / "model_0.pt"))
    return folder / "model_0.pt"


def test_damaged_checkpoint_is_refused_naming_the_file_and_the_record(saved, tmp_path):
    bad = tmp_path / "model_0.pt"
    bad.write_bytes(saved.read_bytes())
    record = _flip_bytes_in_largest_tensor(bad)
    torch.load(bad, weights_only=True)  # what used to happen: torch reads the garbage weights
    with pytest.raises(CheckpointError, match="CRC-32") as err:
        _runner().load(str(bad))
    assert str(bad) in str(err.value) and record in str(err.value)


def test_truncated_checkpoint_is_refused_naming_the_file(saved, tmp_path):
    short = tmp_path / "model_0.pt"
    short.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with pytest.raises(ValueError, match="not a valid checkpoint") as err:
        verify_checkpoint(short)
    assert str(short) in str(err.value)


def test_checkpoint_saved_without_checksums_loads(saved, tmp_path):
    serialization = pytest.importorskip("torch.utils.serialization")
    save_cfg = getattr(getattr(serialization, "config", None), "save", None)
    if save_cfg is None or not hasattr(save_cfg, "compute_crc32"):
        pytest.skip("this torch always writes checksums")
    state = torch.load(saved, weights_only=True)
    path = tmp_path / "model_0.pt"
    before = save_cfg.compute_crc32
    save_cfg.compute_crc32 = False
    try:
        torch.save(state, path)
    finally:
        save_cfg.compute_crc32 = before
    with zipfile.ZipFile(path) as archive:
        assert any(i.CRC == 0 and i.file_size for i in archive.infolist())
    assert verify_checkpoint(path) == path
    _runner().load(str(path))
    # Truncation is still found in such a file.
    short = tmp_path / "short.pt"
    short.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CheckpointError):
        verify_checkpoint(short)


def test_legacy_checkpoints_without_a_digest_still_load(tmp_path):
    # Case C01: checkpoints torch wrote long ago (its pre-1.6 non-zip format included).
    source = _runner()
    saved = source.alg.save()
    saved["iter"] = 7
    for new_format in (True, False):
        path = tmp_path / f"model_7_{new_format}.pt"
        torch.save(saved, path, _use_new_zipfile_serialization=new_format)
        assert verify_checkpoint(path) == path
        target = _runner()
        target.load(str(path))
        assert target.current_learning_iteration == 7


def test_play_with_a_damaged_checkpoint_is_one_line_before_the_env_is_built(
    saved, tmp_path, monkeypatch, capsys
):
    from mjlab.rl.scripts import play

    bad = tmp_path / "model_0.pt"
    bad.write_bytes(saved.read_bytes())
    _flip_bytes_in_largest_tensor(bad)
    built = []
    monkeypatch.setattr("mjlab.envs.ManagerBasedRlEnv.__init__", lambda *a, **k: built.append(1))
    with pytest.raises(SystemExit) as stop:
        play.main(["Mjlab-Cartpole-Balance", "--checkpoint-file", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("play: error: ") and str(bad) in err[0] and "CRC-32" in err[0]
    assert not built


def test_play_reads_a_checkpoints_checksums_once(saved, monkeypatch, capsys):
    # The early check (before the env is built) is the only one: a large checkpoint is not
    # read twice.
    from mjlab.rl import checkpoint
    from mjlab.rl.scripts import play

    calls = []
    real = checkpoint.verify_checkpoint
    monkeypatch.setattr(checkpoint, "verify_checkpoint", lambda p: calls.append(p) or real(p))
    play.main(["Mjlab-Cartpole-Balance", "--checkpoint-file", str(saved), "--steps", "2"])
    assert len(calls) == 1, calls


def test_a_checkpoint_of_another_network_is_refused_naming_the_file(saved):
    # Another task's (or network size's) checkpoint: torch's ~20-line size-mismatch report
    # becomes one ValueError naming the file and what to use instead.
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    agent.num_steps_per_env = 8
    agent.actor.hidden_dims = (16, 16)
    other = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent))
    with pytest.raises(ValueError, match="does not fit this task's networks") as err:
        other.load(str(saved), load_cfg={"actor": True})
    message = str(err.value)
    assert str(saved) in message and "Use a checkpoint of this task" in message
    assert len(message.splitlines()) == 1
