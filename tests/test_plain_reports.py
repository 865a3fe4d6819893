"""Reports a participant or an organiser without statistics can read (issue 44, item 31): every report opens with what it
shows in plain words (which file is better, how sure), its axes show the figures themselves, nothing covers a point or
runs past the figure or its box, and names read as teams where a teams file gives them."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import run_cli, run_main, truth_lines
from test_leaderboard import make_submission, make_truth

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def board_files(tmp_path_factory):
    """A truth of 400 sessions and five files of falling strength, two with long names."""
    folder = tmp_path_factory.mktemp("plain")
    names = ["team_alpha_a_very_long_submission_name_lgbm_ranker_blend_final_v7.csv", "beta.csv", "gamma.csv",
             "team_delta_another_long_name_covisitation_top20_submission_v3.csv", "epsilon.csv"]
    rng = np.random.default_rng(31)
    truth = make_truth(rng, 400)
    (folder / "truth.jsonl").write_text(truth_lines(truth))
    for name, strength in zip(names, (0.9, 0.55, 0.5, 0.45, 0.1)):
        (folder / name).write_text(make_submission(rng, truth, strength))
    return folder / "truth.jsonl", [folder / name for name in names]


@pytest.fixture
def saved(monkeypatch):
    """The figures the reports save, kept for a look at what they draw (the PNGs are written as ever)."""
    from matplotlib.figure import Figure

    figures = []
    save = Figure.savefig

    def keep(self, *args, **kwargs):
        figures.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def drawn(figure):
    """The figure drawn once (text extents are measured on a drawn canvas; a closed figure gets one again), and its
    renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    figure.canvas.draw()
    return figure.canvas.get_renderer()


def lead_text(figure):
    found = [text for text in figure.texts if text.get_gid() == "lead"]
    assert found, "the figure does not open with what it shows in words"
    return found[0]


def assert_within(figure):
    """Everything a panel draws (ticks, labels, titles, notes, legend) and every text of the figure within its width:
    nothing is cut at its edge."""
    renderer = drawn(figure)
    width = figure.get_figwidth() * figure.dpi
    boxes = [(ax.get_tightbbox(renderer), ax.get_title(loc="center") or ax.get_title(loc="left")) for ax in figure.axes]
    boxes += [(text.get_window_extent(renderer), text.get_text()) for text in figure.texts if text.get_text().strip()]
    for box, what in boxes:
        assert -1 <= box.x0 and box.x1 <= width + 1, f"cut at the figure's edge: {what[:80]!r}"


def assert_lead_first_and_within(figure):
    """The lead sits above every panel and within the figure's width."""
    renderer = drawn(figure)
    lead = lead_text(figure).get_window_extent(renderer)
    width = figure.get_figwidth() * figure.dpi
    assert 0 <= lead.x0 and lead.x1 <= width, (lead, width)
    assert all(lead.y0 >= ax.get_tightbbox(renderer).y1 - 1 for ax in figure.axes), "a panel reaches into the lead"


def data_points(ax):
    """Display coordinates of every point a line or marker of the axis draws (interval bars sampled along their length),
    with the radius it is drawn at, in pixels."""
    points = []
    for line in ax.lines:
        xy = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if line.get_marker() not in (None, "None", "", " "):
            points += [(x, y, line.get_markersize()) for x, y in xy]
        if line.get_linestyle() not in ("None", "", " ") and len(xy) > 1:
            for (x0, y0), (x1, y1) in zip(xy[:-1], xy[1:]):
                points += [(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, line.get_linewidth()) for t in np.linspace(0, 1, 25)]
    for collection in ax.collections:
        if hasattr(collection, "get_segments"):  # interval bars
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = ax.transData.transform(segment[[0, -1]])
                points += [(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, 1.5) for t in np.linspace(0, 1, 25)]
        elif len(collection.get_offsets()):  # scattered markers
            xy = collection.get_offset_transform().transform(collection.get_offsets())
            points += [(x, y, float(np.sqrt(collection.get_sizes().max()))) for x, y in xy]
    return points


def covered(box, points, dpi) -> list:
    return [(x, y) for x, y, size in points
            if box.x0 - size * dpi / 144 < x < box.x1 + size * dpi / 144 and box.y0 - size * dpi / 144 < y < box.y1 + size * dpi / 144]


