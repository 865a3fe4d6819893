"""Session lengths for the breakdown: OTTO-shaped JSONL is read by prepare's reader, anything it refuses as before."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.analytics.breakdown import session_lengths
from scorer.errors import UsageError


def _lines(records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def test_otto_lines_are_counted_by_the_prepare_reader(tmp_path, monkeypatch):
    from scorer.prepare import readers

    calls = []
    real = readers.read_jsonl
    monkeypatch.setattr(readers, "read_jsonl", lambda path, *a, **k: calls.append(path) or real(path, *a, **k))
    path = tmp_path / "s.jsonl"
    path.write_text(_lines({"session": s, "events": [{"aid": 3, "ts": 10 + i, "type": "carts"} for i in range(n)]}
                           for s, n in ((4, 2), (9, 0), (2, 5))))
    assert session_lengths(path, np.array([2, 3, 4, 9])).tolist() == [5, 0, 2, 0]
    assert calls == [path]


@pytest.mark.parametrize("records", [
    [{"session": 1, "events": [{"aid": 1}] * 3}, {"session": 2, "events": None}],  # no ts/type; null events
    [{"session": 1, "events": [{"aid": 1, "ts": 0, "type": "clicks"}] * 3}, {"session": 2, "events": []},
     {"session": 1, "events": []}],  # a repeated session: the first line counts
    [{"session": 2**40, "events": []}, {"session": 1, "events": [{"aid": 1, "ts": 0, "type": "clicks"}] * 3}],  # a large id
])
def test_other_shapes_are_still_read(tmp_path, records):
    path = tmp_path / "s.jsonl"
    path.write_text(_lines(records))
    assert session_lengths(path, np.array([1, 2, 5])).tolist() == [3, 0, 0]


def test_a_bad_line_is_named(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(_lines([{"session": 1, "events": []}]) + '{"session": "x"}\n')
    with pytest.raises(UsageError, match=r"line 2: expected \{\"session\": ID"):
        session_lengths(path, np.array([1]))
