"""Image policies end to end: each Panda lift task seen through a camera trains its rsl-rl CNN
actor for two PPO iterations on rendered frames, exports to ONNX with the camera described
(metadata v4), and the robot-side runtime, fed the camera's raw frames and the raw state terms,
reproduces the env's image observation exactly and the trained actor's actions. Real MuJoCo
rendering, rsl-rl, onnxruntime."""

import time

import numpy as np
import pytest
import torch
from tensordict import TensorDict

from mjlab.deploy import OnnxPolicy
from mjlab.deploy.cli import bench, inspect
from mjlab.envs import ManagerBasedRlEnv
from mjlab.export import ExportError, metadata_from_env
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.sensor.camera_sensor import lookat_quat
from mjlab.tasks import load_env_cfg, load_rl_cfg

NUM_ENVS = 4
STEPS_PER_ITERATION = 8


@pytest.mark.slow
@pytest.mark.parametrize(
    "task, data_type",
    [("Mjlab-Lift-Cube-Franka-Rgb", "rgb"), ("Mjlab-Lift-Cube-Franka-Depth", "depth")],
)
def test_an_image_task_trains_and_its_policy_runs_on_raw_frames(task, data_type, tmp_path, capsys):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = NUM_ENVS
    cfg.observations["actor"].enable_corruption = False  # the runtime gets the true terms
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg(task)
    agent.num_steps_per_env = STEPS_PER_ITERATION
    agent.logger = "tensorboard"
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path))
    runner.cfg["upload_model"] = False

    # Training: two iterations change the CNN encoder, which stays finite.
    cnn = runner.alg.get_policy().cnns
    before = [p.detach().clone() for p in cnn.parameters()]
    start = time.perf_counter()
    runner.learn(2)
    seconds = time.perf_counter() - start
    after = list(cnn.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
    assert all(torch.isfinite(p).all() for p in after)
    with capsys.disabled():
        steps = 2 * NUM_ENVS * STEPS_PER_ITERATION
        print(f"\n[{task}] trained 2 iterations of {NUM_ENVS} envs x {STEPS_PER_ITERATION} steps")
        print(f"  (64x64 camera, rendering and PPO): {steps / seconds:.1f} env steps/s")

    # Export: one image input besides obs, described.
    runner.export_policy_to_onnx(str(tmp_path))
    path = tmp_path / "policy.onnx"
    policy = OnnxPolicy(path)
    (image,) = policy.image_inputs
    channels = 3 if data_type == "rgb" else 1
    assert (image.name, image.data_type, image.shape) == ("camera", data_type, [channels, 64, 64])
    camera_cfg = next(s for s in cfg.scene.sensors if s.name == "camera")
    assert image.camera["width"] == 64 and image.camera["fovy"] == camera_cfg.fovy
    # The compiled camera: the lookat turned into its orientation, not the config's default.
    want_quat = lookat_quat(camera_cfg.pos, camera_cfg.lookat)
    assert np.allclose(image.camera["quat"], want_quat, atol=1e-6)
    assert (
        np.allclose(image.camera["pos"], camera_cfg.pos) and image.camera["parent_body"] == "world"
    )
    text = inspect(path)
    assert "schema        mjlab.deployment v4" in text
    assert f"image input   camera: {data_type}" in text
    assert bench(path, iterations=5)["p50_us"] > 0

    # The runtime from raw frames and raw terms: the env's image exactly, the actor's actions.
    actor = runner.alg.get_policy()
    actor.eval()
    inner = env.unwrapped
    camera = inner.scene["camera"]
    obs = env.get_observations()
    runtimes = [OnnxPolicy(path) for _ in range(NUM_ENVS)]  # one per env: each is one robot
    gen = torch.Generator().manual_seed(0)
    worst = 0.0
    for _ in range(3):
        raw = inner.observation_manager.raw_terms("actor")
        frames = (camera.rgb if data_type == "rgb" else camera.depth).cpu().numpy()
        for i, runtime in enumerate(runtimes):
            state = runtime.build_observation({k: v[i].cpu().numpy() for k, v in raw.items()})
            pixels = runtime.preprocess_image("camera", frames[i])
            assert np.array_equal(pixels[0], obs["camera"][i].cpu().numpy())
            got = runtime(state, images={"camera": frames[i]})
            with torch.inference_mode():
                want = actor(TensorDict({k: v[i : i + 1] for k, v in obs.items()}, batch_size=[1]))
            worst = max(worst, float(np.abs(got - want[0].numpy()).max()))
        obs, *_ = env.step(2.0 * torch.rand(NUM_ENVS, 8, generator=gen) - 1.0)
    assert worst < 1e-4


def test_an_image_group_with_a_scale_is_refused_naming_it():
    cfg = load_env_cfg("Mjlab-Lift-Cube-Franka-Rgb")
    cfg.scene.num_envs = 1
    cfg.observations["camera"].terms["rgb"].scale = 2.0
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ExportError, match=r"'camera'.*scale=2.0"):
        metadata_from_env(env, image_groups=("camera",))
