"""`scorer ladder --report`: each team's shown public score against that submission's private score, on the plain
public board and on the Ladder, as FILE.png or a self-contained FILE.html (the plot and the boards as text). A point
right of the diagonal was shown more than it was worth on the sessions nobody saw. matplotlib: pip install
'recsys-scorer[report]'."""

from __future__ import annotations

from pathlib import Path

from scorer.analytics.plots import COLOURS, _pyplot, _write, check_name, png_of


def ladder_png(board: dict, dpi: int = 110) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 6))
    shown = []
    for key, label, colour, marker in (("public", "plain public board: best public score", COLOURS[1], "x"),
                                       ("ladder", "Ladder: shown score", COLOURS[0], "o")):
        points = [(t[key]["score"], t[key]["private_score"]) for t in board["teams"]
                  if t[key] is not None and t[key]["score"] is not None and t[key]["private_score"] is not None]
        if points:
            xs, ys = zip(*points)
            ax.scatter(xs, ys, label=label, color=colour, marker=marker, alpha=0.8)
            shown += [*xs, *ys]
    if shown:
        low, high = min(shown), max(shown)
        ax.plot([low, high], [low, high], color="grey", lw=1, ls="--", label="public = private")
    ax.set_xlabel(f"public score shown ({board['metric']})")
    ax.set_ylabel("private score of that submission")
    ax.set_title(f"{len(board['teams'])} teams: what the shown score was worth on the private sessions", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return png_of(fig, dpi)


def write_ladder_report(path, board: dict) -> Path:
    """Write FILE.png (the plot) or FILE.html (self-contained: the plot and the boards)."""
    from scorer.analytics.ladder_board import render_text

    check_name(path)
    return _write(path, ladder_png(board), "scorer ladder", "", render_text(board))
