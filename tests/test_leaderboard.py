"""scorer leaderboard: the joint bootstrap, the ranking figures and the multiple-comparison control against slow,
obvious references on small data; the MDE by simulation; the command's inputs, outputs and exit codes."""

from __future__ import annotations

import gc
import json
import math
import weakref
from statistics import NormalDist

import numpy as np
import pytest

import scorer
from conftest import TYPES, submission_text, truth_lines
from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.leaderboard.board import collect, leaderboard
from scorer.analytics.leaderboard.joint_bootstrap import BLOCK, joint_sums, resample_weights, resampled_scores
from scorer.analytics.leaderboard.mde import contributions, mde, multiplier
from scorer.analytics.leaderboard.multiple_testing import adjust
from scorer.analytics.leaderboard.standings import standings
from scorer.analytics.split import hash_split
from scorer.cli.main import main
from scorer.kernels.resample import stream_seeds

# -- small data: a truth and submissions of different strength ---------------------------------------------------


def make_truth(rng, n_sessions: int) -> dict:
    truth = {}
    for s in range(1, n_sessions + 1):
        labels = {"clicks": int(rng.integers(1, 1000))}
        if rng.random() < 0.5:
            labels["carts"] = sorted(set(rng.integers(1, 1000, int(rng.integers(1, 4))).tolist()))
        if rng.random() < 0.3:
            labels["orders"] = sorted(set(rng.integers(1, 1000, int(rng.integers(1, 5))).tolist()))
        truth[s] = labels
    return truth


def make_submission(rng, truth: dict, strength: float) -> str:
    """Each truth item is among the 20 predictions with probability `strength`, at a random rank."""
    rows = []
    for s, labels in truth.items():
        for t in TYPES:
            wanted = labels.get(t, [])
            wanted = [wanted] if isinstance(wanted, int) else wanted
            items = [i for i in wanted if rng.random() < strength]
            filler = [int(x) for x in rng.integers(1000, 100_000, 20)]
            items = list(dict.fromkeys(items + filler))[:20]
            rng.shuffle(items)
            rows.append((s, t, items))
    return submission_text(rows)


@pytest.fixture(scope="module")
def board_files(tmp_path_factory):
    """A truth of 600 sessions and five submissions (two of them identical), with their paths."""
    folder = tmp_path_factory.mktemp("leaderboard")
    rng = np.random.default_rng(5)
    truth = make_truth(rng, 600)
    truth_path = folder / "truth.jsonl"
    truth_path.write_text(truth_lines(truth))
    paths = []
    for name, strength in (("strong", 0.7), ("middle", 0.5), ("close", 0.48), ("weak", 0.2)):
        path = folder / f"{name}.csv"
        path.write_text(make_submission(rng, truth, strength))
        paths.append(path)
    twin = folder / "twin.csv"
    twin.write_bytes(paths[1].read_bytes())
    paths.append(twin)
    return truth_path, paths


def scored(truth_path, paths):
    return [(str(p), scorer.score(p, truth_path, strict=True)) for p in paths]


# -- the slow references ---------------------------------------------------------------------------------------


def reference_ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of strictly better scores, by a double loop."""
    out = np.zeros(scores.shape, int)
    for r in range(scores.shape[0]):
        for i in range(scores.shape[1]):
            out[r, i] = 1 + sum(1 for j in range(scores.shape[1]) if scores[r, j] > scores[r, i])
    return out


def reference_quantiles(values: list[int], level: float) -> tuple[int, int]:
    """The ⌊(α/2)(R-1)⌋-th and ⌈(1-α/2)(R-1)⌉-th smallest values (0-based), α = 1 - level."""
    ordered = sorted(values)
    alpha = 1 - level
    return ordered[math.floor(alpha / 2 * (len(ordered) - 1) + 1e-9)], ordered[math.ceil((1 - alpha / 2) * (len(ordered) - 1) - 1e-9)]


def reference_holm(p: list[float]) -> list[float]:
    """Holm's step-down procedure as written in the textbook, one hypothesis at a time."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def reference_bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg's step-up procedure, from the largest p-value down."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for k in range(m - 1, -1, -1):
        i = order[k]
        running = min(running, min(1.0, m / (k + 1) * p[i]))
        out[i] = running
    return out


