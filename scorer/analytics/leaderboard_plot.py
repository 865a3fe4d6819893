"""The leaderboard's report: a rank-interval plot (and the scores with their intervals), as FILE.png or a self-contained
FILE.html (the plot embedded, the table as text). matplotlib: pip install 'recsys-scorer[report]'."""

from __future__ import annotations

import io
import os
from pathlib import Path

from scorer.analytics.plots import COLOURS, _integer_ticks, _pyplot, _write, check_name


def _label(name: str, width: int = 36) -> str:
    base = os.path.basename(name) or name
    return base if len(base) <= width else "…" + base[-(width - 1):]


def leaderboard_png(board: dict, dpi: int = 110) -> bytes:
    """Left: each submission's rank and rank interval; right: its score and score interval; colour: its tier."""
    plt = _pyplot()
    rows = board["submissions"]
    height = max(3.0, 0.28 * len(rows) + 1.6)
    fig, (ranks, scores) = plt.subplots(1, 2, figsize=(13, height), sharey=True, gridspec_kw={"width_ratios": [3, 2]})
    ys = list(range(len(rows)))
    for y, s in zip(ys, rows):
        colour = COLOURS[((s["tier"] or 1) - 1) % len(COLOURS)]
        if s["rank_low"] is not None:
            ranks.plot([s["rank_low"] - 0.3, s["rank_high"] + 0.3], [y, y], color=colour, lw=6, alpha=0.45, solid_capstyle="butt")
            scores.plot([s["score_low"], s["score_high"]], [y, y], color=colour, lw=4, alpha=0.45, solid_capstyle="butt")
        ranks.plot([s["rank"]], [y], "o", color=colour, ms=6)
        if s["score"] is not None:
            scores.plot([s["score"]], [y], "o", color=colour, ms=6)
        if s["p_first"]:
            ranks.annotate(f"p₁={s['p_first']:.2f}", (max(s["rank_high"], s["rank"]) + 0.3, y), textcoords="offset points",
                           xytext=(6, 0), va="center", fontsize=7)
    ranks.set_yticks(ys, [f"{s['rank']}. {_label(s['name'])}" for s in rows], fontsize=8)
    ranks.set_ylim(len(rows) - 0.5, -0.5)
    ranks.set_xlim(0.5, max([s["rank_high"] or s["rank"] for s in rows] + [1]) + 1.5)
    ranks.xaxis.set_major_locator(_integer_ticks())
    ranks.set_xlabel("rank (1 = best); bar: the rank interval")
    ranks.grid(alpha=0.3, axis="x")
    from matplotlib.ticker import MaxNLocator

    scores.xaxis.set_major_locator(MaxNLocator(nbins=5))
    scores.set_xlabel(f"score ({board.get('metric') or 'weighted'})")
    scores.grid(alpha=0.3, axis="x")
    if board["resamples"]:
        control = board["control"]
        ranks.set_title(f"{100 * board['level']:g}% rank intervals, {board['resamples']:,} joint resamples; "
                        f"colour: tier ({control['method']}, α = {control['alpha']:g})", fontsize=10)
        scores.set_title(f"score and its {100 * board['level']:g}% interval", fontsize=10)
    else:
        ranks.set_title("ranks (no intervals: no resamples)", fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def write_leaderboard_report(path, board: dict) -> Path:
    """Write FILE.png (the plot) or FILE.html (self-contained: the plot and the table)."""
    from scorer.analytics.leaderboard import render_text

    check_name(path)
    return _write(path, leaderboard_png(board), "scorer leaderboard", "", render_text(board))
