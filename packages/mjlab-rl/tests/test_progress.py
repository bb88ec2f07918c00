"""The training progress line and curve: one line per iteration, the ETA, the records, the PNG."""

import io
import math

import pytest

from mjlab.rl.progress import TrainingProgress, wall_time_ticks, write_training_curve


def test_a_file_gets_plain_lines_every_few_iterations_and_the_last():
    out = io.StringIO()
    progress = TrainingProgress(10, headline="track", stream=out, every=4)
    for it in range(10):
        progress.update(it, 1500.0, float(it), 100.0 + it, {"track": 0.1 * it, "other": 1.0})
    progress.close()
    lines = out.getvalue().splitlines()
    assert [line.split(" | ")[0] for line in lines] == [
        "[mjlab] it 1/10",
        "[mjlab] it 4/10",
        "[mjlab] it 8/10",
        "[mjlab] it 10/10",
    ]
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()
    assert "1.5k steps/s" in lines[-1] and "ETA 0:00" in lines[-1] and "track 0.9" in lines[-1]
    assert len(progress.records) == 10
    assert progress.records[3]["reward/track"] == pytest.approx(0.3)


def test_a_terminal_gets_one_line_rewritten_in_place_and_a_resumed_run_counts_from_its_start():
    out = io.StringIO()
    progress = TrainingProgress(300, stream=out, live=True, start=200)
    for it in range(200, 203):
        progress.update(it, 100.0, None, None)
    progress.close()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and text.count("\n") == 1
    assert "it 203/300" in text and "reward" not in text


def test_quiet_records_without_printing():
    out = io.StringIO()
    progress = TrainingProgress(3, stream=out, quiet=True)
    progress.update(0, 10.0, 1.0, 2.0)
    assert out.getvalue() == "" and progress.records[0]["mean_reward"] == 1.0


def test_the_curve_is_a_png_and_a_csv_with_every_iteration(tmp_path):
    progress = TrainingProgress(5, stream=io.StringIO())
    for it in range(5):
        progress.update(it, 10.0, float(it), 5.0, {"track": 0.2, "alive": 0.1})
    png = write_training_curve(progress.records, tmp_path, title="t", headline="track")
    assert png == tmp_path / "training_curve.png" and png.read_bytes()[:4] == b"\x89PNG"
    rows = (tmp_path / "training_curve.csv").read_text().splitlines()
    assert rows[0].startswith("iteration,wall_time_s") and "reward/track" in rows[0]
    assert len(rows) == 6
    assert write_training_curve([], tmp_path) is None


@pytest.mark.parametrize(
    ("seconds", "unit"),
    [([2.9, 3.8, 6.2, 11.0], "s"), ([0.0, 600.0, 7000.0], "min"), ([5, 4e4], "h")],
)
def test_the_wall_time_axis_has_distinct_ticks_inside_short_and_long_runs(seconds, unit):
    got, scale, ticks = wall_time_ticks(seconds)
    assert got == unit and len(ticks) >= 2 and len(set(ticks)) == len(ticks)
    assert all(seconds[0] / scale <= t <= seconds[-1] / scale for t in ticks)


def test_reward_terms_join_over_iterations_without_values():
    from mjlab.rl.progress import _finite

    assert _finite([0, 1, 2, 3], [1.0, math.nan, 2.0, None]) == ([0, 2], [1.0, 2.0])
