"""The truth's partitioned dataset (scorer.dask.truth_parts): split by byte ranges and partitions as by one whole read."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import truth_lines
from scorer.dask import truth_parts
from scorer.errors import TruthError
from scorer.spec.competition import load_competition
from scorer.truth.compiled import read_compiled

OTTO = load_competition("otto")


class HereClient:
    """Runs what a Dask client would send to workers, here, in order (map, gather, submit)."""

    def map(self, function, *iterables, pure=False):
        return [self._run(function, args) for args in zip(*iterables)]

    def gather(self, results, errors="raise"):
        failed = [result for result in results if isinstance(result, Exception)]
        if failed and errors == "raise":
            raise failed[0]
        return [result for result in results if not isinstance(result, Exception)]

    @staticmethod
    def _run(function, args):
        try:
            return function(*args)
        except Exception as error:  # as a future holds it
            return error

    def submit(self, function, *args, pure=False, **kwargs):
        value = function(*args, **kwargs)
        return type("Done", (), {"result": lambda self: value})()


def truth_file(tmp_path, n=400, seed=3):
    rng = np.random.default_rng(seed)
    truth = {int(s): {"clicks": int(rng.integers(50)), "carts": rng.choice(50, 3, replace=False).tolist(), "orders": []}
             for s in rng.choice(10**12, n, replace=False)}
    path = tmp_path / "truth.jsonl"
    path.write_text(truth_lines(truth))
    return path


@pytest.mark.parametrize("range_bytes", [333, 4096, 1 << 20])
def test_ranges_and_shards_make_the_partitions_one_whole_read_makes(tmp_path, monkeypatch, range_bytes):
    path = truth_file(tmp_path)
    monkeypatch.setattr(truth_parts, "RANGE_BYTES", range_bytes)
    sharded = truth_parts.ensure(HereClient(), str(path), OTTO, 6, str(tmp_path / "sharded"))
    whole = truth_parts.build(str(path), OTTO, 6, str(tmp_path / "whole"))
    total = 0
    for part in range(6):
        a, b = (read_compiled(truth_parts.part_file(folder, part), OTTO.types) for folder in (sharded, whole))
        assert np.array_equal(a.sessions, b.sessions) and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.items, b.items)
        total += a.n_sessions
    assert total == 400


def test_a_bad_truth_line_is_named_in_the_truth_file_not_a_shard(tmp_path, monkeypatch):
    path = truth_file(tmp_path)
    lines = path.read_text().splitlines()
    lines[150] = lines[150][:-4]  # cut short: not JSON
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(truth_parts, "RANGE_BYTES", 1000)
    with pytest.raises(TruthError, match=r"truth.jsonl.*151|151.*truth.jsonl"):
        truth_parts.ensure(HereClient(), str(path), OTTO, 4, str(tmp_path / "parts"))
    assert not any((tmp_path / "parts").glob("*/manifest.json"))
