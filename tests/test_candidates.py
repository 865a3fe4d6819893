"""scorer.candidates against a slow reference written from the definitions (docs/metrics.md, "The candidate stage"):
random tables (hypothesis) with ties, repeats, bad rows, K past the lists, sessions without candidates or outside the
truth, rows not grouped by session, many batches and pieces; the string shapes; the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorer
from scorer.cli.main import main
from scorer.engine import candidate_pass

TYPES = ("clicks", "carts", "orders")
WEIGHTS = (0.1, 0.3, 0.6)


# -- the reference ---------------------------------------------------------------------------------------------
def _bad_float(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


ROOT = Path(__file__).parent.parent


def reference(rows: list[dict], truth: dict, ks, has_type: bool, has_score: bool, k_comp: int = 20):
    """Every figure and problem count from the definitions. rows: dicts with session, aid, type, score;
    truth: {session: {type: set of items}} (every session of the truth has some items)."""
    problems: dict[str, int] = {}

    def problem(code):
        problems[code] = problems.get(code, 0) + 1

    by_session: dict[int, list[int]] = {}
    unknown_rows, unknown = 0, set()
    for r, row in enumerate(rows):
        session = row["session"]
        if session is None:
            problem("S006")
        elif session < 0:
            problem("S007")
        elif session not in truth:
            unknown_rows += 1
            unknown.add(session)
        else:
            by_session.setdefault(session, []).append(r)
    lists: dict[tuple[int, str], list[tuple[int, int, float]]] = {}  # (session, type) -> (row, aid, score) in row order
    duplicates = 0
    for session, members in by_session.items():
        seen: dict[int, set] = {}
        for r in members:
            row = row_type = rows[r]
            row_type = row["type"] if has_type else None
            if has_type and row_type is not None and row_type not in TYPES:
                problem("S005")
                continue
            if row["aid"] is None:
                problem("S008")
                continue
            if row["aid"] < 0:
                problem("S009")
                continue
            if has_score and _bad_float(row["score"]):
                problem("S031")
                continue
            served = set(TYPES) if row_type is None else {row_type}
            if seen.get(row["aid"], set()) & served:
                duplicates += 1
            seen.setdefault(row["aid"], set()).update(served)
            for t in served:
                lists.setdefault((session, t), []).append((r, row["aid"], row["score"] if has_score else 0.0))
    if duplicates:
        problems["S014"] = duplicates
    missing = [s for s in truth if s not in by_session]
    if missing:
        problems["S011"] = len(missing)  # one problem, counting every session
    if unknown_rows:
        problems["S012"] = unknown_rows
    best: dict[tuple[int, str], dict[int, tuple[int, bool]]] = {}  # per list: item -> (best rank, tied)
    lengths: dict[tuple[int, str], int] = {}
    for key, members in lists.items():
        ordered = sorted(members, key=lambda m: (-m[2], m[0])) if has_score else members
        lengths[key] = len(ordered)
        first: dict[int, tuple[int, bool]] = {}
        for rank, (r, aid, score) in enumerate(ordered):
            if aid not in first:
                tied = has_score and any(other_r != r and other_score == score for other_r, _, other_score in members)
                first[aid] = (rank, tied)
        best[key] = first
    out = {"at": {}, "types": {}, "problems": problems, "unknown_rows": unknown_rows, "unknown_sessions": len(unknown)}
    for k in ks:
        at = {}
        for t in TYPES:
            labelled = [s for s in truth if truth[s].get(t)]
            h = {s: sum(1 for item in truth[s][t] if best.get((s, t), {}).get(item, (k, False))[0] < k) for s in labelled}
            size = {s: len(truth[s][t]) for s in labelled}
            at[t] = {
                "recall": sum(h.values()) / sum(size.values()) if labelled else None,
                "recall_min": sum(h.values()) / sum(min(k, n) for n in size.values()) if labelled else None,
                "hit_rate": sum(1 for s in labelled if h[s] > 0) / len(labelled) if labelled else None,
                "ceiling": sum(min(h[s], k_comp) for s in labelled) / sum(min(k_comp, size[s]) for s in labelled) if labelled else None,
            }
        at["weighted"] = {key: sum(w * (at[t][key] or 0.0) for t, w in zip(TYPES, WEIGHTS)) for key in ("recall", "recall_min", "ceiling")}
        out["at"][k] = at
    for t in TYPES:
        labelled = [s for s in truth if truth[s].get(t)]
        counts = sorted(lengths.get((s, t), 0) for s in labelled)
        ranks = [rank + 1 for s in labelled for item in truth[s][t] if item in best.get((s, t), {}) for rank in [best[(s, t)][item][0]]]
        n_truth = sum(len(truth[s][t]) for s in labelled)
        out["types"][t] = {
            "sessions": len(labelled),
            "truth_items": n_truth,
            "candidates_per_session": {
                "min": counts[0], "median": float(np.median(counts)),
                "p95": counts[math.ceil(0.95 * len(counts)) - 1], "max": counts[-1]} if counts else None,
            "missed": (n_truth - len(ranks)) / n_truth if n_truth else None,
            "ranks": sorted(ranks),
            "tied_hits": sum(1 for s in labelled for item in truth[s][t] if best.get((s, t), {}).get(item, (0, False))[1]),
        }
    return out


def _histogram_ranks(histogram: dict) -> int:
    return sum(histogram.values())


def check(result, expected) -> None:
    for k, at in expected["at"].items():
        for name, figures in at.items():
            for key, value in figures.items():
                got = result.at_k[k][name][key]
                assert (got is None and value is None) or got == pytest.approx(value, abs=1e-12), (k, name, key, got, value)
    for t, figures in expected["types"].items():
        mine = result.per_type[t]
        assert mine["sessions"] == figures["sessions"] and mine["truth_items"] == figures["truth_items"]
        if figures["candidates_per_session"] is not None:
            assert mine["candidates_per_session"] == figures["candidates_per_session"], t
        assert (mine["missed"] is None and figures["missed"] is None) or mine["missed"] == pytest.approx(figures["missed"])
        assert _histogram_ranks(mine["hit_ranks"]) == len(figures["ranks"])
        assert mine["hit_ranks"]["1"] == sum(1 for rank in figures["ranks"] if rank == 1)
        assert mine["hit_ranks"]["2-5"] == sum(1 for rank in figures["ranks"] if 2 <= rank <= 5)
        assert mine["tied_hits"] == figures["tied_hits"], t
    counts = {row["code"]: row["count"] for row in result.report.summary()}
    for code in ("S005", "S006", "S007", "S008", "S009", "S011", "S012", "S014", "S031"):
        assert counts.get(code, 0) == expected["problems"].get(code, 0), (code, counts, expected["problems"])
    assert result.unknown_rows == expected["unknown_rows"] and result.unknown_sessions == expected["unknown_sessions"]


def truth_of(truth: dict):
    rows = [(s, t, item) for s, by_type in truth.items() for t, items in by_type.items() for item in items]
    frame = pd.DataFrame(rows, columns=["session", "type", "aid"])
    return scorer.load_truth(frame, competition="otto")


def table_of(rows: list[dict], has_type: bool, has_score: bool) -> pa.Table:
    columns = {"session": pa.array([r["session"] for r in rows], pa.int64()), "aid": pa.array([r["aid"] for r in rows], pa.int64())}
    if has_type:
        columns["type"] = pa.array([r["type"] for r in rows], pa.string())
    if has_score:
        columns["score"] = pa.array([r["score"] for r in rows], pa.float64(), from_pandas=True)
    return pa.table(columns)


# -- random tables ---------------------------------------------------------------------------------------------
truths = st.dictionaries(st.integers(0, 12), st.fixed_dictionaries({t: st.sets(st.integers(0, 15), max_size=4) for t in TYPES}),
                         min_size=1, max_size=8).filter(lambda d: all(any(v.values()) for v in d.values()))


@st.composite
def tables(draw):
    truth = draw(truths)
    has_type, has_score = draw(st.booleans()), draw(st.booleans())
    sessions = st.one_of(st.sampled_from(sorted(truth)), st.integers(-2, 14), st.none()) if draw(st.booleans()) else st.sampled_from(sorted(truth))
    row = st.fixed_dictionaries({
        "session": sessions,
        "aid": st.one_of(st.integers(0, 15), st.integers(-1, 15), st.none()) if draw(st.booleans()) else st.integers(0, 15),
        "type": st.one_of(st.none(), st.sampled_from(TYPES), st.just("views")) if has_type else st.none(),
        "score": st.one_of(st.sampled_from([0.5, 1.0, 2.0]), st.floats(-3, 3), st.none(), st.just(float("nan"))) if draw(st.booleans())
        else st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.25, 1.5]),
    })
    rows = draw(st.lists(row, max_size=60))
    if draw(st.booleans()):  # grouped by session, as most tables are
        rows.sort(key=lambda r: (r["session"] is None, r["session"] or 0))
    ks = draw(st.lists(st.integers(1, 30), min_size=1, max_size=3, unique=True))
    return truth, rows, has_type, has_score, sorted(ks)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(1, 7), st.integers(1, 9), st.integers(1, 2))
def test_figures_match_the_reference(case, batch_rows, piece_rows, threads):
    truth, rows, has_type, has_score, ks = case
    table = table_of(rows, has_type, has_score)
    batches = table.to_batches(max_chunksize=batch_rows)
    chunked = pa.Table.from_batches(batches, schema=table.schema) if batches else table
    old = candidate_pass.PIECE_ROWS, candidate_pass.HIT_CAPACITY, candidate_pass.UNKNOWN_CAPACITY
    # many pieces and carried runs; kernel calls that stop early when their hit or unknown-session arrays fill up
    candidate_pass.PIECE_ROWS, candidate_pass.HIT_CAPACITY, candidate_pass.UNKNOWN_CAPACITY = piece_rows, piece_rows, 1
    try:
        result = scorer.candidates(chunked, truth_of(truth), k=ks, max_per_code=1000, threads=threads)
    finally:
        candidate_pass.PIECE_ROWS, candidate_pass.HIT_CAPACITY, candidate_pass.UNKNOWN_CAPACITY = old
    check(result, reference(rows, truth, ks, has_type, has_score))


# -- hand-worked cases -----------------------------------------------------------------------------------------
TRUTH = {1: {"clicks": {10}, "carts": {11}, "orders": {12}}, 2: {"clicks": {20}, "orders": {21}}, 3: {"clicks": {30}}}


def test_a_worked_example():
    frame = pd.DataFrame({"session": [1, 1, 1, 1, 2, 2, 2, 9], "aid": [5, 10, 11, 11, 21, 20, 7, 1],
                          "score": [0.9, 0.8, 0.8, 0.1, 0.3, 0.5, 0.9, 1.0]})
    result = scorer.candidates(frame, truth_of(TRUTH), k=[2, 3])
    # session 1 ranks 5, 10, 11 (tied with 10, after it by row order), 11 again; session 2 ranks 7, 20, 21
    assert result.at_k[2]["clicks"]["recall"] == pytest.approx(2 / 3)
    assert result.at_k[2]["carts"]["recall"] == 0.0
    assert result.at_k[3]["carts"]["recall"] == 1.0
    assert result.at_k[3]["orders"]["recall"] == 0.5
    assert result.at_k[3]["weighted"]["ceiling"] == pytest.approx(0.1 * 2 / 3 + 0.3 + 0.6 * 0.5)
    assert result.per_type["clicks"]["candidates_per_session"] == {"min": 0, "median": 3.0, "p95": 4, "max": 4}
    assert result.per_type["clicks"]["tied_hits"] == 1 and result.per_type["carts"]["tied_hits"] == 1
    assert any(warning.startswith("tied hits: 2 ") for warning in result.warnings)
    codes = {row["code"] for row in result.report.summary()}
    assert codes == {"S011", "S012", "S014"}
    duplicate = result.report.kept["S014"][0]
    assert (duplicate.row, duplicate.field) == (3, "aid") and "11 of session 1" in duplicate.message


def test_ceiling_caps_hits_at_the_competitions_k():
    truth = {1: {"clicks": {0}, "carts": set(range(30)), "orders": {0}}}
    frame = pd.DataFrame({"session": [1] * 40, "aid": list(range(40))})  # row order ranks: item i at rank i
    result = scorer.candidates(frame, truth_of(truth), k=[10, 40])
    assert result.at_k[40]["carts"]["recall"] == 1.0
    assert result.at_k[40]["carts"]["ceiling"] == 1.0  # min(30, 20) / min(20, 30)
    assert result.at_k[10]["carts"]["ceiling"] == 0.5  # 10 / 20
    assert result.at_k[10]["carts"]["recall_min"] == 1.0 and result.at_k[10]["carts"]["recall"] == pytest.approx(1 / 3)


def test_the_ceiling_of_a_metric_whose_total_needs_every_row(tmp_path):
    """Macro recall is a mean of per-session ratios, not a ratio of sums: its ceiling reads every session's figure (the
    sessions without a hit included), unlike the sums' metrics, whose ceiling sums the sessions with a hit only."""
    config = tmp_path / "otto-macro.toml"
    config.write_text((ROOT / "configs" / "otto.toml").read_text().replace('metric = "recall@20"', 'metric = "recall@20(average=macro)"'))
    truth = {1: {"clicks": {0}, "carts": set(range(30)), "orders": {0}}, 2: {"clicks": {7}, "carts": {1, 2}, "orders": {3, 4}},
             3: {"clicks": {5}, "carts": {9}, "orders": {8}}}
    frame = pd.DataFrame({"session": [1] * 40 + [2, 2, 3], "aid": list(range(40)) + [4, 1, 6]})  # row order ranks
    for metric, chosen in (("micro", None), ("macro", config)):
        result = scorer.candidates(frame, truth_of(truth), "otto", config=chosen, k=[1, 10, 40])
        ceilings = {k: {t: result.at_k[k][t]["ceiling"] for t in ("clicks", "carts", "orders")} for k in (1, 10, 40)}
        # h_K per session: carts 1: min(K, 30) of the first 40; 2: item 1 at rank 2; orders 2: item 4 at rank 1
        carts = {1: [(1, 20), (0, 2), (0, 1)], 10: [(10, 20), (1, 2), (0, 1)], 40: [(20, 20), (1, 2), (0, 1)]}
        orders = {k: [(1, 1), (1, 2), (0, 1)] for k in (1, 10, 40)}
        for k in (1, 10, 40):
            for name, pairs in (("carts", carts[k]), ("orders", orders[k])):
                expected = (sum(h for h, _ in pairs) / sum(d for _, d in pairs) if metric == "micro"
                            else sum(h / d for h, d in pairs) / len(pairs))
                assert ceilings[k][name] == pytest.approx(expected), (metric, k, name)


