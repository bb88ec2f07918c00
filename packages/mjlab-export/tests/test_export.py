"""Export side (needs torch and rsl-rl-lib): skipped on a robot-only install."""

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
rsl_models = pytest.importorskip("rsl_rl.models")
tensordict = pytest.importorskip("tensordict")

from mjlab.deploy import OnnxPolicy  # noqa: E402
from mjlab.export import actor_from_rsl_rl, check_onnx_parity, export_policy  # noqa: E402


def _model(obs_dim: int, act_dim: int):
    """A real rsl_rl MLPModel with non-trivial normalizer statistics (mean 3, std 5)."""
    obs = tensordict.TensorDict({"policy": torch.zeros(4, obs_dim)}, batch_size=[4])
    model = rsl_models.MLPModel(
        obs,
        {"actor": ["policy"]},
        "actor",
        act_dim,
        hidden_dims=(32, 32),
        obs_normalization=True,
        distribution_cfg={"class_name": "GaussianDistribution", "init_std": 1.0},
    )
    model.train()
    data = 3.0 + 5.0 * torch.randn(4096, obs_dim, generator=torch.Generator().manual_seed(0))
    model.update_normalization(tensordict.TensorDict({"policy": data}, batch_size=[4096]))
    model.eval()
    return model


def _actor(obs_dim: int, act_dim: int):
    return actor_from_rsl_rl(_model(obs_dim, act_dim))


def test_export_is_one_file_with_metadata_and_matches_torch(tmp_path, go1_meta):
    actor = _actor(48, 12)
    path = export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.onnx"], (
        "no sidecar, no temp files"
    )
    model = onnx.load(str(path), load_external_data=False)
    assert not any(t.external_data for t in model.graph.initializer)
    assert [i.name for i in model.graph.input] == ["obs"]
    assert [o.name for o in model.graph.output] == ["actions"]
    obs = 3.0 + 5.0 * torch.randn(256, 48, generator=torch.Generator().manual_seed(1))
    assert check_onnx_parity(actor, path, obs) <= 1e-5
    assert check_onnx_parity(actor, path, obs.numpy()) <= 1e-5
    policy = OnnxPolicy(path)
    assert policy.metadata == go1_meta
    # Dynamic batch axis.
    assert policy(np.zeros((17, 48), dtype=np.float32)).shape == (17, 12)


