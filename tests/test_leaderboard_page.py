"""The leaderboard's HTML page as a person sees it: headless Chromium (Debian's package `chromium`) takes a screenshot,
and the rank-interval plot's pixels must be on it. The same page without its plot shows none of them (so the check
can fail)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import truth_lines
from scorer.cli.main import main
from test_leaderboard import make_submission, make_truth

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")



def screenshot(page, out, size: str = "1400,1000") -> np.ndarray:
    """The page rendered at `size` (width,height in pixels) by headless Chromium, as an (h, w, 3) array of floats."""
    import matplotlib.image

    with tempfile.TemporaryDirectory(prefix="scorer-chromium-") as profile:
        done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", f"--window-size={size}", "--hide-scrollbars", f"--screenshot={out}",
                               page.as_uri()], capture_output=True, text=True, timeout=180)
    assert out.is_file(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    return matplotlib.image.imread(out)[..., :3]


def coloured_pixels(image: np.ndarray) -> int:
    """Pixels of a saturated colour: only the plot's markers and bars have one (the text is black, the page white and grey)."""
    return int((image.max(axis=-1) - image.min(axis=-1) > 0.25).sum())


def test_the_page_shows_the_rank_interval_plot(tmp_path, capsys):
    rng = np.random.default_rng(3)
    truth = make_truth(rng, 300)
    truth_path = tmp_path / "truth.jsonl"
    truth_path.write_text(truth_lines(truth))
    paths = []
    for k, strength in enumerate((0.6, 0.55, 0.3)):
        path = tmp_path / f"team{k}.csv"
        path.write_text(make_submission(rng, truth, strength))
        paths.append(str(path))
    page = tmp_path / "leaderboard.html"
    assert main(["leaderboard", *paths, "--truth", str(truth_path), "--bootstrap", "200", "--report", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text()
    assert "team0.csv" in text and "data:image/png;base64," in text

    shown = screenshot(page, tmp_path / "shown.png")
    assert shown.shape[0] >= 500 and shown.shape[1] >= 1000
    assert coloured_pixels(shown) > 1000, "the plot's markers and interval bars are not on the screenshot"

    blank = tmp_path / "blank.html"
    blank.write_text(re.sub(r"<img [^>]*>", "", text))
    assert coloured_pixels(screenshot(blank, tmp_path / "blank.png")) < 50
