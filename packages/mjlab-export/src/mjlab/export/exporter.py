"""Export a torch policy to ONE self-contained ONNX file with deployment metadata."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch

from mjlab.deploy.metadata import METADATA_KEY, DeploymentMetadata

PARITY_TOLERANCE = 1e-5
"""Max |onnxruntime - torch| accepted on the export check, in action units."""


def _input_dim(actor: torch.nn.Module, obs_dim: int | None) -> int:
    if obs_dim is not None:
        return obs_dim
    for attr in ("input_size", "obs_dim"):
        if isinstance(getattr(actor, attr, None), int):
            return getattr(actor, attr)
    first = next((m for m in actor.modules() if isinstance(m, torch.nn.Linear)), None)
    if first is None:
        raise ValueError("Cannot infer the observation size of the actor: pass obs_dim=.")
    return first.in_features


def export_policy(
    actor: torch.nn.Module,
    path: str | os.PathLike,
    metadata: DeploymentMetadata | None,
    *,
    obs_dim: int | None = None,
    opset: int = 18,
    verbose: bool = False,
) -> Path:
    """Write `actor` (obs (B, D) float32 -> actions (B, A), deterministic, normalizer inside)
    to `path` as one ONNX file: input "obs", output "actions", dynamic batch axis, legacy
    exporter (dynamo=False), metadata under `mjlab.deployment` plus the flat keys.

    The file is written atomically (temp file in the same folder, then rename) and checked:
    onnxruntime must reproduce torch on random observations to within 1e-5.

    Returns:
        The path written.

    Raises:
        ValueError: metadata inconsistent with the actor, or the parity check fails.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    actor = actor.to("cpu").eval()
    dim = _input_dim(actor, obs_dim)
    if metadata is not None:
        metadata.validate()
        if metadata.obs_dim != dim:
            raise ValueError(
                f"Metadata observation terms add up to {metadata.obs_dim} values but the actor takes {dim}."
            )
    dummy = torch.zeros(1, dim)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmpdir:
        raw = Path(tmpdir) / "raw.onnx"
        with warnings.catch_warnings():
            # The legacy (TorchScript) exporter is chosen on purpose: it handles dynamic_axes
            # without the deprecation noise of the dynamo path for these small MLPs.
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                actor,
                (dummy,),
                str(raw),
                export_params=True,
                opset_version=opset,
                verbose=verbose,
                input_names=["obs"],
                output_names=["actions"],
                dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}},
                dynamo=False,
            )
        model = onnx.load(str(raw), load_external_data=True)
        if metadata is not None:
            props = {METADATA_KEY: metadata.to_json(), **metadata.flat_items()}
            for key, value in props.items():
                entry = model.metadata_props.add()
                entry.key, entry.value = key, value
        onnx.checker.check_model(model)
        final = Path(tmpdir) / "final.onnx"
        onnx.save_model(model, str(final), save_as_external_data=False)
        if metadata is not None:
            actions_dim = int(actor(dummy).shape[-1])
            if actions_dim != metadata.num_joints:
                raise ValueError(
                    f"Actor outputs {actions_dim} actions but metadata lists {metadata.num_joints} joints."
                )
        obs = torch.randn(64, dim, generator=torch.Generator().manual_seed(0))
        diff = check_onnx_parity(actor, final, obs)
        if diff > PARITY_TOLERANCE:
            raise ValueError(f"ONNX export differs from torch by {diff:.3g} > {PARITY_TOLERANCE}.")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            os.replace(final, tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def check_onnx_parity(actor: torch.nn.Module, path: str | os.PathLike, obs: torch.Tensor) -> float:
    """Max abs difference between onnxruntime and torch actions on `obs` (B, D)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with torch.inference_mode():
        expected = actor(obs.float().cpu()).numpy()
    got = session.run(["actions"], {"obs": obs.float().cpu().numpy()})[0]
    return float(np.abs(got - expected).max())
