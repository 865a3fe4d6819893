"""Beyond-accuracy metrics against slow references written from their published formulas (and rectools where it installs)."""

import math
import subprocess
import sys

import numpy as np
import pytest

from scorer.api import score
from scorer.spec.competition import load_competition
from scorer.truth.items import from_popularity, read_items

TYPES = ("clicks", "carts", "orders")
K = 5


def _random_case(tmp_path, seed=0, sessions=60, n_items=40, spacing=1):
    rng = np.random.default_rng(seed)
    popularity = rng.integers(0, 50, n_items).astype(float)
    category = rng.integers(0, 4, n_items) * spacing  # spacing 600: codes beyond the packed word's 9 bits
    embedding = rng.normal(size=(n_items, 3))
    embedding[3] = 0.0  # an item without a usable embedding
    lists, truths = {}, {}
    lines = ["session_type,labels"]
    for s in range(1, sessions + 1):
        truths[s] = {t: sorted(set(rng.integers(0, n_items + 5, rng.integers(0, 4)).tolist())) for t in TYPES}
        for t in TYPES:
            if rng.random() < 0.1:
                continue  # a missing row
            items = list(dict.fromkeys(rng.integers(0, n_items + 5, rng.integers(1, K + 3)).tolist()))[:K]  # ids past the table too
            lists[(s, t)] = items
            lines.append(f"{s}_{t}," + " ".join(map(str, items)))
    (tmp_path / "sub.csv").write_text("\n".join(lines) + "\n")
    import json

    with open(tmp_path / "labels.jsonl", "w") as out:
        for s, by_type in truths.items():
            labels = {"clicks": by_type["clicks"][0]} if by_type["clicks"] else {}
            labels.update({t: by_type[t] for t in ("carts", "orders") if by_type[t]})
            out.write(json.dumps({"session": s, "labels": labels}) + "\n")
    for s in truths:
        truths[s]["clicks"] = truths[s]["clicks"][:1]
    ids = np.arange(n_items)
    items = from_popularity(ids, popularity, category, embedding)
    return lists, truths, items, popularity, category, embedding


def _reference(name, lists, truths, t, popularity, category, embedding, k=K):
    """The metric of type t, written out from its formula with Python loops."""
    n_items = len(popularity)
    total = popularity.sum()
    pop = lambda i: popularity[i] if i < n_items else 0.0  # noqa: E731
    rows = [(s, lists.get((s, t), [])[:k]) for s in truths]
    with_truth = [(s, items) for s, items in rows if truths[s][t]]
    present = [(s, items) for s, items in rows if (s, t) in lists and items]
    if name == "auc":  # implicit.evaluation.ranking_metrics_at_k
        values = []
        for s, items in with_truth:
            likes = set(truths[s][t])
            ids = items + [-1] * (k - len(items))
            hit = miss = auc = 0.0
            pos, neg = len(likes), n_items - len(likes)
            for i in range(k):
                if ids[i] in likes:
                    hit += 1
                else:
                    miss += 1
                    auc += hit
            auc += ((hit + pos) / 2.0) * (neg - miss)
            values.append(auc / (pos * neg))
        return np.mean(values)
    if name == "gauc":
        num = den = 0.0
        for s, items in present:
            rel = [i in truths[s][t] for i in items]
            pairs = [(a, b) for a in range(len(items)) for b in range(len(items)) if rel[a] and not rel[b]]
            if not pairs:
                continue
            num += len(items) * sum(a < b for a, b in pairs) / len(pairs)
            den += len(items)
        return num / den if den else math.nan
    if name == "novelty":
        return np.mean([np.mean([-math.log2(max(pop(i), 1.0) / total) for i in items]) for _, items in present])
    if name == "arp":
        return np.mean([np.mean([pop(i) for i in items]) for _, items in present])
    if name == "aplt":
        head = set(sorted(range(n_items), key=lambda i: (-popularity[i], i))[: round(0.2 * n_items)])
        return np.mean([np.mean([i not in head for i in items]) for _, items in present])
    if name == "serendipity":
        top = set(sorted(range(n_items), key=lambda i: (-popularity[i], i))[:k])
        return np.mean([sum(i in truths[s][t] and i not in top for i in items) / k for s, items in with_truth])
    if name in ("diversity", "diversity_embedding"):
        values = []
        for _, items in present:
            if len(items) < 2:
                continue
            distances = []
            for a in range(len(items)):
                for b in range(a + 1, len(items)):
                    i, j = items[a], items[b]
                    if name == "diversity":
                        same = i < n_items and j < n_items and category[i] == category[j]
                        distances.append(1.0 - same)
                    else:
                        u = embedding[i] if i < n_items else np.zeros(3)
                        v = embedding[j] if j < n_items else np.zeros(3)
                        norm = np.linalg.norm(u) * np.linalg.norm(v)
                        distances.append(1.0 - (u @ v / norm if norm > 0 else 0.0))
            values.append(np.mean(distances))
        return np.mean(values)
    if name == "gini":  # RecBole GiniIndex over every catalogue item
        counts = np.zeros(n_items)
        for _, items in present:
            for i in items:
                if i < n_items:
                    counts[i] += 1
        x = np.sort(counts)
        idx = np.arange(1, n_items + 1)
        return ((2 * idx - n_items - 1) * x).sum() / (n_items * x.sum())
    raise AssertionError(name)


