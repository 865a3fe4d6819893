"""Leaderboard analytics: bootstrap coverage, randomization test, split, breakdowns, CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import scorer
from conftest import TYPES, full_rows, submission_text, truth_lines
from scorer.analytics.bootstrap import SessionTable, bootstrap, resample
from scorer.analytics.compare import compare
from scorer.analytics.split import hash_split
from scorer.cli.main import main
from scorer.kernels.resample import group_rows, poisson_draws, sign_flip_draws, stream_seeds
from scorer.spec.metrics import parse_metric

WEIGHTS = np.array([0.1, 0.3, 0.6])


def simulated_table(rng, n, p):
    """n sessions; |T| per type from a small range, hits ~ Bin(min(20, |T|), p_t): the true recall is p_t."""
    sizes = np.stack([rng.integers(0, 2, n), rng.integers(0, 4, n), rng.integers(0, 6, n)], axis=1)
    hits = rng.binomial(np.minimum(sizes, 20), p)
    return SessionTable(TYPES, (parse_metric("recall@20"),), WEIGHTS, hits.astype(np.float64), sizes)


def test_bootstrap_interval_covers_the_true_score_at_about_the_stated_rate():
    rng = np.random.default_rng(11)
    p = np.array([0.5, 0.3, 0.2])
    truth = float((WEIGHTS * p).sum())
    trials, covered, covered_types = 300, 0, np.zeros(3)
    for trial in range(trials):
        out = bootstrap(simulated_table(rng, 600, p), 300, seed=trial, level=0.9)
        covered += out["score"]["low"] <= truth <= out["score"]["high"]
        covered_types += [out["metrics"][t]["recall@20"]["low"] <= p[i] <= out["metrics"][t]["recall@20"]["high"]
                          for i, t in enumerate(TYPES)]
    # 90% stated; with 300 trials the binomial standard error is 1.7 points
    assert 0.84 <= covered / trials <= 0.96
    assert np.all((covered_types / trials >= 0.84) & (covered_types / trials <= 0.96))


def test_bootstrap_is_repeatable_with_a_seed_and_independent_of_threads():
    table = simulated_table(np.random.default_rng(3), 3000, np.array([0.4, 0.2, 0.1]))
    one = bootstrap(table, 200, seed=5, threads=1)
    assert bootstrap(table, 200, seed=5, threads=2) == one
    other = bootstrap(table, 200, seed=6)
    assert other["score"]["value"] == one["score"]["value"] and other["score"]["low"] != one["score"]["low"]


def test_poisson_bootstrap_sums_have_the_poisson_mean_and_variance():
    # Σ_j c_j v_j with c_j ~ Poisson(m_j): mean Σ m_j v_j, variance Σ m_j v_j²; large and small groups
    values = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0], [2.0, 1.0]])
    counts = np.array([1, 3, 40, 1000], np.int64)
    draws = np.empty((20000, len(counts)))
    poisson_draws(counts, stream_seeds(np.uint64(1), 20000), draws)
    assert np.allclose(draws.mean(0), counts, atol=4 * np.sqrt(counts / 20000)) and np.allclose(draws.var(0), counts, rtol=0.06)
    out = draws @ values
    mean, var = (counts[:, None] * values).sum(0), (counts[:, None] * values**2).sum(0)
    assert np.allclose(out.mean(0), mean, atol=4 * np.sqrt(var / 20000))
    assert np.allclose(out.var(0), var, rtol=0.05)


def test_group_rows_matches_numpy_unique():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 4, (5000, 3))
    group, first = group_rows(keys[:, :2].copy(), keys[:, 2:].copy())
    assert len(first) == len(np.unique(keys, axis=0))
    assert np.array_equal(keys[first[group]], keys)  # every row equals its group's first row


def test_sign_flip_p_value_matches_exact_enumeration():
    delta = np.array([[3.0], [1.0], [-1.0], [2.0], [2.0], [0.0], [1.0], [-2.0], [4.0]])
    observed = abs(delta.sum())
    exact = np.mean([abs((np.array(signs)[:, None] * delta).sum()) >= observed for signs in itertools.product((1, -1), repeat=len(delta))])
    group, first = group_rows(delta.view(np.int64), np.zeros((len(delta), 0), np.int64))
    counts = np.bincount(group).astype(np.int64)
    flips = resample(delta[first], counts, 20000, seed=2, kind="flip")
    assert abs(np.mean(np.abs(flips[:, 0]) >= observed - 1e-12) - exact) < 0.015
    draws = np.empty((4000, 3))
    sign_flip_draws(np.array([0, 1, 100], np.int64), stream_seeds(np.uint64(0), 4000), draws)
    assert np.all(draws[:, 0] == 0) and set(np.unique(draws[:, 1])) == {-1.0, 1.0}
    assert np.all((draws[:, 2] + 100) % 2 == 0) and abs(draws[:, 2].mean()) < 4 * 10 / np.sqrt(4000)
    assert abs(draws[:, 2].var() - 100) < 10  # 2·Bin(100, 1/2) − 100 has variance 100


# -- files -------------------------------------------------------------------------------------

def make_case(tmp_path, n=300, seed=0, usage=False):
    """A truth of n sessions and three submissions: perfect (all truth items), weak (a few), and weak again (other seed)."""
    rng = np.random.default_rng(seed)
    truth = {}
    for s in range(100, 100 + n):
        labels = {"clicks": int(rng.integers(1, 50))}
        if rng.random() < 0.5:
            labels["carts"] = sorted(set(rng.integers(1, 50, rng.integers(1, 5)).tolist()))
        if rng.random() < 0.4:
            labels["orders"] = sorted(set(rng.integers(1, 50, rng.integers(1, 14)).tolist()))
        truth[s] = labels
    lines = []
    for s, labels in truth.items():
        record = {"session": s, "labels": labels}
        if usage:
            record["usage"] = ["Public", "Private", "Private", "Ignored"][s % 4]
        lines.append(json.dumps(record) + "\n")
    truth_path = tmp_path / "truth.jsonl"
    truth_path.write_text("".join(lines))

    def write(name, pick):
        predictions = {}
        for s, labels in truth.items():
            for t in TYPES:
                items = labels.get(t, [])
                items = [items] if isinstance(items, int) else items
                predictions[(s, t)] = pick(items)
        path = tmp_path / name
        path.write_text(submission_text(full_rows(truth, predictions)))
        return path

    pick_rng = np.random.default_rng(seed + 1)
    perfect = write("perfect.csv", lambda items: list(items) + [999])
    weak = write("weak.csv", lambda items: rng.permutation(list(items) + list(range(50, 80)))[:20].tolist())
    weak2 = write("weak2.csv", lambda items: pick_rng.permutation(list(items) + list(range(50, 80)))[:20].tolist())
    return truth, truth_path, perfect, weak, weak2


def test_compare_a_file_with_itself_gives_p_one_and_no_difference(tmp_path):
    _, truth_path, _, weak, _ = make_case(tmp_path)
    result = scorer.score(weak, truth_path)
    out = compare(result, result, n=300, seed=1)
    for row in [out["score"], *out["types"].values()]:
        assert row["difference"] == 0 and row["p_value"] == 1.0 and row["wins"] == 0 and row["losses"] == 0
        assert row["low"] == row["high"] == 0


def test_compare_a_clearly_better_file_gives_a_small_p_and_a_positive_interval(tmp_path):
    _, truth_path, perfect, weak, _ = make_case(tmp_path)
    a, b = scorer.score(perfect, truth_path), scorer.score(weak, truth_path)
    out = compare(a, b, n=500, seed=4)
    assert out["score"]["difference"] == pytest.approx(a.score - b.score, abs=1e-12)
    assert out["score"]["p_value"] <= 2 / 501
    assert 0 < out["score"]["low"] <= out["score"]["difference"] <= out["score"]["high"]
    assert out["score"]["losses"] == 0 and out["score"]["wins"] > 0
    for t in TYPES:
        assert out["types"][t]["a"] == pytest.approx(a.metrics[t]["recall@20"])
        assert out["types"][t]["b"] == pytest.approx(b.metrics[t]["recall@20"])
    # the other way round: the same p, the opposite sign
    back = compare(b, a, n=500, seed=4)
    assert back["score"]["difference"] == pytest.approx(-out["score"]["difference"])
    assert back["score"]["wins"] == out["score"]["losses"] and back["score"]["losses"] == out["score"]["wins"]


# -- split -------------------------------------------------------------------------------------

def test_hash_split_is_deterministic_disjoint_and_per_session():
    sessions = np.arange(10_000, 30_000, dtype=np.int64)
    one, again = hash_split(sessions, 0.3, seed=7), hash_split(sessions, 0.3, seed=7)
    assert np.array_equal(one.usage, again.usage)
    public, private = one.mask("public"), one.mask("private")
    assert not (public & private).any() and (public | private).all()
    assert abs(public.mean() - 0.3) < 0.02
    assert not np.array_equal(hash_split(sessions, 0.3, seed=8).usage, one.usage)
    part = hash_split(sessions[::7], 0.3, seed=7)  # a session's side does not depend on the others
    assert np.array_equal(part.usage, one.usage[::7])


def _subset_truth(tmp_path, truth, keep, name):
    path = tmp_path / name
    path.write_text(truth_lines({s: labels for s, labels in truth.items() if s in keep}))
    return path


def test_public_and_private_figures_equal_scoring_the_truth_subsets(tmp_path):
    from scorer.analytics.summary import analyse

    truth, truth_path, _, weak, _ = make_case(tmp_path, n=400)
    loaded = scorer.load_truth(truth_path, TYPES)
    result = scorer.score(weak, loaded)
    split = hash_split(loaded.sessions, 0.4, seed=3)
    figures = analyse(result, loaded, split=split)["split"]["figures"]
    for side in ("public", "private"):
        keep = set(loaded.sessions[split.mask(side)].tolist())
        alone = scorer.score(weak, _subset_truth(tmp_path, truth, keep, f"{side}.jsonl"))  # lenient: other rows are unknown
        assert figures[side]["score"] == pytest.approx(alone.score, abs=1e-12)
        for t in TYPES:
            for metric, value in alone.metrics[t].items():
                assert figures[side]["metrics"][t][metric] == pytest.approx(value, abs=1e-12)
    assert figures["all"]["score"] == pytest.approx(result.score, abs=1e-12)


def test_usage_column_splits_and_ignored_sessions_count_nowhere(tmp_path):
    from scorer.analytics.split import resolve_split
    from scorer.analytics.summary import analyse

    truth, truth_path, _, weak, _ = make_case(tmp_path, n=200, usage=True)
    loaded = scorer.load_truth(truth_path, TYPES)
    assert loaded.usage is not None and set(np.unique(loaded.usage)) == {0, 1, 2}
    split = resolve_split(loaded)
    out = analyse(scorer.score(weak, loaded), loaded, split=split, n_bootstrap=50)
    kept = {s for s in truth if s % 4 != 3}
    alone = scorer.score(weak, _subset_truth(tmp_path, truth, kept, "kept.jsonl"))
    assert out["split"]["figures"]["all"]["score"] == pytest.approx(alone.score, abs=1e-12)
    assert out["split"]["sessions"] == {"public": 50, "private": 100, "ignored": 50}
    assert set(out["bootstrap"]["subsets"]) == {"public", "private", "all"}


# -- breakdowns --------------------------------------------------------------------------------

def test_recall_at_k_curve_ends_at_the_scored_recall_and_matches_scoring_at_smaller_k(tmp_path):
    from scorer.analytics.summary import analyse

    _, truth_path, _, weak, _ = make_case(tmp_path)
    loaded = scorer.load_truth(truth_path, TYPES)
    result = scorer.score(weak, loaded)
    b = analyse(result, loaded, breakdowns=True)["breakdown"]
    config = tmp_path / "k5.toml"
    config.write_text('name = "k5"\n[submission]\nheader = ["session_type", "labels"]\nid_pattern = "{session}_{type}"\n'
                      '[scoring]\ntypes = ["clicks", "carts", "orders"]\nk = 5\nmetric = "recall@5"\n')
    at5 = scorer.score(weak, truth_path, config=config)
    for t in TYPES:
        assert b["recall_at_k"][t][19] == pytest.approx(result.metrics[t]["recall@20"], abs=1e-12)
        assert b["recall_at_k"][t][4] == pytest.approx(at5.metrics[t]["recall@5"], abs=1e-12)
        hits = result.slot_values[TYPES.index(t) :: 3, 0].sum()
        assert sum(b["hit_ranks"][t]) == hits
        rows = b["truth_size"][t]
        assert sum(r["sessions"] for r in rows) == result.truth_sessions[t]
        assert sum((r["recall"] or 0) * r["share"] for r in rows) == pytest.approx(result.metrics[t]["recall@20"], abs=1e-12)


def test_session_lengths_from_jsonl_and_parquet_agree(tmp_path):
    import pandas as pd

    from scorer.analytics.breakdown import session_lengths

    events = {5: 3, 7: 1, 9: 12}
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"session": s, "events": [{"aid": 1, "ts": 2, "type": "clicks"}] * n}) + "\n"
                                              for s, n in events.items()))
    pd.DataFrame({"session": [s for s, n in events.items() for _ in range(n)], "aid": 1, "ts": 2, "type": 0}).to_parquet(tmp_path / "s.parquet")
    wanted = np.array([3, 0, 1, 12])
    for name in ("s.jsonl", "s.parquet"):
        assert np.array_equal(session_lengths(tmp_path / name, np.array([5, 6, 7, 9])), wanted)


# -- CLI ---------------------------------------------------------------------------------------

@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_cli_score_with_analytics_json_and_report(tmp_path, capsys):
    _, truth_path, _, weak, _ = make_case(tmp_path, n=120)
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("".join(json.dumps({"session": s, "events": [{"aid": 1}] * (1 + s % 13)}) + "\n" for s in range(100, 220)))
    report = tmp_path / "r.html"
    code = main(["score", str(weak), "--truth", str(truth_path), "--bootstrap", "50", "--split", "public=0.5", "--seed", "3",
                 "--breakdown", "--sessions", str(sessions), "--report", str(report), "--format", "json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out["analytics"]) == {"split", "bootstrap", "breakdown"}
    assert "session_length" in out["analytics"]["breakdown"]
    assert report.read_text().startswith("<!doctype html>") and "data:image/png;base64," in report.read_text()
    assert main(["score", str(weak), "--truth", str(truth_path), "--report", str(tmp_path / "r.png"), "--no-progress"]) == 0
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_compare_text_and_json(tmp_path, capsys):
    _, truth_path, perfect, weak, _ = make_case(tmp_path, n=100)
    assert main(["compare", str(perfect), str(weak), "--truth", str(truth_path), "--resamples", "200", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "A - B" in text and "score" in text
    report = tmp_path / "c.html"
    assert main(["compare", str(perfect), str(weak), "--truth", str(truth_path), "--resamples", "100", "--split", "public=0.5",
                 "--format", "json", "--report", str(report), "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["comparison"]) == {"public", "private", "all"}
    assert "data:image/png;base64," in report.read_text() and "A - B" in report.read_text()
    assert main(["compare", str(perfect), str(weak), "--truth", str(truth_path), "--report", str(tmp_path / "c.txt")]) == 2


@pytest.mark.parametrize("extra, words", [
    (["--split", "public=1.5"], "--split"),
    (["--split", "usage"], "no Usage"),
    (["--report", "out.txt"], ".html, .htm or .png"),
    (["--sessions", "missing.jsonl"], "was not found"),
    (["--bootstrap", "-3"], "--bootstrap"),
    (["--level", "95"], "--level"),
])
def test_cli_bad_analytics_options_say_what_is_wrong(tmp_path, capsys, extra, words):
    _, truth_path, _, weak, _ = make_case(tmp_path, n=20)
    extra = [str(tmp_path / e) if e.endswith((".txt", ".jsonl")) else e for e in extra]
    assert main(["score", str(weak), "--truth", str(truth_path), "--no-progress", *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_cli_compare_refuses_an_unreadable_file(tmp_path, capsys):
    _, truth_path, perfect, _, _ = make_case(tmp_path, n=20)
    code = main(["compare", str(perfect), str(tmp_path / "nope.csv"), "--truth", str(truth_path), "--no-progress"])
    assert code == 1
    assert "nope.csv" in capsys.readouterr().out


# -- Usage in the truth readers ----------------------------------------------------------------

def test_usage_is_read_from_jsonl_and_csv_and_survives_the_cache(tmp_path):
    from scorer.truth.load import load_truth

    (tmp_path / "t.jsonl").write_text('{"session": 3, "labels": {"clicks": 5}, "usage": "Public"}\n'
                                      '{"session": 1, "labels": {"carts": [5, 6]}, "usage": "private"}\n'
                                      '{"session": 2, "usage": "IGNORED"}\n')
    (tmp_path / "t.csv").write_text("session,type,aid,Usage\n1,carts,5,Private\n1,carts,6,Private\n2,,,Ignored\n3,clicks,5,Public\n")
    for name in ("t.jsonl", "t.csv"):
        for _ in range(2):  # the second load comes from the compiled cache
            truth = load_truth(tmp_path / name, TYPES)
            assert truth.sessions.tolist() == [1, 2, 3] and truth.usage.tolist() == [1, 2, 0]
    assert load_truth(tmp_path / "t.jsonl", TYPES, use_cache=False).labels(1, "carts") == [5, 6]


@pytest.mark.parametrize("text, words", [
    ('{"session": 1, "usage": "Public"}\n{"session": 2, "usage": "Secret"}\n', "line 2: Usage 'Secret'"),
    ('{"session": 1}\n{"session": 2, "usage": "Public"}\n', 'line 1: no "usage" key'),
    ('{"session": 1, "usage": "Public"}\n{"session": 2}\n', "line 2: Usage None"),
])
def test_bad_usage_in_a_jsonl_truth_is_named_with_its_line(tmp_path, text, words):
    from scorer.errors import TruthError
    from scorer.truth.load import load_truth

    (tmp_path / "t.jsonl").write_text(text)
    with pytest.raises(TruthError, match=words.replace("(", r"\(")):
        load_truth(tmp_path / "t.jsonl", TYPES, use_cache=False)


def test_a_session_with_two_usages_in_a_table_is_refused(tmp_path):
    from scorer.errors import TruthError
    from scorer.truth.load import load_truth

    (tmp_path / "t.csv").write_text("session,type,aid,Usage\n1,carts,5,Public\n1,carts,6,Private\n")
    with pytest.raises(TruthError, match="session 1 has Usage"):
        load_truth(tmp_path / "t.csv", TYPES, use_cache=False)


def test_hash_split_of_string_ids_hashes_the_id_not_its_code():
    from types import SimpleNamespace

    from scorer.analytics.split import resolve_split

    def table(names, form):  # the string tables of scorer.truth.strings: keys with starts/ends, or offsets
        raw = [name.encode() for name in names]
        offsets = np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(np.int64)
        keys = np.frombuffer(b"".join(raw) + bytes(8), np.uint8)
        ids = SimpleNamespace(keys=keys, offsets=offsets) if form == "offsets" else SimpleNamespace(keys=keys, starts=offsets[:-1], ends=offsets[1:])
        return SimpleNamespace(ids=ids, sessions=np.arange(len(names)))

    names = [f"customer-{i:05d}" for i in range(4000)]
    forward = resolve_split(table(names, "offsets"), 0.3, seed=9)
    backward = resolve_split(table(names[::-1], "starts"), 0.3, seed=9)
    assert np.array_equal(forward.usage, backward.usage[::-1])  # the same id lands on the same side, whatever its code
    assert abs(forward.mask("public").mean() - 0.3) < 0.03
