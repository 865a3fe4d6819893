"""`scorer ladder --report`: each team's shown public score against that submission's private score, on the plain
public board and on the Ladder, as FILE.png or a self-contained FILE.html (the plot and the boards as text), each
opening with what it shows in plain words. A point right of the diagonal was shown more than it was worth on the
sessions nobody saw. matplotlib: pip install 'recsys-scorer[report]'."""

from __future__ import annotations

from pathlib import Path

from scorer.analytics.plots import COLOURS, _write, check_name, figure_with_lead, legend_below, plain_ticks, png_of, short

# The plain board's crosses are drawn above the Ladder's rings: where a team's two boards picked the same submission the
# cross sits inside the ring, and neither hides the other.
BOARDS = (("ladder", "Ladder: the score it shows", dict(marker="o", s=110, facecolors="none", edgecolors=COLOURS[0], linewidths=1.6,
                                                          zorder=2)),
          ("public", "plain public board: the best public score", dict(marker="x", s=55, color=COLOURS[1], linewidths=1.8, zorder=3)))


def _point(team: dict, key: str) -> tuple[float, float] | None:
    pick = team[key]
    if pick is None or pick["score"] is None or pick["private_score"] is None:
        return None
    return pick["score"], pick["private_score"]


def ladder_figure(board: dict, lead: str | None = None):
    """The boards' shown scores (across) against their submissions' private scores (up), a team's two points joined."""
    fig, ax, top = figure_with_lead(lead, 6.5)
    shown = []
    for team in board["teams"]:  # where a team's boards picked different submissions: the two joined, the team named
        pair = [p for p in (_point(team, "ladder"), _point(team, "public")) if p is not None]
        if len(pair) == 2 and pair[0] != pair[1]:
            ax.plot(*zip(*pair), color="grey", lw=0.8, alpha=0.6, zorder=1)
            ax.annotate(short(team["team"], 30, folder=True), pair[1], textcoords="offset points", xytext=(7, -3), fontsize=8,
                        va="top", color="dimgrey")
    for key, label, style in BOARDS:
        points = [p for p in (_point(t, key) for t in board["teams"]) if p is not None]
        if points:
            xs, ys = zip(*points)
            ax.scatter(xs, ys, label=label, **style)
            shown += [*xs, *ys]
    if shown:
        low, high = min(shown), max(shown)
        ax.plot([low, high], [low, high], color="grey", lw=1, ls="--", label="shown = worth (public = private)", zorder=0)
    plain_ticks(ax, "x", 6)
    plain_ticks(ax, "y", 6)
    ax.set_xlabel(f"public score a board showed ({board['metric']})")
    ax.set_ylabel("private score of that submission")
    ax.set_title(f"{len(board['teams'])} teams: what each board's shown score was worth on the private sessions "
                 "(right of the dashed line: shown above its worth)", fontsize=10)
    ax.grid(alpha=0.3)
    legend_below(ax, ncol=3)
    fig.tight_layout(rect=(0, 0, 1, top))
    return fig


def ladder_png(board: dict, dpi: int = 110, lead: str | None = None) -> bytes:
    """ladder_figure as PNG bytes."""
    return png_of(ladder_figure(board, lead), dpi)


def write_ladder_report(path, board: dict) -> Path:
    """Write FILE.png (the plot, the lead and the rule above it) or FILE.html (self-contained: the lead, the plot and the
    boards)."""
    from scorer.analytics.ladder.board import lead, render_text

    check_name(path)
    opening_ = lead(board)
    return _write(path, lambda drawn: ladder_png(board, lead=drawn and f"{drawn}\nThe rule: {board['rule']}."), "scorer ladder",
                  opening_, "", render_text(board, opening=False))
