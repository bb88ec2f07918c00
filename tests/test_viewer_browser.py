"""`play --viewer web` in a real browser: headless Chromium opens the page, the robot is drawn
where the camera looks, its pose changes between two screenshots, pause/step/resume work, and
Ctrl-C ends play cleanly. `.ci/run` installs Chromium (Debian package) when it is missing.

MJLAB_VIEWER_SCREENSHOT=PATH also writes the first screenshot there (docs/viewer.png).
"""

import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

TASK = "Mjlab-Velocity-Flat-Unitree-Go1"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("No Chromium here; .ci/run installs the Debian package `chromium`.")
    pytest.skip("needs Chromium (apt-get install chromium)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _image(png: bytes) -> np.ndarray:
    import imageio.v3 as iio

    return np.asarray(iio.imread(io.BytesIO(png)))[..., :3].astype(np.int16)


def _solid_dark(image: np.ndarray) -> np.ndarray:
    """(H, W) bool: pixels darker than the floor (< 185 in every channel) whose whole 5x5
    neighbourhood is too, i.e. surfaces, not the grid's 1-3 px lines."""
    from scipy.ndimage import binary_erosion

    return binary_erosion(image.max(axis=-1) < 185, structure=np.ones((5, 5), dtype=bool))


def _wait_for_line(proc: subprocess.Popen, text: str, timeout: float) -> str:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if text in line:
            return line
    proc.kill()
    raise AssertionError(f"play never printed {text!r}; it printed:\n{''.join(seen)[-3000:]}")


def _status(page) -> str:
    return page.get_by_text(re.compile(r"episode step \d+")).inner_text()


def _step_of(status: str) -> int:
    return int(re.search(r"episode step (\d+)", status).group(1))


def test_play_in_the_web_viewer_draws_and_moves_the_robot_in_headless_chromium(tmp_path):
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    port = _free_port()
    play = [sys.executable, "-u", "-m", "mjlab.rl.scripts.play", TASK, "--agent", "random"]
    proc = subprocess.Popen(
        [*play, "--viewer", "web", "--viewer-port", str(port), "--env.scene.num-envs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        line = _wait_for_line(proc, "[mjlab] web viewer:", timeout=120)
        url = f"http://127.0.0.1:{port}"
        assert url in line
        listeners = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        assert f"127.0.0.1:{port} " in listeners and f"0.0.0.0:{port} " not in listeners
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium,
                args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-sandbox"],
            )
            # Small by default (software WebGL on 2 cores); the docs screenshot is 1280x720.
            size = (1280, 720) if os.environ.get("MJLAB_VIEWER_SCREENSHOT") else (720, 405)
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            page.goto(url)
            page.wait_for_selector("canvas", timeout=60_000)
            page.get_by_text(re.compile(r"episode step \d+")).wait_for(timeout=60_000)
            for close in page.locator(".mantine-Notification-closeButton").all():
                close.click()  # "software WebGL" notice
            box = page.locator("canvas").first.bounding_box()
            png = page.screenshot(timeout=120_000)
            (tmp_path / "first.png").write_bytes(png)
            first = _image(png)
            time.sleep(0.3)  # (a screenshot takes seconds in software WebGL)
            png = page.screenshot(timeout=120_000)
            (tmp_path / "second.png").write_bytes(png)
            second = _image(png)
            if os.environ.get("MJLAB_VIEWER_SCREENSHOT"):
                out = Path(os.environ["MJLAB_VIEWER_SCREENSHOT"])
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(png)

            # The camera looks at the base: the middle of the 3D view shows the Go1 (grey to
            # black, by the lighting), solid where the floor shows only thin grid lines; the
            # view as a whole is mostly light floor and sky (not a blank dark canvas).
            cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            hw, hh = box["width"] * 0.2, box["height"] * 0.2
            rows = np.s_[int(cy - hh) : int(cy + hh)]
            region = np.s_[rows, int(cx - hw) : int(cx + hw)]
            view = np.s_[int(box["y"]) : int(box["y"] + box["height"]), : int(box["width"])]
            robot = _solid_dark(first[region]).mean()
            overall = _solid_dark(first[view]).mean()
            assert robot > 0.02 and overall < 0.2, (
                f"robot-coloured pixels: {robot:.4f} in the middle, {overall:.4f} in the view "
                f"(canvas {box}; screenshots in {tmp_path})"
            )
            # Poses are streamed: the legs move between the two screenshots.
            changed = (np.abs(first[region] - second[region]).max(axis=-1) > 30).mean()
            assert changed > 0.002, f"changed pixels: {changed:.4f}"

            # Pause holds the step count, Step advances it by one, Resume goes on.
            page.get_by_role("button", name="Pause").click()
            page.get_by_role("button", name="Resume").wait_for(timeout=30_000)
            time.sleep(1.0)  # the status the loop paused with arrives after the label
            paused = _step_of(_status(page))
            time.sleep(1.0)
            assert _step_of(_status(page)) == paused
            page.get_by_role("button", name="Step").click()
            deadline = time.monotonic() + 10
            while _step_of(_status(page)) == paused and time.monotonic() < deadline:
                time.sleep(0.1)
            stepped = _step_of(_status(page))
            assert stepped in (paused + 1, 0)  # 0: that step ended the episode
            page.get_by_role("button", name="Resume").click()
            page.get_by_role("button", name="Pause").wait_for(timeout=30_000)
            deadline = time.monotonic() + 20
            while _step_of(_status(page)) == stepped and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _step_of(_status(page)) != stepped
            browser.close()
        # Ctrl-C ends play with its summary; `uv run` forwards the terminal's SIGINT, so it
        # comes twice.
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out[-2000:]
        assert "stopped after" in out and "mean episode length" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