def reference_pair_p(x: np.ndarray, y: np.ndarray, observed: float) -> float:
    """2 (1 - Φ(|observed| / se)), se the sample standard deviation of the paired resampled differences, by a loop."""
    d = [a - b for a, b in zip(x, y)]
    mean = sum(d) / len(d)
    se = math.sqrt(sum((v - mean) ** 2 for v in d) / (len(d) - 1))
    if se == 0:
        return 1.0 if observed == 0 else 0.0
    return 2 * (1 - NormalDist().cdf(abs(observed) / se))


def reference_tiers(order, observed, adjusted, alpha) -> dict[int, int]:
    tiers, head, current = {}, None, 0
    for i in order:
        if head is None or (observed[head] > observed[i] and adjusted[(head, i)] <= alpha):
            head, current = i, current + 1
        tiers[i] = current
    return tiers


def reference_resampled_scores(results, n: int, seed: int, rows: np.ndarray | None = None) -> np.ndarray:
    """(n, S) scores: every session's Poisson(1) weight drawn whole, and each Result's recall sums taken by a loop over types."""
    tables = [SessionTable.from_result(r) for r in results]
    n_sessions = tables[0].sizes.shape[0]
    weights = resample_weights(stream_seeds(np.uint64(seed), n), np.arange(n_sessions)).astype(np.float64)
    if rows is not None:
        mask = np.zeros(n_sessions)
        mask[rows] = 1.0
        weights = weights * mask
    out = np.zeros((n, len(tables)))
    for s, table in enumerate(tables):
        for t in range(len(table.types)):
            hits = table.values[:, t * len(table.metrics)]  # recall@20, the scored metric: the first of the type's columns
            den = np.minimum(table.sizes[:, t], 20).astype(np.float64)
            for r in range(n):
                total = weights[r] @ den
                out[r, s] += table.weights[t] * (weights[r] @ hits / total if total > 0 else 0.0)
    return out


# -- the kernel and the joint sums -----------------------------------------------------------------------------


def test_session_weights_depend_on_the_resample_and_session_only_and_are_poisson_one():
    seeds = stream_seeds(np.uint64(3), 50)
    whole = resample_weights(seeds, np.arange(20_000))
    rows = np.array([19_999, 7, 8, 12_345, 0])
    assert np.array_equal(resample_weights(seeds, rows), whole[:, rows])
    assert np.array_equal(resample_weights(seeds[10:20], rows), whole[10:20][:, rows])
    counts = np.bincount(whole.astype(int).ravel(), minlength=8)[:6] / whole.size
    poisson = [math.exp(-1) / math.factorial(c) for c in range(6)]
    assert np.allclose(counts, poisson, atol=0.002), counts
    assert not np.array_equal(whole, resample_weights(stream_seeds(np.uint64(4), 50), np.arange(20_000)))


@pytest.mark.parametrize("block, threads", [(7, 1), (64, 2), (BLOCK, 2)])
def test_joint_sums_are_the_weights_times_the_columns(block, threads):
    rng = np.random.default_rng(0)
    matrix = rng.integers(0, 5, (1000, 9)).astype(np.float32)
    matrix[:, 3] = rng.random(1000).astype(np.float32)  # a fractional column too
    sides = [np.sort(rng.choice(1000, 300, replace=False))]
    sides.append(np.setdiff1d(np.arange(1000), sides[0]))
    sums = joint_sums(matrix, sides, 40, seed=11, threads=threads, block=block)
    weights = resample_weights(stream_seeds(np.uint64(11), 40), np.arange(1000)).astype(np.float64)
    for side, got in zip(sides, sums):
        assert np.allclose(got, weights[:, side] @ matrix[side].astype(np.float64), rtol=1e-6, atol=0)
        integer = [c for c in range(9) if c != 3]
        assert np.array_equal(got[:, integer], weights[:, side] @ matrix[side][:, integer].astype(np.float64))


