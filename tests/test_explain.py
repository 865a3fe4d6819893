"""`scorer explain`: every convention against the real library where it installs, else a literal re-implementation
(tests/reference_conventions.py), to 1e-12; ours against the engine; each gap's rules add up to it; CLI text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reference_conventions import mapk, otto_evaluate, recommenders_map
from scorer.analytics.explain.published import SHOWN, explain
from scorer.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
TYPES = ("clicks", "carts", "orders")
K = 20
TOL = 1e-12


WIDE_IDS = [*range(10), *(10**7 + k for k in range(20)), *(10**15 + k for k in range(20)), 99_999_999, 10**18 - 1]


def make_case(tmp_path, seed: int, drop_rows: bool = False, wide: bool = False):
    """A random OTTO-shaped truth and submission: item ids 0..29 (item 0 in clicks and carts), lists of 0..30 items with
    repeats, empty rows, whole sessions missing (and, with drop_rows, single rows missing). wide: the ids of WIDE_IDS
    (8 to 18 digits among them), truths of up to 44 items, and one item in ten written with a leading zero."""
    rng = np.random.default_rng(seed)
    ids = np.array(WIDE_IDS if wide else range(30), np.int64)
    truth_lines, rows, truth = [], {}, {}
    for session in range(1, 301):
        labels = {}
        if rng.random() < 0.9:
            labels["clicks"] = int(ids[rng.integers(0, len(ids))]) if rng.random() < 0.8 else 0
        for kind in ("carts", "orders"):
            if rng.random() < 0.5:
                labels[kind] = sorted({int(x) for x in ids[rng.integers(0, len(ids), rng.integers(1, 45 if wide else 25))]})
        truth_lines.append(json.dumps({"session": session, "labels": labels}))
        for kind in TYPES:
            if kind in labels:
                truth[(session, kind)] = [labels[kind]] if kind == "clicks" else labels[kind]
        if rng.random() < 0.1:
            continue  # the session's rows are missing
        for kind in TYPES:
            if drop_rows and rng.random() < 0.1:
                continue
            n = int(rng.integers(0, 31)) if rng.random() < 0.9 else 0
            rows[(session, kind)] = [int(x) for x in ids[rng.integers(0, len(ids), n)]]
    padded = {key: ["0" * (wide and rng.random() < 0.1) + str(item) for item in items] for key, items in rows.items()}
    lines = [f"{s}_{kind},{' '.join(items)}" for (s, kind), items in padded.items()]
    (tmp_path / "truth.jsonl").write_text("\n".join(truth_lines) + "\n")
    (tmp_path / "sub.csv").write_text("session_type,labels\n" + "\n".join(lines) + "\n")
    return truth_lines, lines, truth, rows


def figures(explanation, convention: str) -> dict:
    """{(metric, type): entry} of one convention."""
    record = next(c for c in explanation.conventions if c["name"] == convention)
    return {(e["metric"], e["type"]): e for e in record["metrics"]}


def type_rows(truth: dict, rows: dict, kind: str):
    keys = sorted(key for key in truth if key[1] == kind)
    return keys, [truth[key] for key in keys], [rows.get(key) for key in keys]


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("explain")
    truth_lines, lines, truth, rows = make_case(tmp_path, seed=1)
    return explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl"), truth_lines, lines, truth, rows


def test_ours_is_the_engine(case):
    explanation, *_ = case
    for convention in explanation.conventions:
        for entry in convention["metrics"]:
            ours = explanation.result.metrics[entry["type"]].get(entry["ours_metric"])
            if ours is not None:
                assert entry["ours"] == pytest.approx(ours, abs=TOL), (convention["name"], entry)


def test_rules_add_up_to_the_gap(case):
    explanation, *_ = case
    for convention in explanation.conventions:
        for entry in convention["metrics"]:
            assert sum(rule["change"] for rule in entry["rules"]) == pytest.approx(entry["gap"], abs=TOL)
            for rule in entry["rules"]:
                assert (rule["rows"] == 0) == (rule["first"] == [])
                assert rule["rows"] > 0 or rule["change"] == 0.0


def test_otto_official_is_evaluate_py(case):
    explanation, truth_lines, lines, _, _ = case
    expected = otto_evaluate(truth_lines, lines, K)
    got = figures(explanation, "otto-official")
    for kind in TYPES:
        assert got[("recall@20", kind)]["theirs"] == pytest.approx(expected[kind], abs=TOL)
    total = next(c for c in explanation.conventions if c["name"] == "otto-official")["total"]
    assert total["theirs"] == pytest.approx(0.1 * expected["clicks"] + 0.3 * expected["carts"] + 0.6 * expected["orders"], abs=TOL)
    dropped = got[("recall@20", "clicks")]["rules"][0]
    assert dropped["rule"] == "item 0 dropped"
    zero_clicks = sum(1 for line in truth_lines if json.loads(line)["labels"].get("clicks", None) == 0)
    assert zero_clicks > 0 and dropped["rows"] == zero_clicks


def test_otto_official_2022_names_the_rows_the_older_evaluate_py_stops_at(tmp_path):
    truth_lines, lines, truth, rows = make_case(tmp_path, seed=2, drop_rows=True)
    conventions = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official,otto-official-2022").conventions
    current, older = (next(c for c in conventions if c["name"] == name) for name in ("otto-official", "otto-official-2022"))
    sessions = {s for s, _ in rows}
    stops = [key for key in truth if key not in rows and key[0] in sessions]
    assert older["stops"]["rows"] == len(stops) > 0 and "stops" not in current
    in_slot_order = sorted(stops, key=lambda key: (key[0], TYPES.index(key[1])))
    assert [row["row"] for row in older["stops"]["first"]] == [f"{session}_{kind}" for session, kind in in_slot_order[:SHOWN]]
    with pytest.raises(KeyError):
        otto_evaluate(truth_lines, lines, K, before_d1e176b=True)
    expected = otto_evaluate(truth_lines, lines, K)  # today's evaluate.py runs to the end: a missing row scores 0
    for kind in TYPES:
        assert figures(explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official"), "otto-official")[
            ("recall@20", kind)]["theirs"] == pytest.approx(expected[kind], abs=TOL)


def test_kaggle_apk_is_mapk(case):
    explanation, _, _, truth, rows = case
    got = figures(explanation, "kaggle-apk")
    for kind in TYPES:
        _, actual, predicted = type_rows(truth, rows, kind)
        assert got[("mapk@20", kind)]["theirs"] == pytest.approx(mapk(actual, [p or [] for p in predicted], K), abs=TOL)


@pytest.mark.parametrize("at_k", [False, True])
def test_recommenders_map(case, at_k):
    explanation, _, _, truth, rows = case
    name, metric = ("recommenders-map_at_k", "map_at_k") if at_k else ("recommenders-map", "map")
    got = figures(explanation, name)
    for kind in TYPES:
        keys, actual, predicted = type_rows(truth, rows, kind)
        lists = {key[0]: items for key, items in zip(keys, predicted) if items}
        expected = recommenders_map(dict(zip((key[0] for key in keys), actual)), lists, K, at_k)
        assert got[(metric, kind)]["theirs"] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("seed, wide", [(5, False), (6, False), (7, False), (8, True), (9, True)])
def test_more_files_against_the_literal_references(tmp_path, seed, wide):
    truth_lines, lines, truth, rows = make_case(tmp_path, seed, wide=wide)
    explanation = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official,kaggle-apk,recommenders-map,recommenders-map_at_k")
    expected = otto_evaluate(truth_lines, lines, K)
    for kind in TYPES:
        keys, actual, predicted = type_rows(truth, rows, kind)
        assert figures(explanation, "otto-official")[("recall@20", kind)]["theirs"] == pytest.approx(expected[kind], abs=TOL)
        assert figures(explanation, "kaggle-apk")[("mapk@20", kind)]["theirs"] == pytest.approx(mapk(actual, [p or [] for p in predicted], K), abs=TOL)
        by_user = dict(zip((key[0] for key in keys), actual))
        lists = {key[0]: items for key, items in zip(keys, predicted) if items}
        for name, metric, at_k in (("recommenders-map", "map", False), ("recommenders-map_at_k", "map_at_k", True)):
            assert figures(explanation, name)[(metric, kind)]["theirs"] == pytest.approx(recommenders_map(by_user, lists, K, at_k), abs=TOL)


def as_run(predicted: list) -> dict:
    """A list as the dict run trec_eval and ranx read: its distinct items, each scored by its first rank (higher first)."""
    distinct = list(dict.fromkeys(predicted))
    return {str(item): float(len(distinct) - r) for r, item in enumerate(distinct)}


def test_trec_eval_is_pytrec_eval(case):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed (pip install pytrec-eval-terrier)")
    explanation, _, _, truth, rows = case
    got = figures(explanation, "trec_eval")
    measures = {"recall_20": "recall_20", "P_20": "P_20", "map_cut_20": "map_cut_20", "ndcg_cut_20": "ndcg_cut_20"}
    for kind in TYPES:
        keys, actual, predicted = type_rows(truth, rows, kind)
        qrels = {str(key[0]): {str(item): 1 for item in items} for key, items in zip(keys, actual)}
        run = {str(key[0]): as_run(items) for key, items in zip(keys, predicted) if items}
        results = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
        assert set(results) == set(run)  # queries without a run are not returned: not averaged
        for ours_name, trec_name in measures.items():
            expected = np.mean([per_query[trec_name] for per_query in results.values()])
            assert got[(ours_name, kind)]["theirs"] == pytest.approx(expected, abs=TOL), (kind, ours_name)


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_ranx(case):
    ranx = pytest.importorskip("ranx", reason="ranx is not installed (pip install ranx)")
    explanation, _, _, truth, rows = case
    got = figures(explanation, "ranx")
    for kind in TYPES:
        keys, actual, predicted = type_rows(truth, rows, kind)
        qrels = ranx.Qrels({str(key[0]): {str(item): 1 for item in items} for key, items in zip(keys, actual)})
        run = ranx.Run({str(key[0]): as_run(items) for key, items in zip(keys, predicted) if items})
        expected = ranx.evaluate(qrels, run, ["recall@20", "map@20", "ndcg@20"], make_comparable=True)
        for metric in ("recall@20", "map@20", "ndcg@20"):
            assert got[(metric, kind)]["theirs"] == pytest.approx(expected[metric], abs=TOL), (kind, metric)


def test_ranx_ndcg_is_scikit_learn_ndcg_score(case):
    sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed (pip install scikit-learn)")
    explanation, _, _, truth, rows = case
    got = figures(explanation, "ranx")
    for kind in TYPES:
        _, actual, predicted = type_rows(truth, rows, kind)
        per_row = []
        for relevant, items in zip(actual, predicted):
            distinct = list(dict.fromkeys(items or []))
            candidates = distinct + [f"pad{j}" for j in range(K)] + [item for item in relevant if item not in distinct]
            y_true = [[1.0 if item in relevant else 0.0 for item in candidates]]
            y_score = [[float(len(candidates) - j) for j in range(len(candidates))]]  # the list, then K misses, then the unfound
            per_row.append(sklearn_metrics.ndcg_score(y_true, y_score, k=K))
        assert got[("ndcg@20", kind)]["theirs"] == pytest.approx(np.mean(per_row), abs=TOL)


def test_implicit_ranking_metrics_at_k(case):
    evaluation = pytest.importorskip("implicit.evaluation", reason="implicit is not installed (pip install implicit)")
    import scipy.sparse as sparse

    explanation, _, _, truth, rows = case
    got = figures(explanation, "implicit")
    pad = 1000  # an item id in no truth: fills a list shorter than K

    class Lists:
        """A 'model' whose recommendations are the submission's lists (cut or padded to K)."""

        def __init__(self, lists):
            self.ids = np.array([(items or [])[:K] + [pad] * (K - len((items or [])[:K])) for items in lists], np.int32)

        def recommend(self, userid, user_items, N=10, **_):
            ids = self.ids[np.asarray(userid)]
            return ids, np.zeros(ids.shape, np.float32)

    for kind in TYPES:
        _, actual, predicted = type_rows(truth, rows, kind)
        users = np.repeat(np.arange(len(actual)), [len(a) for a in actual])
        test = sparse.csr_matrix((np.ones(len(users)), (users, np.concatenate(actual))), shape=(len(actual), pad + 1))
        expected = evaluation.ranking_metrics_at_k(Lists(predicted), sparse.csr_matrix((len(actual), pad + 1)), test, K=K,
                                                   show_progress=False)
        for ours_name, name in (("precision@20", "precision"), ("map@20", "map"), ("ndcg@20", "ndcg")):
            assert got[(ours_name, kind)]["theirs"] == pytest.approx(expected[name], abs=TOL), (kind, name)


