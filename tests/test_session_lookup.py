"""A session's index in the truth is found three ways (parse.session_index): every id from the first to the last (no
table, no sessions passed: id less the first), a lookup table (ids within 4x their count), or binary search (sparse
ids). The same rows score alike under each, in every kernel that looks sessions up: the file pass, a frame, the
candidate stage and explain; a session just outside the truth's ids is an unknown one under each."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import reference
import scorer
from conftest import TYPES, submission_text, truth_lines
from scorer.analytics.explain.published import explain
from scorer.engine.id_kernel import truth_arrays

OFFSETS = range(12)
LAYOUTS = {  # the truth's session ids, by how they are looked up
    "every id": [500 + i for i in OFFSETS],
    "table": [500 + 3 * i for i in OFFSETS],
    "binary search": [500 + 10**12 * i for i in OFFSETS],
}


def case(ids: list[int]):
    rng = np.random.default_rng(7)
    truth = {s: {"clicks": int(rng.integers(0, 9)), "carts": sorted({int(x) for x in rng.integers(0, 9, 3)}),
                 "orders": sorted({int(x) for x in rng.integers(0, 9, 2)})} for s in ids}
    rows = [(s, t, [int(x) for x in rng.permutation(9)[:5]]) for s in ids for t in TYPES]
    outside = [(ids[0] - 1, "clicks", [1]), (ids[-1] + 1, "carts", [2])]  # just outside the ids: unknown sessions
    return truth, rows, outside


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_way_of_looking_sessions_up_scores_alike(tmp_path, layout):
    ids = LAYOUTS[layout]
    truth, rows, outside = case(ids)
    (tmp_path / "truth.jsonl").write_text(truth_lines(truth))
    (tmp_path / "sub.csv").write_text(submission_text(rows + outside))
    loaded = scorer.load_truth(tmp_path / "truth.jsonl")
    sessions, _, table, _, _ = truth_arrays(loaded)
    assert (len(sessions), len(table) > 0) == {"every id": (0, False), "table": (12, True), "binary search": (12, False)}[layout]

    expected = reference.score({(s, t): items for s, t, items in rows},
                               {s: {t: set([v] if t == "clicks" else v) for t, v in labels.items()} for s, labels in truth.items()})
    from_file = scorer.score(tmp_path / "sub.csv", loaded)
    assert from_file.score == pytest.approx(expected["score"], abs=1e-12)
    assert from_file.counts["rows_unknown_session"] == 2 and from_file.counts["rows_missing"] == 0

    frame = pd.DataFrame({"session_type": [f"{s}_{t}" for s, t, _ in rows + outside],
                          "labels": [" ".join(map(str, items)) for _, _, items in rows + outside]})
    assert scorer.score(frame, loaded).score == pytest.approx(expected["score"], abs=1e-12)  # text labels: parse_block
    lists = pd.DataFrame({"session_type": frame["session_type"], "labels": [items for _, _, items in rows + outside]})
    from_lists = scorer.score(lists, loaded)  # list labels: frame_rows
    assert from_lists.score == pytest.approx(expected["score"], abs=1e-12) and from_lists.counts["rows_unknown_session"] == 2

    long = pd.DataFrame([(s, item, -r) for s, t, items in rows if t == "carts" for r, item in enumerate(items)]
                        + [(s, 1, 0.0) for s, _, _ in outside], columns=["session", "aid", "score"])
    candidates = scorer.candidates(long, loaded, k=(5,))
    assert candidates.unknown_sessions == 2
    carts_hits = sum(len(set(items[:5]) & set(truth[s]["carts"])) for s, t, items in rows if t == "carts")
    assert candidates.at_k[5]["carts"]["recall"] == pytest.approx(carts_hits / sum(len(truth[s]["carts"]) for s in ids))

    explained = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official")
    ours = {entry["type"]: entry["ours"] for entry in explained.conventions[0]["metrics"] if entry["metric"] == "recall@20"}
    assert ours == pytest.approx({t: expected[t]["recall"] for t in TYPES}, abs=1e-12)


def test_a_dense_truths_table_is_not_read_by_the_quick_check_nor_by_a_kernel(tmp_path):
    """A compiled truth vouched for (a cache entry: the quick check) whose sessions are every id from the first to
    the last: its lookup table is never read, so not even a table of garbage changes a score; the full check
    still refuses that table."""
    from scorer.errors import TruthError
    from scorer.truth.compiled import read_compiled
    from scorer.truth.npz import CACHE_VERSION, write_npz

    truth, rows, _ = case(LAYOUTS["every id"])
    (tmp_path / "truth.jsonl").write_text(truth_lines(truth))
    (tmp_path / "sub.csv").write_text(submission_text(rows))
    good = scorer.load_truth(tmp_path / "truth.jsonl")
    meta = {"version": CACHE_VERSION, "types": list(TYPES), "source": "t", "lookup_base": int(good.sessions[0])}
    write_npz(tmp_path / "bad.truth.npz", meta, sessions=good.sessions, indptr=good.indptr, items=good.items,
              lookup_table=np.full(len(good.sessions), 10**9, np.int32))
    with open(tmp_path / "bad.truth.npz", "rb") as opened:
        vouched = read_compiled(tmp_path / "bad.truth.npz", TYPES, opened=opened)
    assert scorer.score(tmp_path / "sub.csv", vouched).score == scorer.score(tmp_path / "sub.csv", good).score
    with pytest.raises(TruthError, match="lookup_table"):
        read_compiled(tmp_path / "bad.truth.npz", TYPES, use_memo=False)