# -- the participant's report: the interval panel shows the scores; the truth-size counts are level and readable --------

def analytics_of(truth_path, path, *options):
    code, out, _ = run_cli("score", path, "--truth", truth_path, *options, "--format", "json")
    assert code == 0
    result = json.loads(out)
    return result, result.pop("analytics")


def test_the_interval_panel_is_on_the_scores_scale(board_files):
    from scorer.analytics.plots import report_figure

    truth_path, paths = board_files
    summary, analytics = analytics_of(truth_path, paths[1], "--bootstrap", "200", "--split", "public=0.5")
    figure = report_figure(summary, analytics)
    drawn(figure)
    subsets = analytics["bootstrap"]["subsets"]
    labels = [("score", lambda f: f["score"])] + [(t, lambda f, t=t: f["metrics"][t]["recall@20"]) for t in summary["metrics"]]
    for label, pick in labels:
        values = [pick(f)["value"] for f in subsets.values()]
        holding = [ax for ax in figure.axes
                   if all(any(np.isclose(x, v) for line in ax.lines for x in np.ravel(line.get_xdata())) for v in values)]
        assert holding, f"{label}: the figures themselves ({values}) are not drawn"
        ax = holding[0]
        low, high = min(pick(f)["low"] for f in subsets.values()), max(pick(f)["high"] for f in subsets.values())
        start, end = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if start <= t <= end]
        assert ticks and min(ticks) <= high and max(ticks) >= low, f"{label}: the axis reads {ticks}, not the figures {low}-{high}"
        shown = [float(t.get_text().replace("\u2212", "-")) for t in ax.get_xticklabels() if t.get_text()]
        assert np.allclose(shown, ax.get_xticks()[: len(shown)]) and not ax.xaxis.get_offset_text().get_text(), \
            "the tick labels are not the scores (an offset or a scale factor)"
        assert high - low >= 0.5 * (end - start), "the intervals are dots on a scale much wider than they are"


def test_the_truth_size_counts_are_level_readable_and_apart(board_files):
    from scorer.analytics.plots import report_figure

    truth_path, paths = board_files
    summary, analytics = analytics_of(truth_path, paths[1], "--breakdown")
    for rows in analytics["breakdown"]["truth_size"].values():  # OTTO-size counts: the widest labels
        for row, count in zip(rows, (1_588_147, 250_893, 124_797, 0)):
            row["sessions"] = count
    figure = report_figure(summary, analytics)
    renderer = drawn(figure)
    labels = [text for ax in figure.axes for text in ax.texts if text.get_gid() == "sessions"]
    assert labels and {text.get_text() for text in labels} >= {"1,588,147", "250,893"}  # the exact counts, none lost
    assert all(text.get_rotation() == 0 and text.get_fontsize() >= 8 for text in labels)
    boxes = [text.get_window_extent(renderer) for text in labels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), "two counts are written over each other"
    frame = labels[0].axes.get_window_extent(renderer)
    assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 for box in boxes), "a count runs out of its panel"


def test_the_score_report_opens_with_the_score_and_how_sure_in_words(board_files, tmp_path, saved):
    from scorer.analytics.plots import write_report

    truth_path, paths = board_files
    summary, analytics = analytics_of(truth_path, paths[1], "--bootstrap", "100", "--breakdown")
    write_report(tmp_path / "r.png", summary, analytics)
    lead = re.sub(r"\s+", " ", lead_text(saved[-1]).get_text())
    low, high = (analytics["bootstrap"]["subsets"]["all"]["score"][end] for end in ("low", "high"))
    assert lead.startswith(f"{summary['submission']} scores {summary['score']:.4f}")
    assert f"between {low:.4f} and {high:.4f}" in lead and "of the clicks" in lead
    assert_lead_first_and_within(saved[-1])
    page = tmp_path / "r.html"
    assert run_cli("score", paths[1], "--truth", truth_path, "--bootstrap", "50", "--report", page)[0] == 0
    assert re.search(r"</h1><p class='lead'>[^<]*scores [0-9.]+ \(recall@20", page.read_text())


# -- compare: the better file named in words, first -----------------------------------------------------------------------

