"""Ground-truth readers, the compiled cache and their errors."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from scorer.errors import TruthError
from scorer.truth.ids import _read_jsonl_lines
from scorer.truth.load import load_truth

TYPES = ("clicks", "carts", "orders")
TRUTH = {5: {"clicks": 3, "orders": [2, 1, 2]}, 2: {}, 9: {"carts": [0]}}


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def as_lists(truth):
    return truth.sessions.tolist(), truth.indptr.tolist(), truth.items.tolist()


def test_jsonl_sorted_sessions_and_csr_of_sorted_distinct_items(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"session": s, "labels": l} for s, l in TRUTH.items()])
    truth = load_truth(path, TYPES, use_cache=False)
    assert truth.sessions.tolist() == [2, 5, 9]
    assert truth.labels(5, "orders") == [1, 2] and truth.labels(5, "clicks") == [3]
    assert truth.labels(9, "carts") == [0] and truth.labels(2, "clicks") == []
    assert as_lists(truth) == as_lists(_read_jsonl_lines(path, TYPES))  # the fast and the line-by-line reader agree


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_long_tables_equal_jsonl(tmp_path, suffix):
    rows = [(5, "clicks", 3), (5, "orders", 2), (5, "orders", 1), (9, "carts", 0), (2, None, None)]
    frame = pd.DataFrame(rows, columns=["session", "type", "aid"]).astype({"aid": "Int64"})
    path = tmp_path / f"t{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    jsonl = write_jsonl(tmp_path / "t.jsonl", [{"session": s, "labels": l} for s, l in TRUTH.items()])
    assert as_lists(load_truth(path, TYPES, use_cache=False)) == as_lists(load_truth(jsonl, TYPES, use_cache=False))


def test_integer_type_codes_in_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"session": [1, 1], "type": [0, 2], "aid": [7, 8]}).to_parquet(path)
    truth = load_truth(path, TYPES, use_cache=False)
    assert truth.labels(1, "clicks") == [7] and truth.labels(1, "orders") == [8]


@pytest.mark.parametrize("line, message", [
    ('{"session": 1, "labels": {"clicks": 2}}\n{"session": "x"}', "line 2: session must be an integer"),
    ('{"session": 1, "labels": {"views": [2]}}', "line 1: unknown type 'views'"),
    ('{"session": 1}\n{"session": 1}', "line 2: session 1 already appeared on line 1"),
    ('{"session": 1, "labels": {"carts": [-4]}}', "line 1: carts item -4 is out of range"),
    ('{"session": 1, ', "line 1: not valid JSON"),
])
def test_bad_jsonl_names_the_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(TruthError, match=message):
        load_truth(path, TYPES, use_cache=False)


def test_unknown_type_in_table_names_the_row(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("session,type,aid\n1,clicks,2\n1,views,3\n")
    with pytest.raises(TruthError, match="row 2: unknown type 'views'"):
        load_truth(path, TYPES, use_cache=False)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(TruthError, match="not found"):
        load_truth(tmp_path / "nope.jsonl", TYPES)
    (tmp_path / "t.xml").write_text("<x/>")
    with pytest.raises(TruthError, match="unknown format"):
        load_truth(tmp_path / "t.xml", TYPES)


def test_cache_is_used_and_invalidated_when_the_source_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = write_jsonl(tmp_path / "t.jsonl", [{"session": 1, "labels": {"clicks": 2}}])
    load_truth(path, TYPES)
    cached = list((tmp_path / "cache").iterdir())
    assert len(cached) == 1
    write_jsonl(path, [{"session": 1, "labels": {"clicks": 3}}, {"session": 4}])
    os.utime(path, ns=(1, 10**18))  # a different mtime, as after an edit
    truth = load_truth(path, TYPES)
    assert truth.labels(1, "clicks") == [3] and truth.sessions.tolist() == [1, 4]
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_compiled_truth_round_trip(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"session": s, "labels": l} for s, l in TRUTH.items()])
    truth = load_truth(path, TYPES, use_cache=False)
    truth.save(tmp_path / "t.truth.npz")
    again = load_truth(tmp_path / "t.truth.npz", TYPES)
    assert as_lists(again) == as_lists(truth)
    with pytest.raises(TruthError, match="types"):
        load_truth(tmp_path / "t.truth.npz", ("clicks",))


def test_dense_lookup_table_and_sparse_fallback(tmp_path):
    dense = write_jsonl(tmp_path / "d.jsonl", [{"session": s} for s in range(100, 110)])
    sparse = write_jsonl(tmp_path / "s.jsonl", [{"session": s} for s in (1, 10**15)])
    base, table = load_truth(dense, TYPES, use_cache=False).lookup
    assert base == 100 and table.tolist() == list(range(10))
    assert len(load_truth(sparse, TYPES, use_cache=False).lookup[1]) == 0
    assert np.array_equal(load_truth(sparse, TYPES, use_cache=False).sessions, [1, 10**15])


def _string_truth_arrays(truth):
    """Everything a StringTruth holds, as lists: CSR, grades, the names and the hash tables."""
    names = [truth.ids.name(i) for i in range(truth.ids.size)] + [truth.item_names.name(i) for i in range(truth.item_names.size)]
    tables = [*truth.ids.arrays()[1:], *truth.item_names.arrays()[1:]]
    return [truth.indptr.tolist(), truth.items.tolist(), None if truth.grades is None else truth.grades.tolist(), names,
            [table.tolist() for table in tables]]


@pytest.mark.parametrize("text", ["customer_id,prediction\nA,0001 0002\nB,\nC,0002\n",  # the fast reader: keys shared
                                  "id,item,grade\nA,x,2\nA,y,1\nB,x,3\n"])  # graded, via pandas: keys apart
def test_string_truth_cache_is_used_and_invalidated_when_the_source_changes(tmp_path, monkeypatch, text):
    from scorer.truth.strings import read_string_truth

    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "truth.csv"
    path.write_text(text)
    first = read_string_truth(path, "list")
    (cached,) = (tmp_path / "cache").iterdir()
    assert cached.name.endswith(".strings.npz")
    again = read_string_truth(path, "list")
    assert _string_truth_arrays(again) == _string_truth_arrays(first)
    cached.write_bytes(b"damaged")  # a damaged entry is read from the source again
    assert _string_truth_arrays(read_string_truth(path, "list")) == _string_truth_arrays(first)
    path.write_text(text.replace("A,", "Z,"))
    os.utime(path, ns=(1, 10**18))
    assert read_string_truth(path, "list").ids.name(0) == "Z"
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_read_npz_maps_stored_arrays_and_reads_the_rest(tmp_path):
    from scorer.truth.npz import read_npz

    arrays = {"a": np.arange(10, dtype=np.int64), "b": np.zeros((0,), np.int32), "c": np.asfortranarray(np.ones((3, 2))),
              "d": np.frombuffer(b"meta", np.uint8)}
    np.savez(tmp_path / "plain.npz", **arrays)
    np.savez_compressed(tmp_path / "packed.npz", **arrays)
    for name in ("plain.npz", "packed.npz"):
        got = read_npz(tmp_path / name)
        assert sorted(got) == sorted(arrays)
        for key, value in arrays.items():
            assert got[key].dtype == value.dtype and np.array_equal(got[key], value)
        got["a"][0] = 99  # copy-on-write: the file is never changed
        assert all(array.flags.aligned for array in got.values())  # np.savez's unaligned members are copied
    assert read_npz(tmp_path / "plain.npz")["a"][0] == 0


def test_write_npz_aligns_every_array_and_np_load_reads_it(tmp_path):
    import mmap

    from scorer.truth.npz import ALIGN, read_npz, write_npz

    arrays = {"a": np.arange(10, dtype=np.int64), "b": np.zeros(0, np.int32), "c": np.arange(7, dtype=np.uint8), "d": np.ones((3, 2))}
    write_npz(tmp_path / "x.npz", {"k": 1}, **arrays)
    mapped = read_npz(tmp_path / "x.npz")
    assert all(isinstance(mapped[name].base, mmap.mmap) and mapped[name].ctypes.data % ALIGN == 0 for name in ("a", "c", "d"))
    with np.load(tmp_path / "x.npz") as loaded:
        assert all(np.array_equal(loaded[name], value) and np.array_equal(mapped[name], value) for name, value in arrays.items())


def _resident_kib(path) -> int:
    """This process's resident KiB of the file's mappings (Linux's /proc/self/smaps)."""
    total, ours = 0, False
    for line in open("/proc/self/smaps"):
        if "-" in line.split(" ", 1)[0]:
            ours = line.rstrip().endswith(str(path))
        elif ours and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="resident pages are read from Linux's /proc/self/smaps")
