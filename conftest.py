"""Test configuration shared by every package's tests and the integration tests.

Imports nothing heavy: each package's tests must also run with only that package installed.
"""

import os
from pathlib import Path

# Offline mirror of the robot models for machines that cannot reach the Menagerie downloads (CI).
# A user's own MENAGERIE_ROOT, or none at all, is left as it is.
_MIRROR = Path(__file__).resolve().parent.parent / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

# Headless rendering for video tests; a user's own choice wins.
os.environ.setdefault("MUJOCO_GL", "egl")
# Local Ray clusters in tests need no auth token (they bind to 127.0.0.1 by themselves:
# rlightning.engine.loopback_only_ray).
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
# Under `uv run`, Ray 2.60 would rebuild the uv environment inside every worker; the workers
# share this interpreter's environment instead.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
# wandb never reaches the network from tests.
os.environ.setdefault("WANDB_MODE", "offline")