def test_compare_says_which_file_is_better_first(board_files, tmp_path):
    truth_path, paths = board_files
    strong, weak = paths[0], paths[4]
    code, out, _ = run_cli("compare", strong, weak, "--truth", truth_path, "--bootstrap", "200")
    assert code == 0 and out.startswith(f"A ({strong}) is better: it scores "), out[:300]
    code, out, _ = run_cli("compare", weak, strong, "--truth", truth_path, "--bootstrap", "200")
    assert out.startswith(f"B ({strong}) is better: it scores ") and re.search(r"\(p [<=] 0\.00\d\)", out.splitlines()[0])
    code, out, _ = run_cli("compare", paths[1], paths[2], "--truth", truth_path, "--bootstrap", "200", "--split", "public=0.5")
    assert out.startswith("== public sessions") and out.splitlines()[1].startswith(("A (", "B (", "Neither is clearly better"))
    page = tmp_path / "c.html"
    assert run_cli("compare", strong, weak, "--truth", truth_path, "--bootstrap", "100", "--report", page)[0] == 0
    assert f"<p class='lead'>A ({strong}) is better" in page.read_text()


def test_a_gap_that_may_be_chance_is_said_to_be_so():
    from scorer.analytics.compare import verdict

    def row(difference, low, high, p):
        return {"a": 0.5 + difference, "b": 0.5, "difference": difference, "low": low, "high": high, "p_value": p,
                "wins": 1, "ties": 1, "losses": 1}

    figures = {"a": "a.csv", "b": "b.csv", "metric": "recall@20", "resamples": 1000, "seed": 0, "level": 0.95, "sessions": 9,
               "score": row(0.001, -0.0005, 0.0025, 0.21), "types": {"clicks": row(0.002, 0.001, 0.003, 0.004),
                                                                     "carts": row(-0.001, -0.002, 0.0005, 0.3)}}
    said = verdict(figures)
    assert said.startswith("Neither is clearly better: A (a.csv) scores 0.501000 against 0.500000 for B (b.csv)")
    assert "21% of the time (p = 0.210)" in said and "By type: A is better on clicks; no clear difference on carts." in said
    figures["score"] = row(-0.001, -0.0015, -0.0005, 0.004)
    assert verdict(figures).startswith("B (b.csv) is better: it scores 0.500000 against 0.499000 for A (a.csv)")
    figures["score"] = row(0.0, 0.0, 0.0, 1.0)
    assert verdict(figures) == "A (a.csv) and B (b.csv) score the same: 0.500000."


def test_the_compare_figure_keeps_its_names_key_and_p_values_in_view(board_files, saved):
    from scorer.analytics.compare import compare
    from scorer.analytics.plots import compare_png
    from scorer.api import score

    truth_path, paths = board_files
    a, b = (score(p, truth_path) for p in (paths[0], paths[3]))  # two long names
    compare_png({"all": compare(a, b, n=100)})
    figure = saved[-1]
    assert_within(figure)
    renderer = drawn(figure)
    ax = figure.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    assert not covered(legend, data_points(ax), figure.dpi)
    labels = [text.get_window_extent(renderer) for text in ax.texts if text.get_text().startswith("p")]
    assert len(labels) == 4 and not any(x.overlaps(y) for i, x in enumerate(labels) for y in labels[i + 1:])


# -- the leaderboard: the tier key covers no point, the words are plain ---------------------------------------------------

def wide_board(count: int = 12) -> dict:
    """A board whose score intervals span the whole axis: no corner of the panels is empty."""
    submissions = [{"name": f"team_{i:02d}_a_very_long_submission_name_with_many_parts_lgbm_blend_v{i}.csv", "score": 0.5 - i / 200,
                    "rank": i + 1, "rank_low": max(1, i - 4), "rank_high": min(count, i + 6), "tier": 1 + i // 2,
                    "p_first": 0.5 if i < 2 else 0.0, "p_top": 0.0, "score_low": 0.3, "score_high": 0.6, "figures": {"clicks": 0.5}}
                   for i in range(count)]
    return {"metric": "recall@20", "types": ["clicks"], "sessions": 1000, "resamples": 1000, "seed": 0, "level": 0.95, "top_k": 3,
            "control": {"method": "holm", "name": "Holm (family-wise error rate)", "alpha": 0.05, "comparisons": 66},
            "submissions": submissions, "unranked": [], "pairs": []}