def test_click_on_item_zero(tmp_path):
    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"clicks": 0}}\n{"session": 2, "labels": {"clicks": 5}}\n')
    (tmp_path / "sub.csv").write_text("session_type,labels\n1_clicks,0 3\n1_carts,\n1_orders,\n2_clicks,4 5 5\n2_carts,\n2_orders,\n")
    record = figures(explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official"), "otto-official")
    entry = record[("recall@20", "clicks")]
    assert (entry["ours"], entry["theirs"]) == (1.0, 1.0)  # both rows hit: dropping one leaves 1/1
    assert entry["rules"][0]["rows"] == 1 and entry["rules"][0]["first"] == [{"row": "1_clicks", "line": 2}]


def test_repeats_collapsed_move_later_items_up(tmp_path):
    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"carts": [9]}}\n')
    late = " ".join(["1", "1"] + [str(i) for i in range(10, 28)] + ["9"])  # 9 at 0-based rank 20: within 20 once the repeat goes
    (tmp_path / "sub.csv").write_text(f"session_type,labels\n1_clicks,\n1_carts,{late}\n1_orders,\n")
    entry = figures(explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="ranx"), "ranx")[("recall@20", "carts")]
    assert entry["ours"] == 0.0 and entry["theirs"] == 1.0
    assert [rule["rule"] for rule in entry["rules"] if rule["rows"]] == ["repeats collapsed"]


