"""Export a torch policy to ONE self-contained ONNX file with deployment metadata."""

from __future__ import annotations

import copy
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch

from mjlab.deploy.integrity import DIGEST_KEY, placeholder_digest, seal_onnx_bytes
from mjlab.deploy.metadata import DeploymentMetadata

PARITY_TOLERANCE = 1e-5
"""Max |onnxruntime - torch| accepted on the export check, relative to the largest action the
check produces (at least 1): float32 rounding grows with the values (a trained policy fed
random observations can output actions of 10-30, and differ by 1.1e-5 in absolute terms)."""
PARITY_BATCH = 64
"""Random observations the export check runs through both."""


def _input_dim(actor: torch.nn.Module, obs_dim: int | None, fallback: int | None) -> int:
    """obs_dim if given, else the actor's own `input_size`/`obs_dim`, else `fallback` (the
    metadata's), else the input size of the first Linear layer."""
    if obs_dim is not None:
        return obs_dim
    for attr in ("input_size", "obs_dim"):
        if isinstance(getattr(actor, attr, None), int):
            return getattr(actor, attr)
    if fallback is not None:
        return fallback
    first = next((m for m in actor.modules() if isinstance(m, torch.nn.Linear)), None)
    if first is None:
        raise ValueError("Cannot infer the observation size of the actor: pass obs_dim=.")
    return first.in_features


def _external_data_tensors(model: onnx.ModelProto) -> list[str]:
    """Names of initializers whose bytes live outside the .onnx file."""
    return [
        t.name
        for t in model.graph.initializer
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data) > 0
    ]


