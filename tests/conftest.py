"""Integration tests across packages: they need the whole workspace (uv sync)."""

from pathlib import Path

import numpy as np
import pytest


def write_linear_policy(path: Path, metadata, weight=None, bias=None) -> Path:
    """An ONNX policy `actions = obs @ weight + bias` (zeros by default) carrying `metadata`,
    made with onnx.helper (no torch)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    d, a = metadata.obs_dim, metadata.num_joints
    weight = np.zeros((d, a)) if weight is None else weight
    bias = np.zeros(a) if bias is None else bias
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["obs", "W"], ["h"]),
            helper.make_node("Add", ["h", "b"], ["actions"]),
        ],
        "linear_policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", d])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", a])],
        [
            numpy_helper.from_array(np.asarray(weight, np.float32), "W"),
            numpy_helper.from_array(np.asarray(bias, np.float32), "b"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in metadata.to_onnx_metadata().items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save_model(model, str(path))
    return path


@pytest.fixture
def linear_policy_file():
    """`write_linear_policy(path, metadata, weight=None, bias=None) -> path`."""
    return write_linear_policy