METRICS = {"auc": "auc@5", "gauc": "gauc@5", "novelty": "novelty@5", "arp": "arp@5", "aplt": "aplt@5",
           "serendipity": "serendipity@5", "diversity": "diversity@5", "diversity_embedding": "diversity@5(by=embedding)",
           "gini": "gini@5"}


def _competition(extra):
    import dataclasses

    from scorer.spec.metrics import parse_metric

    otto = load_competition("otto")
    return dataclasses.replace(otto, diagnostics=tuple(parse_metric(m) for m in extra))


@pytest.mark.parametrize("seed, spacing", [(0, 1), (1, 1), (2, 1), (3, 600)])
def test_every_metric_matches_its_slow_reference(tmp_path, seed, spacing):
    lists, truths, items, popularity, category, embedding = _random_case(tmp_path, seed, spacing=spacing)
    assert items.packed.shape[1] == (2 if spacing > 1 else 1)  # wide categories: the table's second column
    result = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", _competition(METRICS.values()), items=items)
    for t in TYPES:
        for name, text in METRICS.items():
            expected = _reference(name, lists, truths, t, popularity, category, embedding)
            got = result.metrics[t][text]
            bound = 2.0**-11 if name.startswith("novelty") else 1e-7  # self-information is kept to 2^-10 bits (docs/metrics.md)
            assert got is not None and got == pytest.approx(expected, rel=1e-9, abs=bound), (t, text)


def test_packed_self_information_is_within_its_stated_bound():
    from scorer.truth.items import SELF_INFO_SCALE

    rng = np.random.default_rng(5)
    items = from_popularity(np.arange(5000), rng.zipf(1.3, 5000).clip(max=10**12).astype(float))
    kept = (items.packed[:, 0] & 0xFFFF) / SELF_INFO_SCALE
    assert np.abs(kept - items.self_info).max() <= 2.0**-11
    assert items.self_info.max() > 20  # a wide range of self-information is kept in the 16 bits


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
@pytest.mark.parametrize("spacing", [1, 600])
def test_aot_module_gives_the_same_side_figures(tmp_path, spacing):
    from scorer.engine import aot_build
    from scorer.kernels import aot, door

    status = aot_build.ensure_built()
    assert aot.load("score") is not None, status
    lists, truths, items, *_ = _random_case(tmp_path, 3, spacing=spacing)
    competition = _competition(METRICS.values())
    with door.using("jit"):
        jit = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", competition, items=items).metrics
    with door.using("compiled"):
        compiled = score(tmp_path / "sub.csv", tmp_path / "labels.jsonl", competition, items=items).metrics
    assert jit == compiled


