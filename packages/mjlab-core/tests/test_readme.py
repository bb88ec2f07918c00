"""The example in mjlab-core's README runs as written, with mjlab-core alone."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_runs_and_shows_what_it_says(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert len(blocks) == 1
    scope: dict = {}
    exec(compile(blocks[0], str(README), "exec"), scope)
    assert "Mjlab-Cartpole-Balance" in capsys.readouterr().out
    assert tuple(scope["obs"]["actor"].shape) == (128, 4)
    assert tuple(scope["reward"].shape) == (128,)
