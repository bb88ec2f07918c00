"""Policy files for tests and benchmarks, built with onnx.helper (no torch, no training).

`write_linear_policy` writes actions = obs @ weight + bias; `write_mlp_policy` a random MLP of a
trained policy's size. Both have the exporter's interface: input "obs" (batch, obs_dim) float32,
output "actions" (batch, num_actions), a dynamic batch axis, and the metadata (when given) under
the same `metadata_props` keys as `mjlab.export.export_policy`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mjlab.deploy.metadata import DeploymentMetadata


def _save(
    path: str | os.PathLike,
    nodes: list,
    initializers: list,
    obs_dim: int,
    num_actions: int,
    metadata: DeploymentMetadata | None,
    props: Mapping[str, str] | None,
) -> Path:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", obs_dim])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", num_actions])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    items = dict(props or {})
    if metadata is not None:
        items.update(metadata.to_onnx_metadata())
    for key, value in items.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save_model(model, str(path))
    return Path(path)


def write_linear_policy(
    path: str | os.PathLike,
    weight: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    metadata: DeploymentMetadata | None = None,
    props: Mapping[str, str] | None = None,
) -> Path:
    """Write actions = obs @ weight + bias.

    Args:
        path: the .onnx file.
        weight: (obs_dim, num_actions); None: zeros of the metadata's sizes.
        bias: (num_actions,); None: zeros.
        metadata: stored in the file (None: a file without deployment metadata).
        props: extra `metadata_props` entries.

    Raises:
        ValueError: neither a weight nor metadata to take the sizes from.
    """
    from onnx import helper, numpy_helper

    if weight is None:
        if metadata is None:
            raise ValueError("write_linear_policy needs a weight or metadata for the sizes.")
        weight = np.zeros((metadata.obs_dim, metadata.num_joints))
    weight = np.asarray(weight, dtype=np.float32)
    d, a = weight.shape
    bias = np.zeros(a, np.float32) if bias is None else np.asarray(bias, dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["obs", "W"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["actions"]),
    ]
    inits = [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(bias, "b")]
    return _save(path, nodes, inits, d, a, metadata, props)


def write_mlp_policy(
    path: str | os.PathLike,
    metadata: DeploymentMetadata,
    hidden: Sequence[int] = (512, 256, 128),
    seed: int = 0,
) -> Path:
    """Write an ELU MLP obs_dim -> hidden... -> num_joints with random weights (scaled by
    1/sqrt(fan_in)): the size and cost of a trained mjlab velocity policy, not its behaviour."""
    from onnx import helper, numpy_helper

    sizes = [metadata.obs_dim, *hidden, metadata.num_joints]
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "obs"
    last = len(sizes) - 2
    for i in range(len(sizes) - 1):
        w = (rng.standard_normal((sizes[i], sizes[i + 1])) / np.sqrt(sizes[i])).astype(np.float32)
        inits += [
            numpy_helper.from_array(w, f"W{i}"),
            numpy_helper.from_array(np.zeros(sizes[i + 1], np.float32), f"b{i}"),
        ]
        out = "actions" if i == last else f"a{i}"
        nodes += [
            helper.make_node("MatMul", [prev, f"W{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [out]),
        ]
        if i != last:
            nodes.append(helper.make_node("Elu", [out], [f"h{i}"]))
            prev = f"h{i}"
    return _save(path, nodes, inits, sizes[0], sizes[-1], metadata, None)
