"""Image policies (metadata v4): a real rsl-rl CNNModel exported with camera inputs, run by
onnxruntime through `OnnxPolicy` from raw camera frames, against torch."""

import json

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
rsl_models = pytest.importorskip("rsl_rl.models")
tensordict = pytest.importorskip("tensordict")

from mjlab.deploy import DeploymentMetadata, ImageInputSpec, OnnxPolicy  # noqa: E402
from mjlab.deploy.metadata import METADATA_KEY  # noqa: E402
from mjlab.export import actor_from_rsl_rl, export_policy  # noqa: E402

H, W = 12, 16
CNN = {"output_channels": [4, 8], "kernel_size": 3, "stride": 2, "global_pool": "avg"}


def _cnn_actor(obs_dim: int, act_dim: int, groups: dict[str, int]):
    """A CNNModel reading a 1D group "actor" and one image group per entry (name: channels)."""
    obs = tensordict.TensorDict(
        {
            "actor": torch.zeros(4, obs_dim),
            **{g: torch.zeros(4, c, H, W) for g, c in groups.items()},
        },
        batch_size=[4],
    )
    model = rsl_models.CNNModel(
        obs,
        {"actor": ["actor", *groups]},
        "actor",
        act_dim,
        hidden_dims=(32,),
        obs_normalization=True,
        distribution_cfg={"class_name": "GaussianDistribution", "init_std": 1.0},
        cnn_cfg=CNN,
    )
    model.train()
    data = 2.0 + 3.0 * torch.randn(512, obs_dim, generator=torch.Generator().manual_seed(0))
    model.update_normalization(
        tensordict.TensorDict(
            {"actor": data, **{g: torch.zeros(512, c, H, W) for g, c in groups.items()}},
            batch_size=[512],
        )
    )
    model.eval()
    return model


def _image_meta(go1_meta, images: list[ImageInputSpec]) -> DeploymentMetadata:
    go1_meta.images = images
    return DeploymentMetadata(**{**go1_meta.__dict__})


RGB = ImageInputSpec(name="camera", term="rgb", data_type="rgb", shape=[3, H, W])
DEPTH = ImageInputSpec(
    name="depth_camera", term="depth", data_type="depth", shape=[1, H, W], max_depth=2.0
)


def test_an_image_policy_runs_from_raw_frames_as_torch_computes_it(tmp_path, go1_meta):
    model = _cnn_actor(48, 12, {"camera": 3, "depth_camera": 1})
    meta = _image_meta(go1_meta, [RGB, DEPTH])
    path = export_policy(actor_from_rsl_rl(model), tmp_path / "policy.onnx", meta)

    document = json.loads(
        {p.key: p.value for p in onnx.load(str(path)).metadata_props}[METADATA_KEY]
    )
    assert document["schema_version"] == 4
    assert [i["name"] for i in document["images"]] == ["camera", "depth_camera"]

    policy = OnnxPolicy(path)
    assert [i.name for i in policy.image_inputs] == ["camera", "depth_camera"]
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(5, 48)).astype(np.float32)
    rgb = rng.integers(0, 256, size=(5, H, W, 3), dtype=np.uint8)
    depth = rng.uniform(0.0, 3.0, size=(5, H, W)).astype(np.float32)  # some beyond max_depth
    got = policy(obs, images={"camera": rgb, "depth_camera": depth})

    # What mjlab's image terms feed the network in training: rgb / 255 channels first, depth
    # clipped to max_depth and divided by it.
    pixels = torch.from_numpy(rgb).permute(0, 3, 1, 2).float() / 255.0
    dpixels = (torch.from_numpy(depth).clamp(0.0, 2.0) / 2.0)[:, None]
    with torch.inference_mode():
        want = model(
            tensordict.TensorDict(
                {"actor": torch.from_numpy(obs), "camera": pixels, "depth_camera": dpixels},
                batch_size=[5],
            )
        ).numpy()
    assert np.abs(got - want).max() < 1e-4

    # Depth holes (a depth camera's 0, NaN, Inf) read as a miss: max_depth, as in training.
    holes = depth.copy()
    holes[:, 0, 0], holes[:, 0, 1], holes[:, 0, 2] = 0.0, np.nan, np.inf
    pre = policy.preprocess_image("depth_camera", holes)
    assert (pre[:, 0, 0, :3] == 1.0).all()

    # One robot, unbatched: the same action as row 0.
    single = policy(obs[0], images={"camera": rgb[0], "depth_camera": depth[0]})
    assert np.abs(single - got[0]).max() < 1e-5


def test_image_inputs_are_checked_and_named(tmp_path, go1_meta):
    model = _cnn_actor(48, 12, {"camera": 3})
    path = export_policy(
        actor_from_rsl_rl(model), tmp_path / "policy.onnx", _image_meta(go1_meta, [RGB])
    )
    policy = OnnxPolicy(path)
    obs = np.zeros(48, np.float32)
    with pytest.raises(ValueError, match="reads \\['camera'\\]"):
        policy(obs)
    with pytest.raises(ValueError, match="uint8"):
        policy(obs, images={"camera": np.zeros((H, W, 3), np.float32)})
    with pytest.raises(ValueError, match=f"expected \\({H}, {W}, 3\\)"):
        policy(obs, images={"camera": np.zeros((W, H, 3), np.uint8)})
    with pytest.raises(ValueError, match="not one of"):
        policy.preprocess_image("wrist", np.zeros((H, W, 3), np.uint8))


def test_image_metadata_is_validated():
    with pytest.raises(ValueError, match="C = 3"):
        ImageInputSpec(name="camera", term="rgb", data_type="rgb", shape=[1, H, W])
    with pytest.raises(ValueError, match="max_depth"):
        ImageInputSpec(name="camera", term="d", data_type="depth", shape=[1, H, W])
    with pytest.raises(ValueError, match="data_type"):
        ImageInputSpec(name="camera", term="x", data_type="ir", shape=[1, H, W])
    with pytest.raises(ValueError, match="other than 'obs'"):
        ImageInputSpec(name="obs", term="x", data_type="rgb", shape=[3, H, W])


def test_a_state_policy_is_still_written_as_schema_2(tmp_path, go1_meta):
    assert json.loads(go1_meta.to_json())["schema_version"] == 2
    assert "images" not in json.loads(go1_meta.to_json())