def test_cli_text_and_json(case, tmp_path, capsys):
    truth_lines, lines, *_ = make_case(tmp_path, seed=3)
    assert main(["explain", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "truth.jsonl")]) == 0
    text = capsys.readouterr().out
    assert "otto-official" in text and "item 0 dropped" in text and "docs/" not in text  # a wheel user has no docs/ folder
    rules = text.split("\nrules:\n", 1)[1].splitlines()
    assert "  item 0 dropped: a click label of item 0 is falsy: the row is in neither sum" in rules
    assert "  repeats collapsed: the run is a dict: a repeat takes no slot, later items move up" in rules
    assert main(["explain", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "truth.jsonl"), "--format", "json",
                 "--against", "kaggle-apk,ranx"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["conventions"]] == ["kaggle-apk", "ranx"]
    assert data["k"] == K and data["score"] is not None
    assert list(data["rules"]) == ["repeats collapsed", "denominator |T|", "per-row mean"]  # ranx's
    assert data["rules"]["repeats collapsed"] == "the run is a dict: a repeat takes no slot, later items move up"


def test_cli_names_every_convention_without_importing_them():
    from scorer.analytics.explain.conventions import CONVENTIONS
    from scorer.cli import explain as command

    assert command.CONVENTION_NAMES == tuple(c.name for c in CONVENTIONS)


