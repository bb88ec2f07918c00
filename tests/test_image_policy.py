"""Image policies end to end: the Panda lift tasks seen through a camera build their rsl-rl CNN
actor, export to ONNX with the camera described (metadata v4), and the robot-side runtime,
fed the camera's raw frames and the raw state terms, reproduces the env's image observation
exactly and the torch actor's actions. Real MuJoCo rendering, rsl-rl, onnxruntime."""

import numpy as np
import pytest
import torch
from tensordict import TensorDict

from mjlab.deploy import OnnxPolicy
from mjlab.envs import ManagerBasedRlEnv
from mjlab.export import ExportError, metadata_from_env
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.tasks import load_env_cfg, load_rl_cfg

NUM_ENVS = 2


@pytest.mark.parametrize(
    "task, data_type",
    [("Mjlab-Lift-Cube-Franka-Rgb", "rgb"), ("Mjlab-Lift-Cube-Franka-Depth", "depth")],
)
def test_an_image_policy_runs_on_raw_frames_as_in_training(task, data_type, tmp_path):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = NUM_ENVS
    cfg.observations["actor"].enable_corruption = False
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(load_rl_cfg(task)), None)
    runner.cfg["upload_model"] = False
    runner.export_policy_to_onnx(str(tmp_path))

    policy = OnnxPolicy(tmp_path / "policy.onnx")
    (image,) = policy.image_inputs
    assert (image.name, image.data_type, image.shape) == (
        "camera",
        data_type,
        [3 if data_type == "rgb" else 1, 64, 64],
    )
    assert image.camera["width"] == 64 and image.camera["fovy"] == cfg.scene.sensors[-1].fovy
    actor = runner.alg.get_policy()
    actor.eval()
    inner = env.unwrapped
    camera = inner.scene["camera"]
    obs = env.get_observations()
    gen = torch.Generator().manual_seed(0)
    worst = 0.0
    for _ in range(4):
        raw = inner.observation_manager.raw_terms("actor")
        frames = (camera.rgb if data_type == "rgb" else camera.depth).cpu().numpy()
        for i in range(NUM_ENVS):
            state = policy.build_observation({k: v[i].cpu().numpy() for k, v in raw.items()})
            pixels = policy.preprocess_image("camera", frames[i])
            # The runtime's image is exactly the env's observation.
            assert np.array_equal(pixels[0], obs["camera"][i].cpu().numpy())
            got = policy(state, images={"camera": frames[i]})
            with torch.inference_mode():
                want = actor(TensorDict({k: v[i : i + 1] for k, v in obs.items()}, batch_size=[1]))
            worst = max(worst, float(np.abs(got - want[0].numpy()).max()))
        obs, *_ = env.step(2.0 * torch.rand(NUM_ENVS, 8, generator=gen) - 1.0)
    assert worst < 1e-4

    # The robot-side tools read the camera inputs too.
    from mjlab.deploy.cli import bench, inspect

    text = inspect(tmp_path / "policy.onnx")
    assert "schema        mjlab.deployment v4" in text
    assert f"image input   camera: {data_type}" in text
    assert bench(tmp_path / "policy.onnx", iterations=5)["p50_us"] > 0


def test_an_image_group_that_mixes_in_a_scale_is_refused_naming_it():
    cfg = load_env_cfg("Mjlab-Lift-Cube-Franka-Rgb")
    cfg.scene.num_envs = 1
    cfg.observations["camera"].terms["rgb"].scale = 2.0
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ExportError, match=r"'camera'.*scale=2.0"):
        metadata_from_env(env, image_groups=("camera",))


@pytest.mark.slow
@pytest.mark.parametrize("task", ["Mjlab-Lift-Cube-Franka-Rgb", "Mjlab-Lift-Cube-Franka-Depth"])
def test_an_image_task_trains_and_reports_its_speed(task, tmp_path, capsys):
    """Two PPO iterations of the CNN actor on rendered frames (8 envs x 8 steps), then the
    exported file: the image tasks train on a CPU, and their speed is printed."""
    import time

    cfg = load_env_cfg(task)
    cfg.scene.num_envs = 8
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg(task)
    agent.num_steps_per_env = 8
    agent.logger = "tensorboard"
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path))
    runner.cfg["upload_model"] = False
    before = [p.detach().clone() for p in runner.alg.get_policy().cnns.parameters()]
    start = time.perf_counter()
    runner.learn(2)
    seconds = time.perf_counter() - start
    after = list(runner.alg.get_policy().cnns.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True)), "CNN trained"
    assert all(torch.isfinite(p).all() for p in after)
    runner.export_policy_to_onnx(str(tmp_path))
    assert OnnxPolicy(tmp_path / "policy.onnx").image_inputs[0].name == "camera"
    with capsys.disabled():
        print(
            f"\n[{task}] 2 iterations of 8 envs x 8 steps (64x64): {2 * 64 / seconds:.0f} env steps/s"
        )