def export_policy(
    actor: torch.nn.Module,
    path: str | os.PathLike,
    metadata: DeploymentMetadata | None,
    *,
    obs_dim: int | None = None,
    opset: int = 18,
    verbose: bool = False,
) -> Path:
    """Write `actor` to `path` as one self-contained ONNX file with deployment metadata.

    The graph has input "obs" (batch, obs_dim) float32, then one input per camera image of
    `metadata.images` (named after it, (batch, C, H, W) float32, what mjlab's image terms
    compute), and output "actions" (batch, A), with a dynamic batch axis; it is traced with the legacy exporter (`dynamo=False`) from a CPU copy
    of `actor` in eval mode (the caller's module is not modified). The metadata goes under
    `mjlab.deployment` plus the flat keys. The file is written atomically (temp folder beside
    `path`, then `os.replace`) after two checks: no external-data sidecar, and onnxruntime
    reproduces torch on `PARITY_BATCH` random observations to within `PARITY_TOLERANCE` times the
    largest action (at least 1).

    Args:
        actor: deterministic module mapping obs (B, D) float32 -> actions (B, A), with its
            observation normalizer inside (e.g. `actor_from_rsl_rl(model)`); an image policy's
            maps (obs, *images) -> actions, images in `metadata.images` order (rsl-rl's
            `CNNModel.as_onnx()`).
        path: the .onnx file to write; its folder is created.
        metadata: what the robot needs (joint order, gains, observation layout); None writes a
            file that `OnnxPolicy` only opens with `allow_missing_metadata=True`.
        obs_dim: D; by default the actor's `input_size`, else the metadata's `obs_dim`.
        opset: ONNX opset.
        verbose: print the exporter's graph.

    Returns:
        `path` as a `Path`.

    Raises:
        ValueError: metadata inconsistent with the actor (observation or action size), joint
            position metadata without `joint_vel_limit`, an external-data sidecar, or a failed
            parity check. Nothing is written then.
    """
    path = Path(path)
    if path.suffix != ".onnx":
        raise ValueError(f"Export path {path} must end in .onnx.")
    path.parent.mkdir(parents=True, exist_ok=True)
    actor = copy.deepcopy(actor).to("cpu").eval()
    dim = _input_dim(actor, obs_dim, metadata.obs_dim if metadata is not None else None)
    if metadata is not None:
        metadata.validate()
        if metadata.action_type == "joint_position" and not metadata.joint_vel_limit:
            raise ValueError(
                "The metadata has no joint_vel_limit: the robot's control loop needs one per "
                "joint to fault on a runaway joint. Give the motors' limits in rad/s "
                "(EntityCfg.joint_vel_limit, or metadata_from_env(..., joint_vel_limit=)); "
                "math.inf states that a joint has none."
            )
        if metadata.obs_dim != dim:
            raise ValueError(
                f"Metadata observation terms add up to {metadata.obs_dim} values but the actor takes {dim}."
            )
    images = list(metadata.images) if metadata is not None else []
    dummy = (torch.zeros(1, dim), *(torch.zeros(1, *i.shape) for i in images))
    try:
        with torch.inference_mode():
            out = actor(*dummy)
    except (RuntimeError, TypeError) as err:
        what = f"a (1, {dim}) observation"
        if images:
            what += " and images " + ", ".join(
                f"{i.name} (1, {', '.join(map(str, i.shape))})" for i in images
            )
        raise ValueError(f"The actor fails on {what}: {err}") from err
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[0] != 1:
        raise ValueError(
            "The actor must map obs (B, D) to one tensor of actions (B, A); got "
            f"{type(out).__name__} {getattr(out, 'shape', '')} for a (1, {dim}) input."
        )
    if metadata is not None and out.shape[1] != metadata.num_joints:
        raise ValueError(
            f"Actor outputs {out.shape[1]} actions but metadata lists {metadata.num_joints} joints."
        )
    with tempfile.TemporaryDirectory(prefix=f".{path.stem}.", dir=path.parent) as tmpdir:
        raw = Path(tmpdir) / "raw.onnx"
        with warnings.catch_warnings():
            # The legacy (TorchScript) exporter is chosen on purpose: it handles dynamic_axes
            # without the deprecation noise of the dynamo path for these small MLPs.
            warnings.simplefilter("ignore", DeprecationWarning)
            names = ["obs", *(i.name for i in images)]
            torch.onnx.export(
                actor,
                dummy,
                str(raw),
                export_params=True,
                opset_version=opset,
                verbose=verbose,
                input_names=names,
                output_names=["actions"],
                dynamic_axes={n: {0: "batch"} for n in [*names, "actions"]},
                dynamo=False,
            )
        sidecars = sorted(p.name for p in Path(tmpdir).iterdir() if p != raw)
        model = onnx.load(str(raw), load_external_data=False)
        external = _external_data_tensors(model)
        if sidecars or external:
            raise ValueError(
                f"torch.onnx.export wrote external data ({sidecars or external}); the policy "
                "must fit one self-contained .onnx file (under 2 GB)."
            )
        if metadata is not None:
            for key, value in metadata.to_onnx_metadata().items():
                entry = model.metadata_props.add()
                entry.key, entry.value = key, value
        entry = model.metadata_props.add()  # the file's own digest: `mjlab.deploy.integrity`
        entry.key, entry.value = DIGEST_KEY, placeholder_digest()
        onnx.checker.check_model(model)
        final = Path(tmpdir) / "final.onnx"
        final.write_bytes(seal_onnx_bytes(model.SerializeToString()))
        gen = torch.Generator().manual_seed(0)
        obs = torch.randn(PARITY_BATCH, dim, generator=gen)
        pixels = {i.name: torch.rand(PARITY_BATCH, *i.shape, generator=gen) for i in images}
        diff = check_onnx_parity(actor, final, obs, pixels)
        with torch.no_grad():
            scale = max(1.0, float(actor(obs, *pixels.values()).abs().max()))
        if not diff <= PARITY_TOLERANCE * scale:
            raise ValueError(
                f"ONNX export differs from torch by {diff:.3g} > {PARITY_TOLERANCE} x "
                f"{scale:.3g} (the largest action) on random observations; the actor may be "
                "stochastic or use an op the exporter changes."
            )
        os.replace(final, path)
    return path


def check_onnx_parity(
    actor: torch.nn.Module,
    path: str | os.PathLike,
    obs: torch.Tensor | np.ndarray,
    images: dict[str, torch.Tensor] | None = None,
) -> float:
    """Max abs difference between onnxruntime and torch actions.

    Args:
        actor: the torch module that was exported (run as given, on CPU, without gradients).
        path: the .onnx file.
        obs: (B, D) observations.
        images: {input name: (B, C, H, W) float32} for an image policy, in the graph's order.

    Returns:
        max |actions_onnx - actions_torch| over the batch (inf when either has NaN).
    """
    import onnxruntime as ort

    obs = torch.as_tensor(obs, dtype=torch.float32).cpu()
    pixels = {k: torch.as_tensor(v, dtype=torch.float32).cpu() for k, v in (images or {}).items()}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with torch.inference_mode():
        expected = actor(obs, *pixels.values()).cpu().numpy()
    feeds = {"obs": obs.numpy(), **{k: v.numpy() for k, v in pixels.items()}}
    got = session.run(["actions"], feeds)[0]
    if got.shape != expected.shape:
        raise ValueError(f"ONNX actions have shape {got.shape}, torch {expected.shape}.")
    diff = np.abs(got.astype(np.float64) - expected)
    return float(diff.max()) if np.isfinite(diff).all() else float("inf")
