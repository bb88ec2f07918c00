"""Export with the [torch] extra alone (no rsl-rl-lib): any deterministic torch actor."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mjlab.deploy import OnnxPolicy  # noqa: E402
from mjlab.export import check_onnx_parity, export_policy  # noqa: E402


def _plain_actor() -> "torch.nn.Module":
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(48, 32), torch.nn.ELU(), torch.nn.Linear(32, 12), torch.nn.Tanh()
    )


def test_a_plain_torch_actor_exports_with_its_metadata_and_matches_torch(tmp_path, go1_meta):
    actor = _plain_actor()
    path = export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    obs = torch.randn(64, 48, generator=torch.Generator().manual_seed(2))
    assert check_onnx_parity(actor, path, obs) <= 1e-5
    policy = OnnxPolicy(path)
    assert policy.metadata == go1_meta
    with torch.no_grad():
        expected = actor(obs).numpy()
    np.testing.assert_allclose(policy(obs.numpy()), expected, atol=1e-5)


def test_an_actor_whose_size_differs_from_the_metadata_is_refused_and_nothing_written(
    tmp_path, go1_meta
):
    actor = torch.nn.Linear(47, 12)
    with pytest.raises(ValueError, match=r"fails on a \(1, 48\) observation"):
        export_policy(actor, tmp_path / "policy.onnx", go1_meta)
    assert not (tmp_path / "policy.onnx").exists()
