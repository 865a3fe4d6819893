"""A truth's CSR offsets are INDPTR_DTYPE (int32) whichever way the truth is made, so every kernel that reads them has
the one argument type its ahead-of-time build was compiled for; a truth of more labels than they hold is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scorer
from scorer.adapters.kaggle import HostVisibleError, truth_from_solution
from scorer.adapters.kaggle import score as kaggle_score
from scorer.dask.truth_parts import build, part_file, split_truth
from scorer.errors import TruthError
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.spec.competition import load_competition
from scorer.truth import ids
from scorer.truth.compiled import read_compiled
from scorer.truth.frames import truth_from_frame
from scorer.truth.ids import empty_truth, read_jsonl, read_table
from scorer.truth.load import load_truth
from scorer.truth.strings import empty_string_truth, read_compiled_strings, read_string_truth

OTTO = load_competition("otto")
OTTO_TRUTH = "fixtures/otto_truth.jsonl"
LONG = pd.DataFrame({"session": [3, 3, 3, 8, 5], "type": ["clicks", "carts", "carts", "orders", "clicks"], "aid": [7, 1, 2, 4, 9]})
SOLUTION = pd.DataFrame({"session_type": ["3_clicks", "3_carts", "5_clicks", "8_orders"], "labels": ["7", "1 2", "9", "4"]})


def _id_truths(tmp_path):
    csv, parquet = tmp_path / "long.csv", tmp_path / "long.parquet"
    LONG.to_csv(csv, index=False)
    LONG.to_parquet(parquet)
    compiled = tmp_path / "otto.truth.npz"
    read_jsonl(Path(OTTO_TRUTH), OTTO.types).save(compiled)
    yield "JSONL, line by line", read_jsonl(Path(OTTO_TRUTH), OTTO.types)
    arrow = ids._read_jsonl_arrow(Path(OTTO_TRUTH), OTTO.types, ids._lines_without_null(Path(OTTO_TRUTH)))
    assert arrow is not None
    yield "JSONL, pyarrow", arrow
    yield "CSV", read_table(csv, OTTO.types)
    yield "Parquet", read_table(parquet, OTTO.types)
    yield "frame, long", truth_from_frame(LONG, OTTO)
    yield "frame, a column per type", truth_from_frame(pd.DataFrame({"session": [1, 2], "clicks": [5, 6], "orders": [[1, 2], []]}), OTTO)
    yield "compiled file", read_compiled(compiled, OTTO.types)
    load_truth(OTTO_TRUTH, OTTO.types)
    yield "the cache", load_truth(OTTO_TRUTH, OTTO.types)
    yield "Kaggle solution, sorted", truth_from_solution(SOLUTION, "session_type", OTTO)
    yield "Kaggle solution, sorting", truth_from_solution(SOLUTION.iloc[::-1], "session_type", OTTO)
    yield "empty", empty_truth(OTTO.types)
    whole = read_jsonl(Path(OTTO_TRUTH), OTTO.types)
    yield "Dask parts", split_truth(whole, 3)[1]
    folder = build(OTTO_TRUTH, OTTO, 2, str(tmp_path / "parts"))
    yield "Dask part files", read_compiled(part_file(folder, 1), OTTO.types)


def _string_truths(tmp_path):
    for shape, folder in (("list", "hm"), ("long", "airbnb"), ("value", "ratings")):
        path = f"fixtures/{folder}/truth.csv"
        truth = read_string_truth(path, shape, use_cache=False)
        yield f"{shape}, read", truth
        read_string_truth(path, shape)
        yield f"{shape}, the cache", read_string_truth(path, shape)
        truth.save(tmp_path / f"{folder}.strings.npz")
        yield f"{shape}, compiled file", read_compiled_strings(tmp_path / f"{folder}.strings.npz", shape)
        yield f"{shape}, frame", truth_from_frame(pd.read_csv(path, dtype=str, keep_default_na=False), load_competition(folder))
        yield f"{shape}, Dask parts", split_truth(truth, 2)[0]
    yield "empty", empty_string_truth()


def test_every_maker_of_a_truth_gives_its_offsets_the_one_dtype(tmp_path):
    made = [*_id_truths(tmp_path), *_string_truths(tmp_path)]
    assert {name: truth.indptr.dtype for name, truth in made} == {name: np.dtype(INDPTR_DTYPE) for name, _ in made}
    for name, truth in made:
        assert truth.sizes.dtype == np.int64 and truth.type_sizes(0).dtype == INDPTR_DTYPE, name


def test_the_candidates_per_type_offsets_have_the_one_dtype():
    frame = pd.DataFrame({"session": [3, 3, 5], "aid": [7, 1, 9]})
    result = scorer.candidates(frame, truth_from_frame(LONG, OTTO), k=[2])
    assert [indptr.dtype for indptr in result.figures.type_indptr] == [INDPTR_DTYPE] * len(OTTO.types)
    assert result.at_k[2]["clicks"]["recall"] == 1.0


# -- a truth of more labels than the offsets hold -------------------------------------------------------------------
@pytest.mark.parametrize("max_labels, refused", [(4, True), (5, False)])  # LONG and SOLUTION: 5 labels
def test_a_truth_of_more_labels_than_its_offsets_hold_is_refused(tmp_path, monkeypatch, max_labels, refused):
    monkeypatch.setattr(ids, "MAX_LABELS", max_labels)
    csv = tmp_path / "long.csv"
    LONG.to_csv(csv, index=False)
    makers = {"file": lambda: read_table(csv, OTTO.types), "frame": lambda: truth_from_frame(LONG, OTTO),
              "Kaggle, sorted": lambda: truth_from_solution(SOLUTION, "session_type", OTTO),
              "Kaggle, sorting": lambda: truth_from_solution(SOLUTION.iloc[::-1], "session_type", OTTO)}
    for name, make in makers.items():
        if not refused:
            assert make().items.size == 5, name
            continue
        with pytest.raises(TruthError, match=f"has 5 labels, more than the {max_labels:,} this scorer holds") as caught:
            make()
        assert name != "file" or str(csv) in str(caught.value)
    if refused:  # what the Kaggle metric raises for the host
        with pytest.raises(HostVisibleError, match="truth kaggle solution has 5 labels"):
            kaggle_score(SOLUTION, SOLUTION.assign(labels="1"), "session_type")


def test_a_string_truth_of_more_labels_than_its_offsets_hold_is_refused(monkeypatch):
    monkeypatch.setattr(ids, "MAX_LABELS", 2)
    for shape, folder in (("list", "hm"), ("long", "airbnb"), ("value", "ratings")):
        path = f"fixtures/{folder}/truth.csv"
        with pytest.raises(TruthError, match=f"truth {path} has .* labels, more than the 2 this scorer holds"):
            read_string_truth(path, shape, use_cache=False)



# the hashes scorer 82ae734 (int64 offsets) wrote in its receipts: `scorer verify` of its receipts finds the same truth
HASHES_OF_INT64_OFFSETS = {"otto": ("fixtures/otto_truth.jsonl", "xxh3-aad5dffed8ae95bbacb726a296a18ca2"),
                           "hm": ("fixtures/hm/truth.csv", "xxh3-f1d7be8315f42beadd6327295df41f2e"),
                           "ratings": ("fixtures/ratings/truth.csv", "xxh3-b26be8caac473d3ea75a6bd79e458c09")}


@pytest.mark.parametrize("chunk", [3, 1 << 16])  # the offsets widened a few at a time, or all at once
@pytest.mark.parametrize("name", HASHES_OF_INT64_OFFSETS)
def test_a_receipts_truth_hash_is_the_one_of_int64_offsets(monkeypatch, name, chunk):
    from scorer.api import resolve_competition, resolve_truth
    from scorer.engine import receipt
    from scorer.engine.receipt import truth_hash
    from scorer.truth.cache import content_digest

    monkeypatch.setattr(receipt, "HASH_CHUNK", chunk)

    if content_digest()[0] != "xxh3":
        pytest.skip("the recorded hashes are xxh3's; xxhash is not installed")
    path, recorded = HASHES_OF_INT64_OFFSETS[name]
    truth = resolve_truth(path, resolve_competition(name))
    assert truth.indptr.dtype == INDPTR_DTYPE and truth_hash(truth) == recorded