def test_observation_normalizer_is_inside_the_exported_graph(tmp_path, go1_meta):
    model = _model(48, 12)
    path = export_policy(actor_from_rsl_rl(model), tmp_path / "policy.onnx", go1_meta)
    obs = 3.0 + 5.0 * torch.randn(64, 48, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        # The rsl_rl model itself on raw grouped observations (normalizer + MLP + mean).
        expected = model(tensordict.TensorDict({"policy": obs}, batch_size=[64])).numpy()
        without_normalizer = model.mlp(obs).numpy()
    got = OnnxPolicy(path)(obs.numpy())
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert np.abs(got - without_normalizer).max() > 0.1


def test_export_does_not_touch_the_callers_module(tmp_path, go1_meta):
    actor = _actor(48, 12)
    actor.train()
    export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    assert actor.training


def test_export_writes_exactly_where_asked_even_with_model_in_the_folder_name(tmp_path, go1_meta):
    # Case C07: the path is a pathlib path, never split on words such as "model".
    run = tmp_path / "my_model_experiments" / "2026-03-30_12-00-00"
    path = export_policy(_actor(48, 12), run / "policy.onnx", go1_meta)
    assert path == run / "policy.onnx" and path.is_file()
    assert sorted(p.name for p in run.iterdir()) == ["policy.onnx"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_model_experiments"]


def test_export_refuses_metadata_that_does_not_fit_the_actor(tmp_path, go1_meta):
    with pytest.raises(ValueError, match="add up to 48 values but the actor takes 40"):
        export_policy(_actor(40, 12), tmp_path / "p.onnx", go1_meta)
    with pytest.raises(ValueError, match="Actor outputs 10 actions but metadata lists 12 joints"):
        export_policy(_actor(48, 10), tmp_path / "p.onnx", go1_meta)
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_metadata_without_joint_speed_limits(tmp_path, go1_meta):
    go1_meta.joint_vel_limit = []
    with pytest.raises(ValueError, match=r"no joint_vel_limit.*math\.inf states"):
        export_policy(_actor(48, 12), tmp_path / "p.onnx", go1_meta)
    assert list(tmp_path.iterdir()) == []
    go1_meta.joint_vel_limit = [float("inf")] * 12  # stated: no limits
    assert OnnxPolicy(export_policy(_actor(48, 12), tmp_path / "p.onnx", go1_meta)).metadata


class _NoisyActor(torch.nn.Module):
    """Not deterministic: the parity check must catch it."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(48, 12)

    def forward(self, obs):
        return self.linear(obs) + torch.randn_like(self.linear(obs))


def test_a_policy_with_large_actions_exports_within_float32_rounding(tmp_path, go1_meta):
    """A trained policy fed random observations can output actions of tens (the G1 tracking
    policy at iteration 200 did, and differed from onnxruntime by 1.1e-5): the check scales
    with the actions, so float32 rounding passes and a wrong export still fails."""
    torch.manual_seed(0)
    actor = torch.nn.Sequential(torch.nn.Linear(48, 256), torch.nn.ELU(), torch.nn.Linear(256, 12))
    with torch.no_grad():
        actor[2].weight.mul_(300.0)
    obs = torch.randn(64, 48, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert actor(obs).abs().max() > 30
    path = export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    assert path.is_file() and check_onnx_parity(actor, path, obs) < 1e-5 * 300


def test_failed_parity_check_raises_and_leaves_no_file(tmp_path, go1_meta):
    (tmp_path / "policy.onnx").write_bytes(b"previous export")
    with pytest.raises(ValueError, match="ONNX export differs from torch"):
        export_policy(_NoisyActor(), tmp_path / "policy.onnx", go1_meta)
    assert (tmp_path / "policy.onnx").read_bytes() == b"previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.onnx"]


def test_actor_helper_refuses_what_is_not_an_rsl_rl_model():
    with pytest.raises(TypeError, match="has no as_onnx"):
        actor_from_rsl_rl(torch.nn.Linear(3, 3))


def _flip_in_largest_initializer(path, count=400):
    """Invert `count` bytes of the largest weight tensor in the file (bit rot)."""
    model = onnx.load(str(path), load_external_data=False)
    raw = max((t.raw_data for t in model.graph.initializer), key=len)
    data = bytearray(path.read_bytes())
    at = data.find(raw)
    n = min(count, len(raw))
    data[at : at + n] = bytes(b ^ 0xFF for b in data[at : at + n])
    path.write_bytes(bytes(data))


def test_a_damaged_onnx_file_is_refused_naming_the_file(tmp_path, go1_meta, capsys):
    from mjlab.deploy.cli import main
    from mjlab.deploy.integrity import OnnxIntegrityError

    path = export_policy(_actor(48, 12), tmp_path / "policy.onnx", go1_meta)
    assert OnnxPolicy(path).verified
    _flip_in_largest_initializer(path)
    import onnxruntime as ort

    ort.InferenceSession(str(path))  # what used to happen: onnxruntime runs the garbage weights
    with pytest.raises(OnnxIntegrityError, match="sha256") as err:
        OnnxPolicy(path)
    assert str(path) in str(err.value)
    with pytest.raises(SystemExit) as stop:
        main(["inspect", str(path)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(lines) == 1 and "changed since export" in lines[0], lines


def test_an_onnx_file_without_a_digest_still_loads(tmp_path, go1_meta):
    from mjlab.deploy.integrity import DIGEST_KEY

    path = export_policy(_actor(48, 12), tmp_path / "policy.onnx", go1_meta)
    model = onnx.load(str(path), load_external_data=False)
    keep = [p for p in model.metadata_props if p.key != DIGEST_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(keep)
    onnx.save_model(model, str(path))  # as exported before digests were written
    policy = OnnxPolicy(path)
    assert not policy.verified and policy.metadata == go1_meta


def test_a_deliberately_edited_onnx_file_loads_again_once_resealed(tmp_path, go1_meta):
    from mjlab.deploy.integrity import DIGEST_KEY, OnnxIntegrityError, seal_onnx

    path = export_policy(_actor(48, 12), tmp_path / "policy.onnx", go1_meta)
    obs = np.linspace(-1.0, 1.0, 48, dtype=np.float32)
    expected = OnnxPolicy(path)(obs)
    model = onnx.load(str(path), load_external_data=False)
    model.doc_string = "walking policy, checked on the bench"
    onnx.save_model(model, str(path))
    with pytest.raises(OnnxIntegrityError, match="edited after export") as err:
        OnnxPolicy(path)
    assert "seal_onnx" in str(err.value)
    assert seal_onnx(path) == path
    policy = OnnxPolicy(path)
    assert policy.verified and np.array_equal(policy(obs), expected)
    # A file whose digest entry was dropped by a tool gets a new one.
    model = onnx.load(str(path), load_external_data=False)
    keep = [p for p in model.metadata_props if p.key != DIGEST_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(keep)
    onnx.save_model(model, str(path))
    assert not OnnxPolicy(path).verified
    seal_onnx(path)
    assert OnnxPolicy(path).verified and onnx.load(str(path)).doc_string.startswith("walking")
