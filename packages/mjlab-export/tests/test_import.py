import subprocess
import sys


def test_deploy_import_does_not_import_torch():
    code = "import sys, mjlab.deploy; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
