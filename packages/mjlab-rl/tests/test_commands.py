"""The train / play / list-envs commands, run as a user runs them."""

import os
import subprocess
import sys

import numpy as np
import pytest

from mjlab.deploy import OnnxPolicy


def _run(args, cwd, timeout=600):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", WANDB_MODE="offline")
    result = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


@pytest.mark.slow
def test_train_go1_flat_two_iterations_writes_checkpoint_params_and_onnx(tmp_path):
    out = _run(
        [
            "mjlab.rl.scripts.train",
            "Mjlab-Velocity-Flat-Unitree-Go1",
            "--env.scene.num-envs",
            "16",
            "--agent.max-iterations",
            "2",
            "--agent.logger",
            "tensorboard",
        ],
        cwd=tmp_path,
    )
    # Case C08: no GPU, no flags: the device is chosen and printed.
    assert "device: cpu (auto" in out
    runs = list((tmp_path / "logs" / "rsl_rl" / "go1_velocity").iterdir())
    assert len(runs) == 1
    files = {p.name for p in runs[0].iterdir()}
    assert {"model_0.pt", "model_1.pt", "policy.onnx", "params"} <= files
    assert (runs[0] / "params" / "env.yaml").read_text().startswith("decimation: 4")
    policy = OnnxPolicy(runs[0] / "policy.onnx")
    assert policy.metadata.task_id == "Mjlab-Velocity-Flat-Unitree-Go1"
    assert policy.joint_names[:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]
    assert policy(np.zeros(policy.obs_dim, dtype=np.float32)).shape == (12,)


def test_list_envs_prints_the_task_table(tmp_path):
    out = _run(["mjlab.rl.scripts.list_envs"], cwd=tmp_path)
    assert "Mjlab-Velocity-Rough-Unitree-G1" in out and "unitree_go1/go1" in out


def test_train_without_a_task_lists_tasks(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mjlab.rl.scripts.train"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "Mjlab-Cartpole-Balance" in result.stdout


@pytest.mark.slow
def test_play_renders_an_mp4_with_the_expected_frames(tmp_path):
    video = tmp_path / "play.mp4"
    _run(
        [
            "mjlab.rl.scripts.play",
            "Mjlab-Cartpole-Balance",
            "--agent",
            "random",
            "--steps",
            "30",
            "--video",
            "--video-file",
            str(video),
        ],
        cwd=tmp_path,
    )
    import imageio.v3 as iio

    frames = iio.imread(video)
    assert frames.shape[0] == 30
    assert frames.std() > 5.0, "the video is not blank"
