import contextlib
from pathlib import Path

import mujoco
import pytest

# triton's native library segfaults when it is first loaded after Mesa's EGL (the camera sensor
# tests render with it; torch loads triton lazily, e.g. for the dispatch mode of
# test_step_hot_path). Loading it first, at collection, avoids that, as mjlab.rl's import does
# in the workspace's suite. An install without triton has nothing to load.
with contextlib.suppress(ImportError):
    import triton  # noqa: F401

CARTPOLE_XML = (
    Path(__file__).resolve().parents[1] / "src" / "mjlab" / "tasks" / "cartpole" / "cartpole.xml"
)


@pytest.fixture
def cartpole_model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(CARTPOLE_XML))