def test_items_from_a_csv_table_and_from_a_training_log(tmp_path):
    (tmp_path / "items.csv").write_text("aid,popularity,category\n3,10,shoes\n5,2,hats\n9,0,shoes\n")
    side = read_items(tmp_path / "items.csv")
    assert side.catalogue == 3 and side.popularity[3] == 10 and side.category[3] == side.category[9] != side.category[5]
    assert side.self_info[9] == pytest.approx(-math.log2(1 / 12))  # never seen: counted once
    (tmp_path / "train.jsonl").write_text('{"session": 1, "events": [{"aid": 4, "ts": 1, "type": "clicks"}, {"aid": 4, "ts": 2, "type": "carts"}]}\n'
                                          '{"session": 2, "events": [{"aid": 7, "ts": 1, "type": "clicks"}]}\n')
    from scorer.truth.items import from_train

    side = from_train(tmp_path / "train.jsonl")
    assert side.popularity[4] == 2 and side.popularity[7] == 1 and side.catalogue == 2


@pytest.mark.parametrize("text, message", [
    ("popularity\n3\n", "no item id column"),
    ("item,popularity\n3,x\n", "whole numbers"),
    ("item,popularity\n3,1\n3,2\n", "listed twice"),
    ("item,popularity\n-3,1\n", "outside"),
    ("item,popularity\n3,\n", "empty in row 1"),
])
def test_a_bad_item_table_is_a_usage_error_naming_the_problem(tmp_path, text, message):
    path = tmp_path / "items.csv"
    path.write_text(text)
    run = subprocess.run([sys.executable, "-c", "from scorer.cli.main import main; raise SystemExit(main())", "score", str(path),
                          "--truth", str(path), "--items", str(path), "--metrics", "novelty@20"], capture_output=True, text=True)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr


def test_metrics_that_need_items_say_so(tmp_path):
    lists, truths, *_ = _random_case(tmp_path, 4)
    run = subprocess.run([sys.executable, "-c", "from scorer.cli.main import main; raise SystemExit(main())", "score",
                          str(tmp_path / "sub.csv"), "--truth", str(tmp_path / "labels.jsonl"), "--metrics", "novelty@20"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "--items FILE" in run.stderr


def test_cli_shows_them_in_text_and_json(tmp_path):
    import json

    _random_case(tmp_path, 5)
    (tmp_path / "items.csv").write_text("item,popularity\n" + "".join(f"{i},{i % 7}\n" for i in range(40)))
    base = [sys.executable, "-c", "from scorer.cli.main import main; raise SystemExit(main())", "score", str(tmp_path / "sub.csv"),
            "--truth", str(tmp_path / "labels.jsonl"), "--items", str(tmp_path / "items.csv"), "--metrics", "novelty@20,gini@20,auc@20"]
    text = subprocess.run(base, capture_output=True, text=True)
    assert "novelty@20" in text.stdout and "gini@20" in text.stdout
    data = json.loads(subprocess.run(base + ["--format", "json"], capture_output=True, text=True).stdout)
    assert 0.0 <= data["metrics"]["orders"]["auc@20"] <= 1.0


def test_beyond_metrics_need_the_id_type_shape():
    from scorer.errors import ConfigError
    from scorer.spec.competition import competition_from_dict

    with pytest.raises(ConfigError, match="needs shape 'id_type'"):
        competition_from_dict({"name": "x", "submission": {"header": ["customer_id", "prediction"], "shape": "list"},
                               "scoring": {"k": 12, "metric": "map@12", "diagnostics": ["novelty@12"]}})


def test_the_compiled_module_is_rebuilt_when_the_side_types_change():
    """The side tuple's types come from scorer/engine/beyond.py and its kernel from kernels/beyond.py: a stale module would crash."""
    from scorer.kernels import aot

    assert {aot.PACKAGE / "kernels" / "beyond.py", aot.PACKAGE / "engine" / "beyond.py"} <= set(aot.sources())


def test_bootstrap_leaves_beyond_metrics_out_of_its_ratios():
    from scorer.analytics.bootstrap import ratio_parts
    from scorer.spec.metrics import parse_metric

    assert ratio_parts(parse_metric("novelty@20"), np.ones(3), np.ones(3)) is None