def test_joint_bootstrap_scores_match_the_slow_reference(board_files):
    truth_path, paths = board_files
    results = [r for _, r in scored(truth_path, paths)]
    columns, names, unranked = collect(((str(p), r) for p, r in zip(paths, results)), len(paths))
    assert not unranked and names == [str(p) for p in paths]
    sums = joint_sums(columns.used(), [np.arange(600)], 60, seed=9, threads=2)[0]
    fast = resampled_scores(sums, 3, columns.weights)
    assert np.allclose(fast, reference_resampled_scores(results, 60, 9), rtol=1e-12, atol=1e-15)


def test_collect_keeps_no_result():
    """Only the numerators outlive a Result: the Results handed in one at a time are freed."""
    rng = np.random.default_rng(1)
    truth = make_truth(rng, 50)
    refs = []

    def stream(tmp):
        truth_path = tmp / "t.jsonl"
        truth_path.write_text(truth_lines(truth))
        for k in range(4):
            path = tmp / f"s{k}.csv"
            path.write_text(make_submission(rng, truth, 0.5))
            result = scorer.score(path, truth_path)
            refs.append(weakref.ref(result))
            yield str(path), result
            del result

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        columns, names, _ = collect(stream(Path(tmp)), 4)
    gc.collect()
    assert len(refs) == 4 and all(ref() is None for ref in refs)
    assert columns.used().dtype == np.float32 and columns.used().shape == (50, 3 * 5)


# -- the ranking figures against the references ------------------------------------------------------------------


def test_standings_match_the_slow_reference():
    rng = np.random.default_rng(2)
    samples = rng.normal([0.50, 0.49, 0.49, 0.45, 0.30, 0.30], 0.02, (300, 6))
    samples[:, 5] = samples[:, 4]  # a twin: equal in every resample
    samples[:, 2] = np.round(samples[:, 2], 2)  # ties between others in some resamples
    samples[:, 1] = np.round(samples[:, 1], 2)
    observed = np.array([0.50, 0.49, 0.49, 0.45, 0.30, 0.30])
    for method, reference in (("holm", reference_holm), ("bh", reference_bh)):
        found = standings(observed, samples, level=0.9, top=2, method=method)
        ranks = reference_ranks(samples)
        assert np.array_equal(found["rank"], [1, 2, 2, 4, 5, 5])
        for i in range(6):
            low, high = reference_quantiles(list(ranks[:, i]), 0.9)
            assert (found["rank_low"][i], found["rank_high"][i]) == (low, high)
            assert found["p_first"][i] == pytest.approx(np.mean(ranks[:, i] == 1))
            assert found["p_top"][i] == pytest.approx(np.mean(ranks[:, i] <= 2))
        order = list(found["order"])
        assert order == [0, 1, 2, 3, 4, 5]
        pairs = [(order[a], order[b]) for a in range(6) for b in range(a + 1, 6)]
        p = [reference_pair_p(samples[:, i], samples[:, j], observed[i] - observed[j]) for i, j in pairs]
        assert np.allclose([found["p_values"][i, j] for i, j in pairs], p, rtol=1e-9, atol=1e-15)
        adjusted = dict(zip(pairs, reference(p)))
        assert np.allclose([found["adjusted"][i, j] for i, j in pairs], [adjusted[pair] for pair in pairs])
        expected = reference_tiers(order, observed, adjusted, 0.1)
        assert [found["tier"][i] for i in range(6)] == [expected[i] for i in range(6)]
        assert found["p_values"][4, 5] == 1.0 and found["tier"][4] == found["tier"][5]
    assert found["tier"][0] == 1 and found["tier"][4] > found["tier"][0]  # clearly apart: another tier


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_adjusted_p_values_match_the_step_procedures(method):
    rng = np.random.default_rng(4)
    for size in (1, 2, 7, 50):
        p = rng.random(size) ** 3
        p[:: 3] = p[0]  # ties
        reference = reference_holm if method == "holm" else reference_bh
        assert np.allclose(adjust(p, method), reference(list(p)))
    with_nan = np.array([0.01, np.nan, 0.04])
    got = adjust(with_nan, method)
    assert np.isnan(got[1]) and np.allclose(got[[0, 2]], reference([0.01, 0.04]))


