"""The leaderboard's report: a rank-interval plot (and the scores with their intervals), as FILE.png or a self-contained
FILE.html (the plot embedded, the table as text). matplotlib: pip install 'recsys-scorer[report]'."""

from __future__ import annotations

import os
from pathlib import Path

from scorer.analytics.plots import COLOURS, _integer_ticks, _pyplot, _write, check_name, png_of


def _label(name: str, width: int = 36) -> str:
    base = os.path.basename(name) or name
    return base if len(base) <= width else "…" + base[-(width - 1):]


LEGEND_TIERS = 12  # up to this many tiers a legend names each colour; past it a colour bar runs from tier 1 to the last


def tier_colours(tiers: int) -> list:
    """A colour per tier, every one distinct: the report's palette, then tab20, then a sequential map (dark = tier 1)."""
    if tiers <= len(COLOURS):
        return list(COLOURS)[: max(tiers, 1)]
    from matplotlib import colormaps

    if tiers <= 20:
        return [colormaps["tab20"](i) for i in range(tiers)]
    return [colormaps["viridis"](i / (tiers - 1)) for i in range(tiers)]


def leaderboard_figure(board: dict):
    """Left: each submission's rank and rank interval; right: its score and score interval; colour: its tier, with a
    legend (or a colour bar) saying which."""
    plt = _pyplot()
    rows = board["submissions"]
    height = max(3.0, 0.28 * len(rows) + 1.6)
    fig, (ranks, scores) = plt.subplots(1, 2, figsize=(13, height), sharey=True, gridspec_kw={"width_ratios": [3, 2]})
    ys = list(range(len(rows)))
    n_tiers = max([s["tier"] or 1 for s in rows] + [1])
    colours = tier_colours(n_tiers)
    for y, s in zip(ys, rows):
        colour = colours[(s["tier"] or 1) - 1]
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
        _tier_key(fig, scores, colours)
    else:
        ranks.set_title("ranks (no intervals: no resamples)", fontsize=10)
    fig.tight_layout()
    return fig


def _tier_key(fig, ax, colours: list) -> None:
    """What a colour means: a legend of the tiers, or past LEGEND_TIERS a colour bar from tier 1 to the last."""
    if len(colours) <= LEGEND_TIERS:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colour, marker="o", lw=4, alpha=0.8) for colour in colours]
        ax.legend(handles, [f"tier {tier}" for tier in range(1, len(colours) + 1)], title="tier (1 = top; within a tier: "
                  "no significant gap)", fontsize=7, title_fontsize=7, loc="best")
        return
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap

    scale = ScalarMappable(norm=BoundaryNorm(range(1, len(colours) + 2), len(colours)), cmap=ListedColormap(colours))
    fig.colorbar(scale, ax=ax, label="tier (1 = top)", ticks=[1, len(colours)])


def leaderboard_png(board: dict, dpi: int = 110) -> bytes:
    """leaderboard_figure as PNG bytes."""
    return png_of(leaderboard_figure(board), dpi)


def write_leaderboard_report(path, board: dict) -> Path:
    """Write FILE.png (the plot) or FILE.html (self-contained: the plot and the table)."""
    from scorer.analytics.leaderboard import render_text

    check_name(path)
    return _write(path, leaderboard_png(board), "scorer leaderboard", "", render_text(board))
