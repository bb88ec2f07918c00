from pathlib import Path

import mujoco
import pytest

CARTPOLE_XML = (
    Path(__file__).resolve().parents[1] / "src" / "mjlab" / "tasks" / "cartpole" / "cartpole.xml"
)


@pytest.fixture
def cartpole_model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(CARTPOLE_XML))