def test_holm_controls_more_strictly_than_bh():
    p = np.array([0.001, 0.01, 0.02, 0.03, 0.04])
    holm, bh = adjust(p, "holm"), adjust(p, "bh")
    assert (holm >= bh - 1e-15).all() and (bh <= 0.05).all() and (holm > 0.05).any()


# -- the leaderboard end to end ---------------------------------------------------------------------------------


def test_leaderboard_figures_match_the_references(board_files):
    truth_path, paths = board_files
    pairs = scored(truth_path, paths)
    results = [r for _, r in pairs]
    columns, names, _ = collect(iter(pairs), len(pairs))
    board = leaderboard(columns, names, n=200, seed=3, level=0.95, top=2, method="holm", threads=2)
    by_name = {s["name"]: s for s in board["submissions"]}
    samples = reference_resampled_scores(results, 200, 3)
    ranks = reference_ranks(samples)
    for i, (name, result) in enumerate(pairs):
        entry = by_name[name]
        assert entry["score"] == pytest.approx(result.score, abs=1e-12)
        for t in TYPES:
            assert entry["figures"][t] == pytest.approx(result.metrics[t]["recall@20"], abs=1e-12)
        assert (entry["rank_low"], entry["rank_high"]) == reference_quantiles(list(ranks[:, i]), 0.95)
        assert entry["p_first"] == pytest.approx(np.mean(ranks[:, i] == 1))
        assert entry["p_top"] == pytest.approx(np.mean(ranks[:, i] <= 2))
    ordered = [s["name"] for s in board["submissions"]]
    assert ordered[0].endswith("strong.csv") and ordered[-1].endswith("weak.csv")
    twin, middle = by_name[str(paths[4])], by_name[str(paths[1])]
    assert twin["rank"] == middle["rank"] and twin["tier"] == middle["tier"] and twin["p_first"] == middle["p_first"]
    assert board["control"]["comparisons"] == 10 and len(board["pairs"]) == 10
    assert by_name[str(paths[3])]["tier"] > by_name[str(paths[0])]["tier"]  # weak vs strong: apart
    assert by_name[str(paths[0])]["p_first"] > 0.9
    # the same seed gives the same board whatever the threads; another seed another one
    again = leaderboard(*collect(iter(pairs), len(pairs))[:2], n=200, seed=3, top=2, threads=1)
    assert again["submissions"] == board["submissions"] and again["pairs"] == board["pairs"]
    other = leaderboard(*collect(iter(pairs), len(pairs))[:2], n=200, seed=4, top=2)
    assert other["pairs"] != board["pairs"]


def test_split_ranks_each_side_on_the_same_resamples(board_files):
    truth_path, paths = board_files
    pairs = scored(truth_path, paths[:4])
    results = [r for _, r in pairs]
    truth = results[0].truth
    split = hash_split(truth.sessions, 0.4, seed=1)
    board = leaderboard(*collect(iter(pairs), 4)[:2], n=150, seed=2, split=split)
    public, private = np.flatnonzero(split.usage == 0), np.flatnonzero(split.usage == 1)
    ranks_public = reference_ranks(reference_resampled_scores(results, 150, 2, public))
    ranks_private = reference_ranks(reference_resampled_scores(results, 150, 2, private))
    by_name = {s["name"]: s for s in board["submissions"]}
    for i, (name, _) in enumerate(pairs):
        assert by_name[name]["rank_change"] == pytest.approx(np.abs(ranks_private[:, i] - ranks_public[:, i]).mean())
        assert by_name[name]["public_rank"] >= 1 and by_name[name]["private_rank"] >= 1
    assert board["split"]["sessions"] == {"public": len(public), "private": len(private)}
    # the main ranking is over both sides: the same as without a split (no session is ignored)
    plain = leaderboard(*collect(iter(pairs), 4)[:2], n=150, seed=2)
    assert [s["rank_low"] for s in plain["submissions"]] == [s["rank_low"] for s in board["submissions"]]
    assert [s["score"] for s in plain["submissions"]] == pytest.approx([s["score"] for s in board["submissions"]], abs=1e-12)


