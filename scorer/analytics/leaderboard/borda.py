"""A Borda count across several metrics, as the Spotify Million Playlist Dataset Challenge (RecSys 2018) ranked its teams
on R-precision, NDCG and recommended-songs clicks.

Per metric the P submissions are ranked (the better figure first: the larger, or the smaller for a metric where lower is
better, such as clicks); equal figures share their best place (1, 2, 2, 4). The submission at place p receives
P − p + 1 points. The points are added up over the metrics; more points rank first, and equal totals are told apart
top-down: more first places, then more second places, and so on (then by name). A submission without a figure for a
metric takes the last place of that metric.
"""

from __future__ import annotations

import math

from scorer.wording import fixed, inline


def borda(figures: dict[str, dict[str, float | None]], metrics: list) -> dict:
    """The board's JSON: {"metrics", "submissions": [{"name", "rank", "points", "figures", "places", "points_by"}]}.

    figures: {submission name: {metric text: figure or None}}; metrics: scorer.spec.metrics.Metric objects, in order."""
    names = list(figures)
    count = len(names)
    places: dict[str, dict[str, int]] = {name: {} for name in names}
    for metric in metrics:
        text = str(metric)
        sign = -1.0 if metric.lower_is_better else 1.0
        key = {name: (sign * figures[name][text] if _finite(figures[name].get(text)) else -math.inf) for name in names}
        ordered = sorted(names, key=lambda name: -key[name])
        for at, name in enumerate(ordered):
            tied = at > 0 and key[name] == key[ordered[at - 1]]
            places[name][text] = places[ordered[at - 1]][text] if tied else at + 1
    rows = []
    for name in names:
        points_by = {text: count - place + 1 for text, place in places[name].items()}
        counts = [sum(1 for place in places[name].values() if place == p) for p in range(1, count + 1)]
        rows.append({"name": name, "points": sum(points_by.values()), "figures": figures[name], "places": places[name],
                     "points_by": points_by, "_order": (-sum(points_by.values()), *(-c for c in counts), name)})
    rows.sort(key=lambda row: row["_order"])
    for at, row in enumerate(rows):
        row["rank"] = rows[at - 1]["rank"] if at and row["_order"][:-1] == rows[at - 1]["_order"][:-1] else at + 1
    for row in rows:
        del row["_order"]
    return {"metrics": [str(m) for m in metrics], "lower_is_better": [str(m) for m in metrics if m.lower_is_better],
            "method": "Borda count: P - place + 1 points per metric (P submissions), ties top-down by places", "submissions": rows}


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def render_text(board: dict) -> str:
    """The ranked table: rank, points, and per metric its figure and place."""
    metrics = board["metrics"]
    lower = set(board["lower_is_better"])
    header = f"{'rank':>4}  {'points':>6}  " + "  ".join(f"{text + (' (lower)' if text in lower else ''):>19}" for text in metrics) + "  submission"
    lines = [f"Borda count of {len(board['submissions'])} submissions over {', '.join(metrics)} "
             f"({len(board['submissions'])} points for a first place, 1 for the last)", header]
    for row in board["submissions"]:
        cells = "  ".join(f"{fixed(row['figures'].get(text)):>14} #{row['places'][text]:<3}" for text in metrics)
        lines.append(f"{row['rank']:>4}  {row['points']:>6}  {cells}  {inline(row['name'])}")
    unranked = board.get("unranked") or []
    lines += [f"unranked: {inline(u['name'])}: {inline(u['reason'])}" for u in unranked]
    return "\n".join(lines)