def test_the_tier_key_covers_no_point():
    from scorer.analytics.leaderboard.plot import leaderboard_figure

    figure = leaderboard_figure(wide_board())
    renderer = drawn(figure)
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    assert legends, "no key to the tiers' colours"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in figure.axes:
            assert not covered(box, data_points(ax), figure.dpi), "the tier key is drawn over the board's points"


def test_the_leaderboard_plot_speaks_plainly_and_keeps_the_teams_names():
    from scorer.analytics.leaderboard.plot import leaderboard_figure

    board = wide_board()
    figure = leaderboard_figure(board)
    drawn(figure)
    words = " ".join(t.get_text() for ax in figure.axes for t in [ax.title, ax.xaxis.label, *ax.texts, *ax.get_yticklabels()]
                     + ([ax.get_legend().get_title()] if ax.get_legend() else []))
    assert not re.search(r"Holm|holm|α|p₁|p_first|E\|Δrank\|", words), words
    assert "1st in 50%" in words and "within a tier the gaps to its first may be chance" in words
    names = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert names[0].startswith("1. team_00_") and names[0].endswith("blend_v0.csv") and "…" in names[0]


def test_the_leaderboard_opens_with_who_is_first_and_how_sure(board_files, tmp_path):
    truth_path, paths = board_files
    page = tmp_path / "board.html"
    code, out, _ = run_main("leaderboard", *paths, "--truth", truth_path, "--bootstrap", "200", "--split", "public=0.5",
                            "--report", page)
    first = out.splitlines()[0]
    assert code == 0 and first.startswith(f"This board ranks 5 submissions by recall@20 on 400 sessions. {paths[0]} is first with "), first
    assert "came first in" in first and "tier" in first and "may move" in first
    text = page.read_text()
    assert re.search(r"</h1><p class='lead'>This board ranks 5 submissions by recall@20", text)
    key = out[out.index("key:"):]
    for term in ("p_first", "E|Δrank|"):  # a technical term only beside what it means
        assert re.search(rf"{re.escape(term)}\s+how (often|many)", key), key


# -- the ladder: the plain board's crosses above the Ladder's rings, the rule within the figure ---------------------------

def ladder_board_of(tmp_path):
    from test_ladder import honest_files, teams_csv

    truth_path, paths = honest_files(tmp_path, (0.3, 0.35, 0.6, 0.62, 0.5, 0.4), sessions=600)
    teams = teams_csv(tmp_path / "teams.csv", [(p, name, k) for k, (p, name) in enumerate(zip(
        paths, ["Team Rocket Recsys Research Group (Berlin office)", "Team Rocket Recsys Research Group (Berlin office)",
                "kagglers united", "kagglers united", "δelta", "δelta"]))])
    code, out, _ = run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4", "--format", "json")
    assert code == 0
    return json.loads(out), teams, truth_path


def test_the_plain_boards_markers_are_drawn_above_the_ladders(tmp_path, saved):
    from scorer.analytics.ladder.plot import ladder_png

    board, _, _ = ladder_board_of(tmp_path)
    ladder_png(board)
    ax = saved[-1].axes[0]
    by_label = {collection.get_label(): collection for collection in ax.collections}
    ladder = next(c for label, c in by_label.items() if label.startswith("Ladder"))
    plain = next(c for label, c in by_label.items() if label.startswith("plain public board"))
    assert plain.get_zorder() > ladder.get_zorder(), "the Ladder's dots hide the plain board's markers"
    assert (ladder.get_facecolors()[:, 3] == 0).all(), "a filled Ladder dot hides what is under it"