def test_mde_pairs_match_the_per_submission_contributions(board_files):
    """The one-pass, blockwise MDE of the board against each submission's c_s taken whole (mde.contributions)."""
    truth_path, paths = board_files
    pairs = scored(truth_path, paths[:4])
    split = hash_split(pairs[0][1].truth.sessions, 0.5, seed=3)
    board = leaderboard(*collect(iter(pairs), 4)[:2], n=20, seed=2, split=split, plan_mde=True, mde_sessions=10_000)
    private = np.flatnonzero(split.usage == 1)
    per = {}
    for name, result in pairs:
        table = SessionTable.from_result(result)
        num, den = table.parts(table.values[private], table.sizes[private], [(t, 0) for t in range(3)])
        per[name] = contributions(num, den, table.weights)
    plan = board["mde"]
    assert plan["sessions"] == 10_000 and plan["variance_from"] == len(private) and len(plan["pairs"]) == 3
    for pair in plan["pairs"]:
        spread = np.std(per[pair["a"]] - per[pair["b"]], ddof=1)
        assert pair["sd"] == pytest.approx(spread, rel=1e-9)
        assert pair["mde"] == pytest.approx(multiplier(0.05, 0.8) * spread / 100, rel=1e-9)
    leader = board["submissions"][0]["name"]
    assert plan["unpaired_mde"] == pytest.approx(multiplier(0.05, 0.8) * math.sqrt(2) * np.std(per[leader], ddof=1) / 100, rel=1e-9)


def test_split_usage_ranks_public_and_private_and_ignores_ignored(board_files, tmp_path, capsys):
    """A truth with Kaggle's Usage: Ignored sessions count nowhere; the ranked score is the one over the rest."""
    truth_path, paths = board_files
    lines = truth_path.read_text().splitlines()
    usage = ["Public", "Private", "Private", "Ignored"]
    marked = tmp_path / "usage.jsonl"
    marked.write_text("".join(json.dumps({**json.loads(line), "usage": usage[k % 4]}) + "\n" for k, line in enumerate(lines)))
    kept = tmp_path / "kept.jsonl"  # the same truth without its Ignored sessions
    kept.write_text("".join(line + "\n" for k, line in enumerate(lines) if k % 4 != 3))
    code, board, _ = run_json(capsys, ["leaderboard", *map(str, paths[:3]), "--truth", str(marked), "--split", "usage",
                                       "--bootstrap", "30", "--lenient"])
    assert code == 0 and board["sessions"] == 450 and board["split"]["sessions"] == {"public": 150, "private": 300}
    for entry in board["submissions"]:
        assert entry["score"] == pytest.approx(scorer.score(entry["name"], kept).score, abs=1e-12)
    assert main(["leaderboard", str(paths[0]), "--truth", str(truth_path), "--split", "usage"]) == 2
    assert "no Usage column" in capsys.readouterr().err


# -- the MDE by simulation ---------------------------------------------------------------------------------------


