"""Beyond-accuracy metrics in the breakdowns (per bin) and in `scorer compare` (both sides)."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from scorer.analytics.summary import analyse
from scorer.api import score
from test_beyond_accuracy import METRICS, TYPES, _competition, _random_case, _reference

CLI = [sys.executable, "-c", "from scorer.cli.main import main; raise SystemExit(main())"]
PER_ROW = {name: text for name, text in METRICS.items() if name != "gini"}


def _size_bin(size: int) -> str:
    return "1" if size == 1 else "2-3" if size <= 3 else "4-10" if size <= 10 else ">10"


def _length_bin(length: int) -> str:
    if length == 0:
        return "not in sessions file"
    return "1" if length == 1 else "2-3" if length <= 3 else "4-10" if length <= 10 else "11-30" if length <= 30 else ">30"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference's mean of a bin with no countable row
@pytest.mark.parametrize("seed", [0, 1])
def test_breakdown_bins_hold_the_beyond_metrics_of_their_sessions(tmp_path, seed):
    lists, truths, items, popularity, category, embedding = _random_case(tmp_path, seed, sessions=80)
    rng = np.random.default_rng(seed)
    lengths = {s: int(rng.integers(1, 40)) for s in truths if rng.random() < 0.8}  # some sessions not in the file
    with open(tmp_path / "sessions.jsonl", "w") as out:
        for s, n in lengths.items():
            out.write(json.dumps({"session": s, "events": [{"aid": 1, "ts": 0, "type": "clicks"}] * n}) + "\n")
    result = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", _competition(METRICS.values()), items=items)
    b = analyse(result, result.truth, breakdowns=True, sessions_file=tmp_path / "sessions.jsonl")["breakdown"]
    checked = 0
    for key, bin_of in (("truth_size", lambda s, t: _size_bin(len(truths[s][t]))),
                        ("session_length", lambda s, t: _length_bin(lengths.get(s, 0)))):
        for t in TYPES:
            for row in b[key][t]:
                members = {s: truths[s] for s in truths if truths[s][t] and bin_of(s, t) == row["bin"]}
                assert row["sessions"] == len(members)
                assert set(row["beyond"]) == set(PER_ROW.values())  # gini: catalogue-level, not per bin
                for name, text in PER_ROW.items():
                    expected = _reference(name, lists, members, t, popularity, category, embedding) if members else math.nan
                    got = row["beyond"][text]
                    if got is None:
                        assert not members or math.isnan(expected), (key, t, row["bin"], text)
                        continue
                    bound = 2.0**-11 if name == "novelty" else 1e-7
                    assert got == pytest.approx(expected, rel=1e-9, abs=bound), (key, t, row["bin"], text)
                    checked += 1
    assert checked > 50
    totals = b["beyond"]["totals"]
    for t in TYPES:
        assert all(totals[t][m] == result.metrics[t][m] for m in METRICS.values())
        assert "gini@5" in totals[t]


def test_breakdown_recall_figures_do_not_change_with_beyond_metrics(tmp_path):
    _, _, items, *_ = _random_case(tmp_path, 3)
    plain = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", _competition([]))
    extra = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", _competition(METRICS.values()), items=items)
    a = analyse(plain, plain.truth, breakdowns=True)["breakdown"]
    b = analyse(extra, extra.truth, breakdowns=True)["breakdown"]
    assert "beyond" not in a and all("beyond" not in row for rows in a["truth_size"].values() for row in rows)
    for t in TYPES:
        assert [{k: v for k, v in row.items() if k != "beyond"} for row in b["truth_size"][t]] == a["truth_size"][t]
    assert a["recall_at_k"] == b["recall_at_k"] and a["hit_ranks"] == b["hit_ranks"]


def _items_file(tmp_path):
    (tmp_path / "items.csv").write_text("item,popularity,category\n" + "".join(f"{i},{i % 7},{i % 3}\n" for i in range(40)))
    return tmp_path / "items.csv"


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_score_breakdown_text_and_json_show_them(tmp_path):
    _random_case(tmp_path, 6)
    base = CLI + ["score", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "labels.jsonl"), "--items",
                  str(_items_file(tmp_path)), "--metrics", "novelty@20,gini@20,diversity@20", "--breakdown"]
    text = subprocess.run(base, capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "novelty@20" in text.stdout and "beyond-accuracy totals" in text.stdout
    data = json.loads(subprocess.run(base + ["--format", "json"], capture_output=True, text=True).stdout)
    breakdown = data["analytics"]["breakdown"]
    assert "novelty@20" in breakdown["truth_size"]["orders"][0]["beyond"]
    assert "gini@20" not in breakdown["truth_size"]["orders"][0]["beyond"]
    assert breakdown["beyond"]["totals"]["orders"]["gini@20"] == data["metrics"]["orders"]["gini@20"]


def test_compare_shows_both_sides_beyond_metrics(tmp_path):
    _random_case(tmp_path, 7)
    other = tmp_path / "other.csv"
    lines = (tmp_path / "sub.csv").read_text().splitlines()
    other.write_text("\n".join([lines[0]] + [line.split(" ")[0] for line in lines[1:]]) + "\n")  # one item a row
    base = CLI + ["compare", str(tmp_path / "sub.csv"), str(other), "--truth", str(tmp_path / "labels.jsonl"),
                  "--items", str(_items_file(tmp_path)), "--metrics", "novelty@20,gini@20", "--resamples", "50"]
    text = subprocess.run(base, capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "novelty@20" in text.stdout and "gini@20" in text.stdout and "no paired test" in text.stdout
    data = json.loads(subprocess.run(base + ["--format", "json"], capture_output=True, text=True).stdout)
    for t in TYPES:
        row = data["beyond"]["metrics"][t]["novelty@20"]
        assert row["a"] == data["a"]["metrics"][t]["novelty@20"] and row["b"] == data["b"]["metrics"][t]["novelty@20"]
    assert data["beyond"]["metrics"]["orders"]["gini@20"]["a"] != data["beyond"]["metrics"]["orders"]["gini@20"]["b"]


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_reports_show_them(tmp_path):
    _random_case(tmp_path, 9)
    items = ["--items", str(_items_file(tmp_path)), "--metrics", "novelty@20,gini@20,arp@20"]
    for name in ("r.html", "r.png"):
        run = subprocess.run(CLI + ["score", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "labels.jsonl"), *items,
                                    "--report", str(tmp_path / name)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    page = (tmp_path / "r.html").read_text()
    assert "arp@20" in page and "beyond-accuracy totals" in page
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    run = subprocess.run(CLI + ["compare", str(tmp_path / "sub.csv"), str(tmp_path / "sub.csv"), "--truth",
                                str(tmp_path / "labels.jsonl"), *items, "--resamples", "20", "--report", str(tmp_path / "c.html")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "beyond-accuracy metrics" in (tmp_path / "c.html").read_text()


def test_compare_metrics_needing_items_is_a_usage_error(tmp_path):
    _random_case(tmp_path, 8)
    run = subprocess.run(CLI + ["compare", str(tmp_path / "sub.csv"), str(tmp_path / "sub.csv"), "--truth",
                                str(tmp_path / "labels.jsonl"), "--metrics", "novelty@20"], capture_output=True, text=True)
    assert run.returncode == 2 and "--items FILE" in run.stderr
