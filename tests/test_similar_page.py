"""`scorer similar --report`'s page as a person sees it: headless Chromium takes a screenshot, and the heatmap's coloured
cells must be on it, the flagged pair's cell darker than the others. The same page without its table shows none of them
(so the check can fail)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from scorer.cli.main import main
from test_leaderboard_page import CHROMIUM, coloured_pixels, screenshot
from test_similar import field, planted, team_rows, write

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")


def tinted_pixels(image: np.ndarray) -> int:
    """Pixels of any tint: a cell of low Jaccard is a pale pink, the text black or grey and the page white."""
    return int((image.max(axis=-1) - image.min(axis=-1) > 0.03).sum())


@pytest.mark.slow
def test_the_page_shows_the_heatmap(tmp_path, capsys):
    rng = np.random.default_rng(11)
    ground = field(rng, 400)
    paths = [write(tmp_path / f"team{i}.csv", ground, team_rows(rng, ground, 0.3)) for i in range(6)]
    a_rows, b_rows = team_rows(rng, ground, 0.3), team_rows(rng, ground, 0.3)
    paths.append(write(tmp_path / "source.csv", ground, a_rows))
    rows, order = planted(rng, ground, a_rows, b_rows)["renamed_reordered"]
    paths.append(write(tmp_path / "copy.csv", ground, rows, order))
    page = tmp_path / "similar.html"
    assert main(["similar", *paths, "--report", str(page)]) == 0
    assert "copy.csv" in capsys.readouterr().out
    text = page.read_text()
    assert re.search(r"class='cell flag", text) and "source.csv" in text

    shown = screenshot(page, tmp_path / "shown.png")
    cells = len(paths) * (len(paths) - 1)
    assert tinted_pixels(shown) > cells * 100, "the heatmap's cells are not on the screenshot"
    red = shown[..., 0] - shown[..., 2]
    assert (red > 0.7).sum() > 100, "the flagged pair's cell is not deep red"

    blank = tmp_path / "blank.html"
    blank.write_text(re.sub(r"<table class='heat'>.*?</table>", "", text, flags=re.S).replace("<p class='key'>", "<p>")
                     .replace("<span style", "<span data-style"))
    blank_shown = screenshot(blank, tmp_path / "blank.png")
    assert coloured_pixels(blank_shown) < 50 and tinted_pixels(blank_shown) < cells * 10
