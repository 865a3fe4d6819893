"""One format decision by name (scorer.file_formats), shared by the truth, item, prepare, analytics and dask readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.errors import UsageError
from scorer.file_formats import format_of, is_gzip, is_parquet
from scorer.prepare.readers import detect_format


@pytest.mark.parametrize(("name", "expected"), [
    ("a.parquet", "parquet"), ("A.PQ", "parquet"), ("a.csv", "csv"), ("a.jsonl", "jsonl"), ("a.json", "jsonl"),
    ("a.ndjson", "jsonl"), ("a.jsonl.gz", None), ("a.txt", None), ("a.parquet.bak", None), ("csv", None),
])
def test_format_by_name(name, expected):
    assert format_of(Path("dir") / name) == expected
    assert is_parquet(name) == (expected == "parquet")


def test_gzip_is_looked_through_only_when_asked():
    assert format_of("events.JSONL.GZ", through_gzip=True) == "jsonl"
    assert format_of("events.parquet.gz", through_gzip=True) == "parquet"
    assert is_gzip("x.jsonl.gz") and not is_gzip("x.jsonl")


def test_prepare_takes_jsonl_and_parquet_only():
    assert detect_format(Path("e.ndjson.gz")) == "jsonl"
    assert detect_format(Path("e.pq")) == "parquet"
    with pytest.raises(UsageError, match="cannot tell the input format from the name; expected .jsonl or .parquet"):
        detect_format(Path("e.csv"))