def test_give_back_drops_a_mapped_arrays_pages_and_keeps_its_bytes(tmp_path):
    from scorer.truth.npz import give_back, read_npz, write_npz

    items = np.arange(2 << 20, dtype=np.int64)  # 16 MiB
    write_npz(tmp_path / "x.npz", {}, items=items, small=np.arange(3))
    view = read_npz(tmp_path / "x.npz")["items"]
    assert int(view.sum()) == int(items.sum())  # every page read
    before = _resident_kib(tmp_path / "x.npz")
    give_back(view)
    give_back(items)  # not mapped: left alone
    after = _resident_kib(tmp_path / "x.npz")
    assert before >= 16 << 10 and after <= 16, (before, after)
    assert np.array_equal(view, items) and np.array_equal(items, np.arange(2 << 20))  # read again from the file
    import mmap

    own = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE)  # a caller's own mapping (private, anonymous: its pages dropped read as zeros)
    theirs = np.ndarray((1 << 17,), np.int64, buffer=own)  # a view whose base is the mapping, as read_npz makes them
    theirs[:] = 7
    give_back(theirs)
    assert (theirs == 7).all()


def test_compiled_truth_keeps_the_lookup_table(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"session": s, "labels": l} for s, l in TRUTH.items()])
    truth = load_truth(path, TYPES, use_cache=False)
    truth.save(tmp_path / "t.truth.npz")
    again = load_truth(tmp_path / "t.truth.npz", TYPES)
    assert "lookup" in again.__dict__  # read, not rebuilt
    assert again.lookup[0] == truth.lookup[0] and np.array_equal(again.lookup[1], truth.lookup[1])