def test_mde_is_detected_with_80_percent_power_in_simulation():
    """A population whose true difference is the MDE at n sessions: samples of n sessions detect it about 80% of the time.

    Two tests: the delta-method z-test the MDE assumes (2,000 samples), and the leaderboard's own bootstrap p-value
    of the pair (200 samples of 100 resamples each, so a wider band)."""
    rng = np.random.default_rng(7)
    pool = 200_000
    den = rng.integers(1, 4, pool).astype(np.float64)
    skill = rng.random(pool)
    hits_a = rng.binomial(den.astype(int), 0.3 + 0.4 * skill).astype(np.float64)
    hits_b = rng.binomial(den.astype(int), 0.3 + 0.4 * skill).astype(np.float64)  # correlated with A through skill
    weights = np.array([1.0])
    c_b = contributions(hits_b[:, None], den[:, None], weights)
    c_a = contributions(hits_a[:, None], den[:, None], weights)
    n = 3000
    target = mde(np.std(c_a - c_b, ddof=1), n)
    shift = target - (hits_a.sum() - hits_b.sum()) / den.sum()
    hits_a = hits_a + shift * den  # now the population's difference is exactly the MDE
    assert (hits_a.sum() - hits_b.sum()) / den.sum() == pytest.approx(target)
    z = multiplier(0.05, 0.8) - NormalDist().inv_cdf(0.8)
    detected = 0
    for _ in range(2000):
        take = rng.integers(0, pool, n)
        a, b, d = hits_a[take], hits_b[take], den[take]
        delta = (a.sum() - b.sum()) / d.sum()
        spread = np.std(contributions(a[:, None], d[:, None], weights) - contributions(b[:, None], d[:, None], weights), ddof=1)
        detected += abs(delta) / (spread / math.sqrt(n)) > z
    assert 0.77 <= detected / 2000 <= 0.83, detected / 2000
    detected = 0
    for k in range(200):
        take = rng.integers(0, pool, n)
        matrix = np.stack([den[take], hits_a[take], hits_b[take]], axis=1).astype(np.float32)
        sums = joint_sums(matrix, [np.arange(n)], 100, seed=k, threads=1)[0]
        samples = resampled_scores(sums, 1, weights)
        observed = resampled_scores(matrix.sum(axis=0, dtype=np.float64), 1, weights)
        found = standings(observed, samples)
        detected += found["p_values"][0, 1] <= 0.05
    assert 0.68 <= detected / 200 <= 0.92, detected / 200


# -- the command --------------------------------------------------------------------------------------------------