def test_rows_not_grouped_by_session_are_sorted_first():
    rows = [{"session": s, "aid": a, "type": t, "score": None} for t, s, a in
            [("clicks", 1, 10), ("clicks", 2, 20), ("carts", 1, 11), ("orders", 2, 21), ("orders", 1, 5), ("orders", 1, 12)]]
    result = scorer.candidates(table_of(rows, True, False), truth_of(TRUTH), k=[1, 2])
    assert any("not grouped by session" in warning for warning in result.warnings)
    check(result, reference(rows, TRUTH, [1, 2], True, False))


def test_parquet_streams_row_groups_and_csv(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    rows = [{"session": int(s), "aid": int(rng.integers(0, 40)), "type": None, "score": float(rng.integers(0, 5))}
            for s in sorted(rng.integers(0, 4, 300))]
    table = table_of(rows, False, True)
    path = tmp_path / "candidates.parquet"
    pq.write_table(table, path, row_group_size=7)
    csv = tmp_path / "candidates.csv"
    table.to_pandas().to_csv(csv, index=False)
    truth = {0: {"clicks": {1, 2}, "carts": {3}, "orders": set()}, 1: {"clicks": {5}, "carts": set(), "orders": {6, 7}},
             5: {"clicks": {1}, "carts": set(), "orders": set()}}
    monkeypatch.setattr(candidate_pass, "PIECE_ROWS", 5)
    expected = reference(rows, truth, [1, 5, 50], False, True)
    for source in (path, csv):
        check(scorer.candidates(source, truth_of(truth), k=[1, 5, 50]), expected)


def test_frames_of_pandas_polars_and_arrow_agree():
    polars = pytest.importorskip("polars")
    frame = pd.DataFrame({"session": [1, 1, 2, 2, 3], "aid": [10, 12, 21, 20, 30], "type": ["clicks", None, "orders", "clicks", None],
                          "score": np.array([1.0, 0.5, 0.2, 0.1, 0.3], np.float32)})
    truth = truth_of(TRUTH)
    expected = scorer.candidates(frame, truth, k=[1, 2]).to_dict()
    for other in (polars.from_pandas(frame), pa.Table.from_pandas(frame),
                  polars.from_pandas(frame).with_columns(polars.col("type").cast(polars.Categorical))):
        got = scorer.candidates(other, truth, k=[1, 2]).to_dict()
        assert got["at_k"] == expected["at_k"] and got["types"] == expected["types"]


def test_string_shapes_hm(tmp_path):
    truth_path = tmp_path / "truth.csv"
    truth_path.write_text("customer_id,prediction\naa,0706016001 0706016002\nbb,0111111111\ncc,\n")
    frame = pd.DataFrame({"customer_id": ["aa", "aa", "aa", "bb", "bb", "zz", None],
                          "article_id": ["0999999999", "0706016002", "0706016002", "0111111111", None, "0111111111", "01"],
                          "score": [3.0, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0]})
    result = scorer.candidates(frame, str(truth_path), competition="hm", k=[1, 2, 3])
    assert result.at_k[1]["all"]["recall"] == pytest.approx(1 / 3)
    assert result.at_k[2]["all"]["recall"] == pytest.approx(2 / 3)
    # map@12 of a perfect reranker: aa has 1 hit of 2 (1/2), bb 1 of 1 (1)
    assert result.at_k[3]["all"]["ceiling"] == pytest.approx((0.5 + 1.0) / 2)
    counts = {row["code"]: row["count"] for row in result.report.summary()}
    assert counts == {"S006": 1, "S008": 1, "S012": 1, "S014": 1}
    assert "'0706016002' of session 'aa'" in result.report.kept["S014"][0].message


# -- the command line ------------------------------------------------------------------------------------------
def test_cli_text_json_and_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    truth_path = tmp_path / "truth.parquet"
    rows = [(s, t, item) for s, by_type in TRUTH.items() for t, items in by_type.items() for item in items]
    pd.DataFrame(rows, columns=["session", "type", "aid"]).to_parquet(truth_path)
    candidates = tmp_path / "candidates.parquet"
    pd.DataFrame({"session": [1, 1, 2, 2], "aid": [10, 11, 20, 21]}).to_parquet(candidates)
    png = tmp_path / "curves.png"
    assert main(["candidates", str(candidates), "--truth", str(truth_path), "--k", "1,2", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "recall" in text and "ceiling" in text and png.stat().st_size > 10_000
    assert main(["candidates", str(candidates), "--truth", str(truth_path), "--k", "2", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["at_k"]["2"]["clicks"]["recall"] == pytest.approx(2 / 3)


def test_cli_bad_inputs(tmp_path, capsys):
    truth_path = tmp_path / "truth.parquet"
    pd.DataFrame({"session": [1], "type": ["clicks"], "aid": [1]}).to_parquet(truth_path)
    wrong = tmp_path / "wrong.parquet"
    pd.DataFrame({"user": [1], "aid": [1]}).to_parquet(wrong)
    assert main(["candidates", str(wrong), "--truth", str(truth_path)]) == 1
    assert "expected 'session'" in capsys.readouterr().err
    assert main(["candidates", str(tmp_path / "missing.parquet"), "--truth", str(truth_path)]) == 1
    assert main(["candidates", str(wrong), "--truth", str(truth_path), "--k", "0,20"]) == 2
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    assert main(["candidates", str(garbage), "--truth", str(truth_path)]) == 1
    floats = tmp_path / "floats.parquet"
    pd.DataFrame({"session": [1.5], "aid": [1]}).to_parquet(floats)
    assert main(["candidates", str(floats), "--truth", str(truth_path)]) == 1
    assert "must hold integer ids" in capsys.readouterr().err


def test_a_run_with_many_hits_is_ranked_by_a_sort():
    """More hit rows in an unsorted run than SCAN_HITS: the kernel ranks the run by a sort instead of a scan per hit."""
    from scorer.kernels.candidates import SCAN_HITS

    rng = np.random.default_rng(5)
    n = 3 * SCAN_HITS
    truth = {1: {"clicks": set(range(0, n, 2)), "carts": set(range(1, n, 3)), "orders": {0}}, 2: {"clicks": {1}, "carts": set(), "orders": set()}}
    rows = [{"session": 1, "aid": int(a), "type": t, "score": float(rng.integers(0, 8))}
            for a, t in zip(rng.permutation(n), rng.choice(["clicks", "carts", None], n))]
    rows += [{"session": 1, "aid": 0, "type": None, "score": None}, {"session": 1, "aid": 4, "type": "clicks", "score": 9.0}]
    expected = reference(rows, truth, [5, 50, 500], True, True)
    check(scorer.candidates(table_of(rows, True, True), truth_of(truth), k=[5, 50, 500]), expected)


def test_files_not_grouped_by_session_and_string_ids_in_files(tmp_path):
    rows = [{"session": s, "aid": a, "type": None, "score": sc} for s, a, sc in
            [(1, 10, 0.5), (2, 20, 0.1), (1, 11, 0.9), (3, 5, 1.0), (2, 21, 0.7), (1, 10, 0.2)]]
    table = table_of(rows, False, True)
    pq.write_table(table, tmp_path / "ungrouped.parquet", row_group_size=2)
    table.to_pandas().to_csv(tmp_path / "ungrouped.csv", index=False)
    expected = reference(rows, TRUTH, [1, 2, 5], False, True)
    for name in ("ungrouped.parquet", "ungrouped.csv"):
        result = scorer.candidates(tmp_path / name, truth_of(TRUTH), k=[1, 2, 5])
        assert any("not grouped by session" in warning for warning in result.warnings)
        check(result, expected)
        assert result.report.kept["S014"][0].row == 5  # the row of the file, not of the sorted copy
    truth_path = tmp_path / "truth.csv"
    truth_path.write_text("customer_id,prediction\naa,0706016001 0706016002\nbb,0111111111\n")
    frame = pd.DataFrame({"customer_id": ["aa", "aa", "bb"], "article_id": ["0706016002", "0706016001", "0000000001"]})
    frame.to_csv(tmp_path / "hm.csv", index=False)
    frame.to_parquet(tmp_path / "hm.parquet")
    for name in ("hm.csv", "hm.parquet"):
        result = scorer.candidates(tmp_path / name, str(truth_path), competition="hm", k=[1, 2])
        assert result.at_k[1]["all"]["recall"] == pytest.approx(1 / 3) and result.at_k[2]["all"]["recall"] == pytest.approx(2 / 3)
        assert result.at_k[2]["all"]["ceiling"] == pytest.approx((1.0 + 0.0) / 2)  # aa: both hits; bb: none
