"""Issue 25, newcomer frictions: metric lists with options, hints for swapped columns and tab-separated files,
the report's figure."""

from __future__ import annotations

import json

import pytest

from conftest import full_rows, run_cli, submission_text, truth_lines
from scorer.spec.metrics import split_metrics

TRUTH = {1: {"clicks": 5, "carts": [6, 7], "orders": [8]}, 2: {"clicks": 9}}


run = run_cli


@pytest.fixture
def files(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    submission = tmp_path / "sub.csv"
    submission.write_text(submission_text(full_rows(TRUTH, {(1, "clicks"): [5, 3], (1, "carts"): [6], (2, "clicks"): [4, 9]})))
    return submission, truth


# -- --metrics: commas inside an option list ------------------------------------------------------------------
def test_metric_lists_split_only_outside_parentheses():
    assert split_metrics("recall@3(average=macro,empty=zero)") == ["recall@3(average=macro,empty=zero)"]
    assert split_metrics("recall@3(average=macro, empty=zero), map@5 ,,ndcg@2") == [
        "recall@3(average=macro, empty=zero)", "map@5", "ndcg@2"]
    assert split_metrics("") == []


def test_metrics_option_with_two_options_scores(files):
    submission, truth = files
    code, out, err = run("score", submission, "--truth", truth, "--metrics", "recall@3(average=macro,empty=zero)", "--format", "json")
    assert code == 0, err
    assert "recall@3(average=macro,empty=zero)" in json.loads(out)["metrics"]["clicks"]
    code, _, err = run("score", submission, "--truth", truth, "--metrics", "recall@3(average=macro,empty=zero")
    assert code == 2 and "bad metric syntax" in err


# -- swapped columns and tab-separated files: a hint, the caret on the tab ---------------------------------------
def test_swapped_columns_are_named_in_the_header_and_the_rows(tmp_path):
    path = tmp_path / "swapped.csv"
    path.write_text("labels,session_type\n5 6,1_clicks\n6 7,1_carts\n")
    code, out, _ = run("validate", path, "--format", "json")
    problems = json.loads(out)["problems"]
    header = next(p for p in problems if p["code"] == "S002")
    assert code == 1 and "the columns look swapped: write session_type first, then labels" in header["message"]
    assert all("columns look swapped" in p["message"] for p in problems if p["code"] == "S004")
    path.write_text("5 6,1_clicks\n6 7,1_carts\n")  # no header either
    code, out, _ = run("validate", path, "--format", "json")
    assert "a data row with its columns swapped" in json.loads(out)["problems"][0]["message"]


def test_a_tab_separated_file_gets_the_hint_and_the_caret_under_the_tab(tmp_path):
    path = tmp_path / "tabs.csv"
    path.write_text("session_type\tlabels\n1_clicks\t5 6\n")
    code, out, _ = run("validate", path)
    assert code == 1
    assert "expected 'session_type,labels' (tab-separated? the fields must be separated by ',')" in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  line 2:"))
    assert lines[at].startswith("  line 2:9: ") and "found one: '1_clicks\\t5 6' (tab-separated?" in lines[at]
    context, caret = lines[at + 1], lines[at + 2]
    assert caret.index("^") == context.index("\ufffd") and caret.count("^") == 1  # under the tab, not past the line's end


def test_a_good_file_gets_no_swap_or_tab_hint(files):
    submission, truth = files
    code, out, _ = run("validate", submission, "--truth", truth)
    assert code == 0 and "swapped" not in out and "tab-separated" not in out


# -- the report's figures: no empty panel, labels clear of the titles, p as <0.001 --------------------------------
def test_small_p_values_read_as_below_a_thousandth():
    from scorer.analytics.compare import p_text

    assert [p_text(p) for p in (1 / 1001, 0.0004, 0.001, 0.0234, 1.0, None)] == ["<0.001", "<0.001", "0.001", "0.023", "1.000", "-"]


def _figures(monkeypatch, draw):
    """The matplotlib figures draw() saves, drawn (their text laid out)."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    saved, save = [], Figure.savefig

    def keep(figure, *args, **kwargs):
        save(figure, *args, **kwargs)
        saved.append(figure)

    monkeypatch.setattr(Figure, "savefig", keep)
    draw()
    return saved


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_the_report_has_no_empty_panel_and_no_label_over_a_title(tmp_path, monkeypatch, files):
    submission, truth = files
    report = tmp_path / "r.png"
    figures = _figures(monkeypatch, lambda: run("score", submission, "--truth", truth, "--breakdown", "--bootstrap", "50",
                                                "--report", report))
    (figure,) = figures
    axes = figure.get_axes()
    panels = {ax.get_subplotspec().get_topmost_subplotspec().get_geometry() for ax in axes}  # the intervals: a strip a figure
    assert len(panels) == 4 and all(ax.axison for ax in axes)  # curves, intervals, ranks, truth sizes: 2 x 2
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    title = figure._suptitle.get_window_extent(renderer)
    for ax in axes:
        own = ax.title.get_window_extent(renderer)
        assert not _overlaps(title, own)
        for text in ax.texts:
            assert not _overlaps(text.get_window_extent(renderer), own), f"{text.get_text()!r} over {ax.get_title()!r}"


def test_the_comparison_shows_p_below_a_thousandth(tmp_path, monkeypatch, files):
    submission, truth = files
    worse = tmp_path / "worse.csv"
    worse.write_text("session_type,labels\n")
    figures = _figures(monkeypatch, lambda: run("compare", submission, worse, "--truth", truth, "--bootstrap", "1000",
                                                "--report", tmp_path / "c.png"))
    labels = [text.get_text() for text in figures[0].get_axes()[0].texts]
    assert labels and all(label.startswith("p") for label in labels)
    assert not any("0.000999" in label for label in labels)


def test_score_shows_a_few_examples_of_each_warning_unless_asked(tmp_path):
    """A normal OTTO file's repeated items (S014) printed 85 lines: score's text now shows 3 of each warning code."""
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines({s: {"clicks": 5} for s in range(1, 11)}))
    submission = tmp_path / "sub.csv"
    submission.write_text(submission_text(full_rows({s: {"clicks": 5} for s in range(1, 11)},
                                                    {(s, "clicks"): [5, 6, 5] for s in range(1, 11)})))
    code, out, _ = run("score", submission, "--truth", truth)
    assert code == 0 and "S014 warning: duplicate items in a row — 10 in all (showing 3)" in out and out.count("appears twice") == 3
    code, out, _ = run("score", submission, "--truth", truth, "--max-per-code", 20)
    assert "— 10 in all\n" in out and out.count("appears twice") == 10
    code, out, _ = run("validate", submission, "--truth", truth)
    assert out.count("appears twice") == 10  # validate lists them all
    code, out, _ = run("score", submission, "--truth", truth, "--format", "json")
    assert len(json.loads(out)["problems"]) == 10