def test_cli_usage_errors(tmp_path, capsys):
    make_case(tmp_path, seed=4)
    args = ["explain", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "truth.jsonl")]
    assert main([*args, "--against", "nope"]) == 2
    assert "unknown convention 'nope'" in capsys.readouterr().err
    assert main([*args, "--competition", "hm"]) == 2  # the list shape turns its rules; an OTTO truth is no H&M truth
    assert "cannot read truth file" in capsys.readouterr().err
    assert main(["explain", str(tmp_path / "missing.csv"), "--truth", str(tmp_path / "truth.jsonl")]) == 1
    assert "could not be read" in capsys.readouterr().out


def test_a_file_with_errors_exits_1_and_scores_its_bad_lines_as_empty_rows(tmp_path, capsys):
    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"clicks": 5}}\n{"session": 2, "labels": {"clicks": 6}}\n')
    (tmp_path / "sub.csv").write_text("session_type,labels\n1_clicks,5 x\n1_carts,\n1_orders,\n2_clicks,6\n2_carts,\n2_orders,\n")
    assert main(["explain", str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "truth.jsonl"), "--against", "trec_eval", "--format", "json"]) == 1
    entry = {(e["metric"], e["type"]): e for e in json.loads(capsys.readouterr().out)["conventions"][0]["metrics"]}[("P_20", "clicks")]
    assert entry["ours"] == pytest.approx(0.025) and entry["theirs"] == pytest.approx(0.05)  # the bad line: no predictions, not averaged


def test_a_type_name_of_eight_bytes_or_more_explains_as_it_scores(tmp_path):
    """A name that does not fit the one-word match with its comma (parse.type_words) is found byte by byte."""
    import scorer

    config = (ROOT / "configs" / "otto.toml").read_text().replace('types = ["clicks", "carts", "orders"]', 'types = ["clicks", "weeklyorders"]')
    (tmp_path / "long.toml").write_text(config.replace("weights = [0.10, 0.30, 0.60]", "weights = [0.5, 0.5]"))
    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"clicks": 5, "weeklyorders": [7, 8]}}\n'
                                          '{"session": 2, "labels": {"clicks": 3, "weeklyorders": [9]}}\n')
    (tmp_path / "sub.csv").write_text("session_type,labels\n1_clicks,4 5\n1_weeklyorders,8 1 7\n2_clicks,3\n2_weeklyorders,1 9\n")
    explained = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", config=tmp_path / "long.toml", against="trec_eval")
    scored = scorer.score(tmp_path / "sub.csv", tmp_path / "truth.jsonl", config=tmp_path / "long.toml").metrics
    ours = {(e["ours_metric"], e["type"]): e["ours"] for e in explained.conventions[0]["metrics"]}
    assert scored["weeklyorders"]["map@20"] > 0 and ours[("map@20", "weeklyorders")] == pytest.approx(scored["weeklyorders"]["map@20"])
    assert scored["clicks"]["ndcg@20"] > 0 and ours[("ndcg@20", "clicks")] == pytest.approx(scored["clicks"]["ndcg@20"])
