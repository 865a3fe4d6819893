"""The engine against the slow reference scorer on generated cases, for any block size and thread count."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference
import scorer
from conftest import TYPES, submission_text, truth_lines
from scorer.spec.competition import load_competition

OTTO = load_competition("otto")
items = st.integers(0, 40)  # a small item space, so that hits and duplicates are common
label_sets = st.lists(items, min_size=1, max_size=36, unique=True)  # past 32: the item-side hit search too
truths = st.dictionaries(
    st.integers(0, 30),
    st.fixed_dictionaries({}, optional={"clicks": items, "carts": label_sets, "orders": label_sets}),
    min_size=1, max_size=12,
)


@st.composite
def cases(draw):
    truth = draw(truths)
    sessions = list(truth) + draw(st.lists(st.integers(0, 40), max_size=4))  # some not in the truth
    rows = []
    for session in sessions:
        for type_name in TYPES:
            if draw(st.booleans()) or draw(st.integers(0, 9)) == 0:  # some rows missing
                rows.append((session, type_name, draw(st.lists(items, max_size=26))))  # duplicates, > K
    rows = draw(st.permutations(rows))
    repeated = draw(st.lists(st.sampled_from(rows), max_size=2)) if rows else []
    return truth, rows + [(s, t, draw(st.lists(items, max_size=5))) for s, t, _ in repeated]


def expected_from_reference(tmp_path, truth, rows):
    sub = tmp_path / "s.csv"
    sub.write_text(submission_text(rows))
    tru = tmp_path / "t.jsonl"
    tru.write_text(truth_lines(truth))
    return sub, tru, reference.score(reference.read_submission(sub, 20), reference.read_truth_jsonl(tru))


def same(a, b):
    return (a is None and math.isnan(b)) or (a is not None and abs(a - b) <= 1e-12)


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases(), block_bytes=st.sampled_from([1, 7, 64, 1 << 20]), threads=st.sampled_from([1, 2]))
def test_engine_equals_reference(tmp_path, case, block_bytes, threads):
    truth, rows = case
    sub, tru, expected = expected_from_reference(tmp_path, truth, rows)
    result = scorer.score(sub, tru, block_bytes=block_bytes, threads=threads)
    assert abs(result.score - expected["score"]) <= 1e-12
    for type_name in TYPES:
        got = result.metrics[type_name]
        assert same(got["recall@20"], expected[type_name]["recall"])
        assert same(got["map@20"], expected[type_name]["map"])
        assert same(got["ndcg@20"], expected[type_name]["ndcg"])


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_figures_identical_to_the_last_bit_for_any_block_size_and_threads(tmp_path):
    rng = np.random.default_rng(1)
    truth = {s: {"clicks": int(rng.integers(50)), "orders": rng.choice(50, 3, replace=False).tolist()} for s in range(400)}
    rows = [(s, t, rng.integers(0, 50, 22).tolist()) for s in truth for t in TYPES]
    sub, tru, _ = expected_from_reference(tmp_path, truth, rows)
    results = [scorer.score(sub, tru, block_bytes=b, threads=t).to_dict() for b in (13, 4096, 1 << 22) for t in (1, 2)]
    for other in results[1:]:
        assert other["score"] == results[0]["score"] and other["metrics"] == results[0]["metrics"]
