import subprocess
import sys


def test_deploy_import_does_not_import_torch():
    code = (
        "import sys, mjlab.deploy, mjlab.deploy.cli, mjlab.deploy.gains; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "assert 'mujoco' not in sys.modules, 'mujoco imported by the robot-side modules'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
