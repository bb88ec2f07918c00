"""Export side (needs torch) and sim2sim (needs mujoco): skipped on a robot-only install."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
rsl_models = pytest.importorskip("rsl_rl.models")
tensordict = pytest.importorskip("tensordict")

from mjlab.deploy import OnnxPolicy  # noqa: E402
from mjlab.export import check_onnx_parity, export_policy  # noqa: E402


def _actor(obs_dim: int, act_dim: int):
    obs = tensordict.TensorDict({"actor": torch.zeros(4, obs_dim)}, batch_size=[4])
    model = rsl_models.MLPModel(
        obs,
        {"actor": ["actor"]},
        "actor",
        act_dim,
        hidden_dims=(32, 32),
        obs_normalization=True,
        distribution_cfg={"class_name": "GaussianDistribution", "init_std": 1.0},
    )
    # Non-trivial normalizer statistics: mean 3, std 5 per dimension.
    model.train()
    data = 3.0 + 5.0 * torch.randn(4096, obs_dim, generator=torch.Generator().manual_seed(0))
    model.update_normalization(tensordict.TensorDict({"actor": data}, batch_size=[4096]))
    model.eval()
    return model.as_onnx(verbose=False)


def test_export_is_one_file_with_metadata_and_matches_torch(tmp_path, go1_meta):
    actor = _actor(48, 12)
    path = export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.onnx"], (
        "no sidecar, no temp files"
    )
    obs = 3.0 + 5.0 * torch.randn(256, 48, generator=torch.Generator().manual_seed(1))
    assert check_onnx_parity(actor, path, obs) <= 1e-5
    # The normalizer is inside the graph: raw observations give torch's actions.
    policy = OnnxPolicy(path)
    with torch.inference_mode():
        expected = actor(obs[:3]).numpy()
    np.testing.assert_allclose(policy(obs[:3].numpy()), expected, atol=1e-5)
    assert policy.metadata == go1_meta
    # Dynamic batch axis.
    assert policy(np.zeros((17, 48), dtype=np.float32)).shape == (17, 12)


def test_export_refuses_metadata_that_does_not_fit_the_actor(tmp_path, go1_meta):
    with pytest.raises(ValueError, match="add up to 48 values but the actor takes 40"):
        export_policy(_actor(40, 12), tmp_path / "p.onnx", go1_meta)
    assert not (tmp_path / "p.onnx").exists()


@pytest.mark.slow
def test_sim2sim_holds_go1_standing_with_a_zero_action_policy(tmp_path, go1_meta, make_policy):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    from mjlab.deploy.sim2sim import Sim2Sim

    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    sim = Sim2Sim(OnnxPolicy(path))
    report = sim.run(seconds=1.0, command=(0.0, 0.0, 0.0))
    assert report.falls == 0
    assert sim.data.qpos[2] > 0.2  # trunk still up
    # The soft 10 Hz servos sag under the body weight (rear calves ~0.17 rad) but hold the pose.
    np.testing.assert_allclose(sim.data.qpos[sim.qpos_adr], go1_meta.default_joint_pos, atol=0.25)
