"""The leaderboard's report: a rank-interval plot (and the scores with their intervals), as FILE.png or a self-contained
FILE.html (the plot embedded, the table as text), each opening with what it shows in plain words.
matplotlib: pip install 'recsys-scorer[report]'."""

from __future__ import annotations

from pathlib import Path

from scorer.analytics.plots import (
    COLOURS,
    _integer_ticks,
    _write,
    check_name,
    figure_with_lead,
    legend_below,
    plain_ticks,
    png_of,
    short,
)

LEGEND_TIERS = 12  # up to this many tiers a legend names each colour; past it a colour bar runs from tier 1 to the last
NAME_WIDTH = 34  # characters of a submission's name on the plot (its start and its end; the table has it whole)


def tier_colours(tiers: int) -> list:
    """A colour per tier, every one distinct: the report's palette, then tab20, then a sequential map (dark = tier 1)."""
    if tiers <= len(COLOURS):
        return list(COLOURS)[: max(tiers, 1)]
    from matplotlib import colormaps

    if tiers <= 20:
        return [colormaps["tab20"](i) for i in range(tiers)]
    return [colormaps["viridis"](i / (tiers - 1)) for i in range(tiers)]


def leaderboard_figure(board: dict, lead: str | None = None):
    """Left: each submission's rank and rank interval; right: its score and score interval; colour: its tier, with a
    legend under the ranks (or a colour bar) saying which; lead: the plain-words opening drawn above (a PNG's)."""
    rows = board["submissions"]
    fig, (ranks, scores), top = figure_with_lead(lead, max(3.0, 0.3 * len(rows) + 1.8), 1, 2, sharey=True,
                                                 gridspec_kw={"width_ratios": [3, 2]})
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
            ranks.annotate(f"1st in {100 * s['p_first']:.0f}%", (max(s["rank_high"], s["rank"]) + 0.3, y), textcoords="offset points",
                           xytext=(6, 0), va="center", fontsize=8)
    ranks.set_yticks(ys, [f"{s['rank']}. {short(s['name'], NAME_WIDTH)}" for s in rows], fontsize=9)
    ranks.set_ylim(len(rows) - 0.5, -0.5)
    ranks.set_xlim(0.5, max([s["rank_high"] or s["rank"] for s in rows] + [1]) + 2.5)
    ranks.xaxis.set_major_locator(_integer_ticks())
    ranks.grid(alpha=0.3, axis="x")
    plain_ticks(scores, "x", 5)
    scores.set_xlabel(f"score ({board.get('metric') or 'weighted'})")
    scores.grid(alpha=0.3, axis="x")
    if board["resamples"]:
        level = f"{100 * board['level']:g}%"
        ranks.set_xlabel(f"rank (1 = best): the dot as scored,\nthe bar the ranks it takes in {level} of "
                         f"{board['resamples']:,} redraws of the sessions", fontsize=9)
        ranks.set_title("rank, and how sure it is", fontsize=10)
        scores.set_title(f"score, and its {level} interval", fontsize=10)
        _tier_key(fig, ranks, scores, colours)
    else:
        ranks.set_xlabel("rank (1 = best)")
        ranks.set_title("ranks (no intervals: no resamples)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, top))
    return fig


TIER_TITLE = "colour: tier (1 = top); within a tier the gaps to its first may be chance"


def _tier_key(fig, ranks, scores, colours: list) -> None:
    """What a colour means: a legend of the tiers under the ranks (over no point), or past LEGEND_TIERS a colour bar from
    tier 1 to the last beside the scores."""
    if len(colours) <= LEGEND_TIERS:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colour, marker="o", lw=4, alpha=0.8) for colour in colours]
        legend_below(ranks, handles, [f"tier {tier}" for tier in range(1, len(colours) + 1)], ncol=min(len(colours), 6),
                     title=TIER_TITLE, title_fontsize=8)
        return
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap

    scale = ScalarMappable(norm=BoundaryNorm(range(1, len(colours) + 2), len(colours)), cmap=ListedColormap(colours))
    fig.colorbar(scale, ax=scores, label="tier (1 = top)", ticks=[1, len(colours)])


def leaderboard_png(board: dict, dpi: int = 110, lead: str | None = None) -> bytes:
    """leaderboard_figure as PNG bytes."""
    return png_of(leaderboard_figure(board, lead), dpi)


def write_leaderboard_report(path, board: dict) -> Path:
    """Write FILE.png (the plot) or FILE.html (self-contained: the plot and the table), each opening with the lead."""
    from scorer.analytics.leaderboard.board import lead, render_text

    check_name(path)
    return _write(path, lambda opening_: leaderboard_png(board, lead=opening_), "scorer leaderboard", lead(board), "",
                  render_text(board, opening=False))