def run_json(capsys, argv):
    code = main(argv + ["--format", "json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip().startswith("{") else None), out.err


def test_command_json_has_the_issue_fields(board_files, capsys, tmp_path):
    truth_path, paths = board_files
    code, board, _ = run_json(capsys, ["leaderboard", *map(str, paths), "--truth", str(truth_path), "--bootstrap", "100",
                                       "--split", "public=0.5", "--mde", "--method", "bh", "--report", str(tmp_path / "b.png")])
    assert code == 0
    for entry in board["submissions"]:
        assert {"name", "score", "rank", "rank_low", "rank_high", "p_first", "tier"} <= set(entry)
        assert 1 <= entry["rank_low"] <= entry["rank_high"] <= len(paths) and 0 <= entry["p_first"] <= 1
    assert board["control"]["method"] == "bh" and board["split"]["mean_rank_change"] is not None
    assert board["mde"]["sessions"] == board["split"]["sessions"]["private"] and len(board["mde"]["pairs"]) == 4
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_text_and_grade_records(board_files, capsys, tmp_path):
    truth_path, paths = board_files
    records = tmp_path / "results.jsonl"
    lines = [json.dumps({"file": str(p), "valid": True, "score": scorer.score(p, truth_path, strict=True).score,
                         "metrics": {t: {"recall@20": 0.1} for t in TYPES}}) for p in paths[:3]]
    lines.append(json.dumps({"file": str(tmp_path / "gone.csv"), "valid": False, "score": None, "error": "the task failed"}))
    records.write_text("\n".join([lines[0]] + lines) + "\n")  # the first file twice, as a resumed run writes it
    assert main(["leaderboard", "--results", str(records), "--truth", str(truth_path), "--bootstrap", "50"]) == 1
    out = capsys.readouterr().out
    assert "3 submissions ranked" in out and "gone.csv: the task failed" in out and "Holm" in out
    code, board, _ = run_json(capsys, ["leaderboard", "--results", str(records)])  # no truth: the records' table
    assert code == 1 and [s["rank"] for s in board["submissions"]] == [1, 2, 3] and board["submissions"][0]["p_first"] is None


def test_command_ranks_valid_files_and_lists_invalid_ones(board_files, capsys, tmp_path):
    truth_path, paths = board_files
    bad = tmp_path / "bad.csv"
    bad.write_text("session_type,labels\n1_clicks,x\n")
    missing = tmp_path / "missing.csv"
    code, board, _ = run_json(capsys, ["leaderboard", str(paths[0]), str(bad), str(missing), "--truth", str(truth_path),
                                       "--bootstrap", "20"])
    assert code == 1 and len(board["submissions"]) == 1 and [u["name"] for u in board["unranked"]] == [str(bad), str(missing)]
    assert "S027" in board["unranked"][1]["reason"]
    assert board["submissions"][0]["tier"] == 1 and board["submissions"][0]["p_first"] == 1.0


def test_command_without_resamples_gives_the_table_alone(board_files, capsys, tmp_path):
    truth_path, paths = board_files
    code, board, _ = run_json(capsys, ["leaderboard", *map(str, paths[:3]), "--truth", str(truth_path), "--bootstrap", "0",
                                       "--report", str(tmp_path / "b.png")])
    assert code == 0 and [s["rank"] for s in board["submissions"]] == [1, 2, 3]
    assert all(s["rank_low"] is None and s["tier"] is None for s in board["submissions"]) and board["pairs"] == []
    assert main(["leaderboard", str(paths[0]), "--truth", str(truth_path), "--bootstrap", "0"]) == 0
    assert "no resamples" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["leaderboard"], "give submission files or --results"),
    (["leaderboard", "a.csv"], "--truth is needed"),
    (["leaderboard", "a.csv", "--results", "r.jsonl"], "not both"),
    (["leaderboard", "a.csv", "--truth", "t.jsonl", "--report", "x.pdf"], "must end in .html, .htm or .png"),
])
def test_command_usage_errors_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_command_bad_records_exit_2_naming_the_line(tmp_path, capsys):
    records = tmp_path / "r.jsonl"
    records.write_text('{"file": "a.csv", "score": 0.1}\n{not json\n')
    assert main(["leaderboard", "--results", str(records)]) == 2
    assert "line 2" in capsys.readouterr().err
    records.write_text('{"score": 0.1}\n')
    assert main(["leaderboard", "--results", str(records)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_results_keep_each_files_last_final_record_and_skip_a_torn_last_line(tmp_path):
    from scorer.jobs.records import read_records

    lines = [{"file": "a.csv", "status": "scored", "score": 0.5}, {"file": "b.csv", "status": "retryable", "reason": "lost"},
             {"file": "a.csv", "status": "retryable", "reason": "lost"}, {"file": "c.csv", "status": "invalid", "score": None},
             {"file": "c.csv", "status": "scored", "score": 0.25}]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"file": "d.csv", "sta')
    records = {r["file"]: r for r in read_records(str(path))}
    assert records == {"a.csv": lines[0], "b.csv": lines[1], "c.csv": lines[4]}  # b: no final record, listed unranked


def test_a_file_given_twice_under_two_spellings_is_ranked_once(board_files, capsys):
    truth_path, paths = board_files
    again = f"{paths[0].parent}/./{paths[0].name}"
    code, board, _ = run_json(capsys, ["leaderboard", str(paths[0]), again, str(paths[1]), "--truth", str(truth_path), "--bootstrap", "0"])
    assert code == 0 and sorted(s["name"] for s in board["submissions"]) == sorted([str(paths[0]), str(paths[1])])