def test_the_ladder_png_says_its_rule_within_the_figure(tmp_path, saved):
    from scorer.analytics.ladder.board import RULE, render_text
    from scorer.analytics.ladder.plot import write_ladder_report

    board, teams, truth = ladder_board_of(tmp_path)
    write_ladder_report(tmp_path / "ladder.png", board)
    figure = saved[-1]
    assert_lead_first_and_within(figure)
    assert_within(figure)
    opening = re.sub(r"\s+", " ", lead_text(figure).get_text())
    assert opening.startswith("The public board of 3 teams (6 submissions) replayed two ways") and "private worth" in opening
    assert opening.endswith(f"The rule: {RULE}.")
    assert render_text(board).startswith(opening.split(" The rule:")[0])
    page = tmp_path / "ladder.html"
    assert run_main("ladder", "--teams", teams, "--truth", truth, "--split", "public=0.4", "--report", page)[0] == 0
    assert "<p class='lead'>The public board of 3 teams" in page.read_text()


# -- similar: teams on the heatmap, every written figure fits its cell, plain words --------------------------------------

def similar_report(tmp_path, teams: bool):
    from test_similar import field, planted, team_rows, write

    rng = np.random.default_rng(44)
    ground = field(rng, 300)
    paths = [write(tmp_path / f"submission_file_number_{i}_final_v2.csv", ground, team_rows(rng, ground, 0.3)) for i in range(8)]
    rows, order = planted(rng, ground, team_rows(rng, ground, 0.3), team_rows(rng, ground, 0.3))["renamed_reordered"]
    paths.append(write(tmp_path / "copy.csv", ground, rows, order))
    paths.append(write(tmp_path / "source.csv", ground, rows))
    argv = ["similar", *paths, "--report", tmp_path / "similar.html", "--format", "json"]
    if teams:
        names = [f"Team {i}: the recommender enthusiasts of the north" if i % 2 else f"tiny {i}" for i in range(len(paths))]
        (tmp_path / "teams.csv").write_text("file,team\n" + "".join(f"{p},{n}\n" for p, n in zip(paths, names)))
        argv += ["--teams", tmp_path / "teams.csv"]
    code, out, _ = run_main(*argv)
    assert code == 0
    return json.loads(out), (tmp_path / "similar.html").read_text()


def test_the_heatmap_names_teams_when_a_teams_file_gives_them(tmp_path):
    report, page = similar_report(tmp_path, teams=True)
    rows = re.findall(r"<th class='row' title='([^']*)'>([^<]*)</th>", page)
    teams = {f["name"]: f["team"] for f in report["files"]}
    assert len(rows) == len(teams)
    for title, label in rows:
        team, file = title.rsplit(": ", 1) if ": " in title else (None, title)
        assert team is not None and file in teams, title
        assert label.startswith(team[:10]) and "submission_file_number" not in label, (label, title)


def test_every_figure_written_fits_its_cell_and_every_name_its_header(tmp_path):
    from scorer.analytics.similar.page import CHAR_WIDTH

    _, page = similar_report(tmp_path, teams=True)
    cell = int(re.search(r"table\.heat td\{width:(\d+)px", page).group(1))
    font = int(re.search(r"table\.heat td\{[^}]*font-size:(\d+)px", page).group(1))
    header = int(re.search(r"th\.col\{height:(\d+)px", page).group(1))
    label_font = int(re.search(r"th\.col\{[^}]*font-size:(\d+)px", page).group(1))
    written = re.findall(r"<td class='cell[^']*'[^>]*>([^<]*)</td>", page)
    assert any(written) and max(len(t) for t in written) * CHAR_WIDTH * font <= cell - 2
    names = re.findall(r"<th class='col'[^>]*><div>([^<]*)</div>", page)
    assert max(len(n) for n in names) * CHAR_WIDTH * label_font <= header


@pytest.mark.parametrize("count", [10, 40, 60])
def test_the_heatmap_fills_the_page_width(tmp_path, count):
    """A heatmap of 40 teams is drawn across the page (about 960 px of cells beside their names at 1,280 px), not in a
    corner of it; every size it picks still fits its figures."""
    from scorer.analytics.similar.page import MAX_FILES, page
    from scorer.analytics.similar.pairs import similarity
    from scorer.analytics.similar.sketch import Sketch
    from test_similar import field, sketch_file, team_rows, write

    rng = np.random.default_rng(5)
    ground = field(rng, 80)
    base = sketch_file(write(tmp_path / "base.csv", ground, team_rows(rng, ground, 0.3)))
    sketches = [Sketch(f"file{i}.csv", base.rows, base.keys, base.sessions, base.present,
                       *(rng.integers(0, 1 << 31, t.shape, dtype=np.uint32) for t in (base.order, base.mins, base.ranks)))
                for i in range(count)]
    html = page(similarity(sketches, [f"team {i}" for i in range(count)], 20))
    cell = int(re.search(r"table\.heat td\{width:(\d+)px", html).group(1))
    assert min(count, MAX_FILES) * cell >= min(900, 40 * count), f"{cell}-px cells for {count} files"


def test_similar_speaks_of_spreads_not_a_bare_z(tmp_path):
    report, page = similar_report(tmp_path, teams=True)
    code, text, _ = run_main("similar", *(f["name"] for f in report["files"]), "--teams", tmp_path / "teams.csv")
    assert code == 0 and not re.search(r"\bz \d", text), "a bare 'z 49.5'"
    assert re.search(r"\d+\.\d spreads above the typical pair \(z\)", text)
    flagged = report["flagged"][0]
    opening = text.split("\n")[0]
    assert opening.startswith("This report compares 10 files of 10 teams two by two")
    assert f"{flagged['team_a']} ({flagged['a']}) and {flagged['team_b']} ({flagged['b']})" in opening
    assert f"<p class='lead'>{opening[:60]}" in page


# -- candidates: the plot opens with what the lists hold ------------------------------------------------------------------

def test_the_candidate_plot_opens_with_what_the_lists_hold(tmp_path, saved):
    from pathlib import Path

    import scorer
    from scorer.analytics.candidate_plot import write_curves

    table = tmp_path / "candidates.csv"
    items = {1: [10, 5, 30, *range(100, 156), 31], 2: [7, 8, 11], 3: [1]}
    table.write_text("session,aid\n" + "".join(f"{s},{item}\n" for s, row in items.items() for item in row))
    result = scorer.candidates(table, Path(__file__).resolve().parent.parent / "fixtures" / "otto_truth.jsonl", k=(20, 100))
    write_curves(result, tmp_path / "curves.png")
    figure = saved[-1]
    opening = re.sub(r"\s+", " ", lead_text(figure).get_text())
    assert opening.startswith(f"The candidate lists of {table} against what the sessions went on to do: with 100")
    assert_lead_first_and_within(figure)
    assert_within(figure)
    renderer = drawn(figure)
    for ax in figure.axes:
        assert all(label.get_rotation() == 0 for label in ax.get_xticklabels())
        if ax.get_legend() is not None:
            assert not covered(ax.get_legend().get_window_extent(renderer), data_points(ax), figure.dpi)


# -- the pages at 1,280 px: no text runs past its box -----------------------------------------------------------------------

def spilled(image: np.ndarray) -> int:
    """Dark pixels right of the text box (the pre's grey, #f6f6f6), beside it: text that runs past its box."""
    grey = (np.abs(image - 0xF6 / 255).max(axis=-1) < 0.01)
    rows = np.flatnonzero(grey.sum(axis=1) > 200)
    if not len(rows):
        return -1
    edge = int(np.flatnonzero(grey[rows].any(axis=0)).max())
    return int((image[rows, edge + 2:].max(axis=-1) < 0.5).sum())


@pytest.mark.slow
def test_no_page_runs_past_its_box_at_1280_px(board_files, tmp_path):
    from test_leaderboard_page import CHROMIUM, screenshot

    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium)")
    truth_path, paths = board_files
    (tmp_path / "ladder").mkdir()
    (tmp_path / "similar").mkdir()
    _, teams, truth = ladder_board_of(tmp_path / "ladder")
    similar_report(tmp_path / "similar", teams=True)
    pages = {"ladder": ["ladder", "--teams", teams, "--truth", truth, "--split", "public=0.4"],
             "leaderboard": ["leaderboard", *paths, "--truth", truth_path, "--bootstrap", "50", "--split", "public=0.5"]}
    shots = {"similar": tmp_path / "similar" / "similar.html"}
    for name, argv in pages.items():
        shots[name] = tmp_path / f"{name}.html"
        assert run_main(*argv, "--report", shots[name])[0] == 0
    for name, page in shots.items():
        image = screenshot(page, tmp_path / f"{name}.png", "1280,2400")
        assert spilled(image) == 0, f"the {name} page's text runs past its box at 1,280 px"
