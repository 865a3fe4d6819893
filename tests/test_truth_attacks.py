"""Hostile truth input (issue 12): deep JSON, a truth rewritten behind the cache's back, crafted compiled
arrays, a full cache disk. Crashes are looked for in a subprocess, so a regression fails a test, not the suite."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import submission_text, truth_lines
from scorer.errors import TruthError
from scorer.truth.cache import cache_path
from scorer.truth.load import load_truth
from scorer.truth.npz import read_npz, write_npz

TYPES = ("clicks", "carts", "orders")
TRUTH = {5: {"clicks": 3, "orders": [2, 1, 7]}, 2: {}, 9: {"carts": [0, 4]}, 6: {"orders": [11]}}
ROOT = Path(__file__).parent.parent


def run_cli(*args, cache: Path, limit_file_bytes: int | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`scorer ARGS` in a child process (a segfault is its exit code, not ours)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCORER_CACHE_DIR": str(cache)}
    code = "import sys; from scorer.cli.main import main; sys.exit(main(sys.argv[1:]))"
    preexec = None
    if limit_file_bytes is not None:
        def preexec():  # a "full disk": writes past the limit fail with EFBIG
            import resource
            import signal

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          preexec_fn=preexec, timeout=timeout)


@pytest.mark.parametrize("deep", ["[" * 100_000, '{"a": ' * 100_000, '{"session": 2, "labels": {"clicks": ' + "[" * 100_000],
                         ids=["arrays", "objects", "in labels"])
def test_deeply_nested_json_line_is_a_truth_error_naming_the_line(tmp_path, deep):
    path = tmp_path / "deep.jsonl"
    path.write_text(truth_lines({1: {"clicks": 2}}) + deep + "\n")
    with pytest.raises(TruthError, match=re.escape(f"{path}, line 2: not valid JSON (nested too deeply)")):
        load_truth(path, TYPES, use_cache=False)
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(1, "clicks", [2])]))
    done = run_cli("score", sub, "--truth", path, cache=tmp_path / "cache")
    assert done.returncode == 2 and "line 2" in done.stderr and "Traceback" not in done.stderr


def test_cache_is_keyed_by_content_not_size_and_time(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}, 2: {"orders": [3]}}))
    stamp = os.stat(path).st_mtime_ns
    assert load_truth(path, TYPES).labels(1, "clicks") == [21]
    path.write_text(truth_lines({1: {"clicks": 12}, 2: {"orders": [3]}}))  # the same size
    os.utime(path, ns=(stamp, stamp))
    assert load_truth(path, TYPES).labels(1, "clicks") == [12]
    copy = tmp_path / "elsewhere" / "t.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    assert cache_path(copy, list(TYPES)) == cache_path(path, list(TYPES))  # the same bytes share an entry ...
    assert load_truth(copy, TYPES).source == str(copy)  # ... and messages name the file given
    assert cache_path(path, ["clicks"]) != cache_path(path, list(TYPES))  # the types are part of the key


def _hash_counter(monkeypatch) -> list:
    """Count the truth files hashed (cache.content_key's calls) from now on."""
    from scorer.truth import cache

    calls: list = []
    hashed = cache.content_key
    monkeypatch.setattr(cache, "content_key", lambda *args, **kwargs: calls.append(args[0]) or hashed(*args, **kwargs))
    return calls


def _changed_again(path: Path, text: str, before: os.stat_result) -> None:
    """Rewrite path with text of the same size and the same modification time, in a later clock tick of its change time."""
    while True:
        path.write_text(text)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        if os.stat(path).st_ctime_ns != before.st_ctime_ns:
            return


def test_a_settled_truth_is_hashed_once_while_its_state_stays(tmp_path, monkeypatch):
    from scorer.truth import cache

    monkeypatch.setattr(cache, "SETTLED_NS", 0)  # as if the file had not changed for a while
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}, 2: {"orders": [3]}}))
    calls = _hash_counter(monkeypatch)
    first = cache_path(path, list(TYPES))
    assert cache_path(path, list(TYPES)) == first and len(calls) == 1  # the second from the memo
    assert load_truth(path, TYPES).labels(1, "clicks") == [21] and len(calls) <= 2
    _changed_again(path, truth_lines({1: {"clicks": 12}, 2: {"orders": [3]}}), os.stat(path))
    assert cache_path(path, list(TYPES)) != first  # a new change time: hashed again
    assert load_truth(path, TYPES).labels(1, "clicks") == [12]


def test_a_truth_changed_lately_is_hashed_every_time(tmp_path, monkeypatch):
    """Its key is not remembered: a write in the same clock tick would leave the state the same."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}}))
    calls = _hash_counter(monkeypatch)
    assert cache_path(path, list(TYPES)) == cache_path(path, list(TYPES)) and len(calls) == 2
    assert not list((tmp_path / "cache").glob("*.key"))


@pytest.mark.parametrize("memo", ["forged", "others may write it"])
def test_a_memo_that_is_not_sound_and_private_is_no_memo(tmp_path, monkeypatch, memo):
    from scorer.truth import cache

    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}}))
    right = cache_path(path, list(TYPES))
    (remembered,) = (tmp_path / "cache").glob("*.key")
    if memo == "forged":
        remembered.write_text("xxh3-1-" + "0" * 32)
    else:
        remembered.chmod(0o666)
    calls = _hash_counter(monkeypatch)
    assert cache_path(path, list(TYPES)) == right and len(calls) == 1


def test_a_file_changed_while_read_is_not_cached_under_the_old_key(tmp_path, monkeypatch):
    import scorer.truth.load as truth_module

    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}}))
    read = truth_module.read_jsonl

    def read_then_rewrite(*args):
        truth = read(*args)
        path.write_text(truth_lines({1: {"clicks": 12}}))
        return truth

    monkeypatch.setattr(truth_module, "read_jsonl", read_then_rewrite)
    assert load_truth(path, TYPES).labels(1, "clicks") == [21]
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())
    monkeypatch.setattr(truth_module, "read_jsonl", read)
    assert load_truth(path, TYPES).labels(1, "clicks") == [12]


def test_content_key_without_xxhash_uses_blake2b(tmp_path, monkeypatch):
    from scorer.truth.cache import content_key

    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines(TRUTH))
    fast = content_key(path)
    monkeypatch.setitem(sys.modules, "xxhash", None)  # as after `pip install --no-deps`
    slow = content_key(path)
    assert fast.startswith("xxh3-") and slow.startswith("blake2b-") and fast != slow
    path.write_text(truth_lines({**TRUTH, 5: {"clicks": 4}}))
    assert content_key(path) != slow


@pytest.mark.parametrize("size", [1, 4095, 4096, 4097, 3 * 4096 + 5])
def test_the_content_key_hashed_window_by_window_is_the_whole_bytes_key(tmp_path, monkeypatch, size):
    """The key of a file mapped a window at a time (its pages dropped as it goes) is the key of its bytes in one piece."""
    from scorer.truth import cache

    monkeypatch.setattr(cache, "HASH_WINDOW", 4096)
    path = tmp_path / "t.jsonl"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    assert cache.content_key(path) == cache.bytes_key(path.read_bytes())
    assert cache.content_key(path, mapped=False) == cache.bytes_key(path.read_bytes())


def test_an_empty_looking_file_is_not_cached(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert cache_path(path, list(TYPES)) is None
    assert load_truth(path, TYPES).n_sessions == 0


def test_dask_workers_reload_a_truth_rewritten_with_the_same_size_and_time(tmp_path):
    from scorer.dask.truthcache import truth_for
    from scorer.spec.competition import load_competition

    otto = load_competition("otto")
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines({1: {"clicks": 21}}))
    stamp = os.stat(path).st_mtime_ns
    assert truth_for(str(path), otto).labels(1, "clicks") == [21]
    assert truth_for(str(path), otto) is truth_for(str(path), otto)
    path.write_text(truth_lines({1: {"clicks": 12}}))
    os.utime(path, ns=(stamp, stamp))
    assert truth_for(str(path), otto).labels(1, "clicks") == [12]


# crafted compiled id_type truths: (what is changed, the message expected)

def _compiled(tmp_path) -> Path:
    source = tmp_path / "t.jsonl"
    source.write_text(truth_lines(TRUTH))
    path = tmp_path / "t.truth.npz"
    load_truth(source, TYPES, use_cache=False).save(path)
    return path


def craft(path: Path, out: Path, **changes) -> Path:
    """A copy of the compiled file with arrays (or meta keys, as meta_KEY) replaced."""
    arrays = {name: np.array(value) for name, value in read_npz(path).items()}
    meta = json.loads(bytes(arrays.pop("meta")).decode())
    for name, value in changes.items():
        if name.startswith("meta_"):
            meta[name[5:]] = value
        else:
            arrays[name] = value
    write_npz(out, meta, **arrays)
    return out


# the valid file: sessions [2 5 6 9], indptr [0 0 0 0 1 1 4 4 4 5 5 7 7], items [3 1 2 7 11 0 4], lookup base 2,
# lookup_table [0 -1 -1 1 2 -1 -1 3]
ID_ATTACKS = {
    "indptr past the items": (dict(indptr=np.array([0] * 12 + [10**9], np.int32)), "indptr runs from 0 to"),
    "indptr decreasing": (dict(indptr=np.array([0, 0, 0, 0, 1, 1, 4, 4, 2, 5, 5, 7, 7], np.int32)), "indptr decreases"),
    "indptr as int64 (format 4's)": (dict(indptr=np.array([0, 0, 0, 0, 1, 1, 4, 4, 4, 5, 5, 7, 7])), "indptr must be a 1-D int32 array"),
    "indptr wrong length": (dict(indptr=np.array([0, 7])), "indptr declares 2 entries for 4 sessions"),
    "items unsorted": (dict(items=np.array([3, 7, 2, 1, 11, 0, 4])), "not sorted and distinct within a row"),
    "items repeated": (dict(items=np.array([3, 1, 1, 7, 11, 0, 4])), "not sorted and distinct within a row"),
    "item negative": (dict(items=np.array([-3, 1, 2, 7, 11, 0, 4])), "an item id is negative"),
    "sessions unsorted": (dict(sessions=np.array([5, 2, 6, 9])), "lookup_table|sessions are not sorted"),
    "items as int32": (dict(items=np.array([3, 1, 2, 7, 11, 0, 4], np.int32)), "items must be a 1-D int64 array"),
    "sessions 2-D": (dict(sessions=np.array([[2, 5], [6, 9]])), r"sessions is of shape \(2, 2\), not a 1-D array"),
    "lookup index past the sessions": (dict(lookup_table=np.array([0, -1, -1, 1, 2, -1, -1, 10**9], np.int32)),
                                       "lookup_table does not map each session"),
    "lookup with a stray entry": (dict(lookup_table=np.array([0, 1, -1, 1, 2, -1, -1, 3], np.int32)), "entries that are not sessions"),
    "lookup too short": (dict(lookup_table=np.array([0], np.int32)), "lookup_table has 1 entries for a span of 8"),
    "lookup base moved": (dict(meta_lookup_base=-(10**6)), "lookup_base is not the first session"),
    "lookup base a string": (dict(meta_lookup_base="2"), "lookup_base is not the first session"),
    "usage code": (dict(usage=np.array([0, 1, 7, 2], np.int8)), "usage code"),
    "types repeated": (dict(meta_types=["clicks", "clicks", "orders"]), "types"),
}


def test_the_valid_file_passes_and_scores(tmp_path):
    path = _compiled(tmp_path)
    truth = load_truth(path, TYPES)
    assert truth.labels(5, "orders") == [1, 2, 7] and truth.lookup[0] == 2 and len(truth.lookup[1]) == 8


@pytest.mark.parametrize("attack", ID_ATTACKS)
def test_crafted_compiled_truth_is_a_truth_error(tmp_path, attack):
    changes, message = ID_ATTACKS[attack]
    crafted = craft(_compiled(tmp_path), tmp_path / "crafted.truth.npz", **changes)
    with pytest.raises(TruthError, match=message) as caught:
        load_truth(crafted, TYPES if "types" not in attack else ("clicks", "clicks", "orders"))
    assert str(crafted) in str(caught.value)


@pytest.mark.parametrize("attack", ["indptr past the items", "lookup index past the sessions", "items unsorted"])
def test_crafted_compiled_truth_exits_2_instead_of_crashing_or_misscoring(tmp_path, attack):
    crafted = craft(_compiled(tmp_path), tmp_path / "crafted.truth.npz", **ID_ATTACKS[attack][0])
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(s, t, [1, 2, 3, 7, 11]) for s in (2, 5, 6, 9) for t in TYPES]))
    done = run_cli("score", sub, "--truth", crafted, cache=tmp_path / "cache")
    assert done.returncode == 2, done.stderr
    assert str(crafted) in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("attack", ["indptr past the items", "indptr decreasing", "lookup index past the sessions", "usage code",
                                    "items as int32"])
def test_crafted_cache_entry_is_a_miss_and_rebuilt(tmp_path, monkeypatch, attack):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "t.jsonl"
    source.write_text(truth_lines(TRUTH))
    entry = cache_path(source, list(TYPES))
    load_truth(source, TYPES)
    craft(entry, entry, **ID_ATTACKS[attack][0])
    rebuilt = load_truth(source, TYPES)
    assert rebuilt.labels(5, "orders") == [1, 2, 7] and rebuilt.lookup[1].tolist() == [0, -1, -1, 1, 2, -1, -1, 3]
    load_truth(entry, TYPES)  # the entry was written again, whole


@pytest.mark.parametrize("attack", ["items unsorted", "items repeated", "sessions unsorted", "lookup with a stray entry"])
def test_an_id_cache_entry_gets_the_safe_checks_a_given_file_the_full_one(tmp_path, attack):
    from scorer.truth.checks import check_truth

    crafted = craft(_compiled(tmp_path), tmp_path / "crafted.truth.npz", **ID_ATTACKS[attack][0])
    arrays = read_npz(crafted)
    truth = load_truth(_compiled(tmp_path), TYPES)
    from dataclasses import replace

    truth = replace(truth, sessions=arrays["sessions"], items=arrays["items"])
    lookup = (2, arrays["lookup_table"])
    with pytest.raises(TruthError, match=ID_ATTACKS[attack][1]):
        check_truth(truth, crafted, lookup)  # a compiled file given as truth: every invariant
    check_truth(truth, crafted, lookup, full=False)  # vouched-for bytes: scores could be wrong, nothing is unsafe


def test_full_cache_disk_leaves_no_tmp_file_and_scores(tmp_path):
    truth = {s: {"clicks": [s + 1], "orders": list(range(s % 7))} for s in range(3000)}
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines(truth))
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(1, "clicks", [2]), (5, "orders", [0, 9])]))
    roomy = run_cli("score", sub, "--truth", path, "--format", "json", cache=tmp_path / "roomy")  # (also warms numba's own cache)
    assert roomy.returncode == 0, roomy.stderr
    cache = tmp_path / "full"
    cache.mkdir()
    full = run_cli("score", sub, "--truth", path, "--format", "json", cache=cache, limit_file_bytes=len(truth) * 8 * 6)
    assert full.returncode == 0, full.stderr
    assert json.loads(full.stdout)["score"] == json.loads(roomy.stdout)["score"] > 0
    assert not [entry.name for entry in cache.rglob("*") if entry.name.endswith(".tmp")]
    assert not list(cache.glob("*.truth.npz"))  # the compiled truth (over 3000 · 8 · 6 bytes) could not be written
    assert len(list((tmp_path / "roomy").glob("*.truth.npz"))) == 1


def test_failed_write_removes_its_tmp_file(tmp_path, monkeypatch):
    import scorer.truth.npz as truth_module

    def half_then_fail(handle, arrays):
        handle.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(truth_module, "_write_aligned", half_then_fail)
    with pytest.raises(OSError):
        write_npz(tmp_path / "x.npz", {}, a=np.arange(3))
    assert list(tmp_path.iterdir()) == []


# crafted compiled string truths

def _compiled_strings(tmp_path, text="customer_id,prediction\nA,0001 0002\nB,\nC,0002 0003\n", shape="list") -> Path:
    from scorer.truth.strings import read_string_truth

    source = tmp_path / "s.csv"
    source.write_text(text)
    path = tmp_path / "s.strings.npz"
    read_string_truth(source, shape, use_cache=False).save(path)
    return path


def _table_with(path, name, change):
    table = np.array(read_npz(path)[name])
    change(table)
    return table


def _all_full(table):
    table[table == -1] = table[table != -1][0]


STRING_ATTACKS = {
    "id table with no empty entry": (lambda p: dict(id_table=_table_with(p, "id_table", _all_full)), "id_table"),
    "id table entry past the ids": (lambda p: dict(id_table=_table_with(p, "id_table", lambda t: t.__setitem__(t != -1, 5 + (5 << 32)))),
                                    "id_table has an entry that is not a id|id_table"),
    "id table not a power of two": (lambda p: dict(id_table=np.full(15, -1, np.int64)), "not a power of two"),
    "id table empty": (lambda p: dict(id_table=np.full(16, -1, np.int64)), "id_table does not hold each id once"),
    "id table entries moved": (lambda p: dict(id_table=np.roll(read_npz(p)["id_table"], 5)), "not reachable|tags"),
    "key past its buffer": (lambda p: dict(id_ends=read_npz(p)["id_ends"] + 10**9), "outside id_keys"),
    "key start after its end": (lambda p: dict(id_starts=read_npz(p)["id_ends"] + 1), "outside id_keys"),
    "item codes unsorted": (lambda p: dict(items=np.array([1, 0, 1, 2])), "not sorted and distinct within a row"),
    "item code past the names": (lambda p: dict(items=np.array([0, 1, 1, 9])), "past the item names"),
    "sessions not the ids": (lambda p: dict(sessions=np.array([0, 2, 1])), "sessions are not 0"),
    "indptr past the items": (lambda p: dict(indptr=np.array([0, 2, 2, 99], np.int32)), "indptr runs from 0 to"),
    "grades not parallel": (lambda p: dict(grades=np.ones(2)), "grades for"),
    "grades not finite": (lambda p: dict(grades=np.array([1.0, np.nan, 1.0, 1.0])), "finite"),
}


@pytest.mark.parametrize("attack", STRING_ATTACKS)
def test_crafted_compiled_string_truth_is_a_truth_error(tmp_path, attack):
    from scorer.truth.strings import read_string_truth

    path = _compiled_strings(tmp_path)
    make, message = STRING_ATTACKS[attack]
    crafted = craft(path, tmp_path / "crafted.strings.npz", **make(path))
    with pytest.raises(TruthError, match=message) as caught:
        read_string_truth(crafted, "list")
    assert str(crafted) in str(caught.value)


def test_reachability_of_every_key_including_clusters_that_wrap_round():
    from scorer.truth.checks import check_table, hash_keys
    from scorer.truth.strings import StringTable

    rng = np.random.default_rng(7)
    moved_across_the_end = wrapped = 0
    for trial in range(60):
        table = StringTable.of([f"k{value}" for value in rng.choice(10**6, 10, replace=False)])  # 10 keys in 16 entries
        assert check_table(table, "id", "x") == 10
        homes = hash_keys(table.keys, table.starts, table.ends) & np.uint64(15)
        occupied = np.flatnonzero(table.table != -1)
        wrapped += int((occupied < homes[table.table[occupied] & 0xFFFFFFFF].astype(np.int64)).sum())  # sits before its home
        for position in np.flatnonzero(table.table != -1):
            after = (position + 1) % len(table.table)
            if table.table[after] != -1:
                continue
            moved = table.table.copy()  # the key one entry on: its probe now stops at the hole it left
            moved[after], moved[position] = moved[position], -1
            moved_across_the_end += after == 0
            with pytest.raises(TruthError, match="not reachable"):
                check_table(StringTable(table.keys, table.starts, table.ends, moved), "id", "x")
    assert moved_across_the_end > 0 and wrapped > 0


def test_duplicate_keys_are_found(tmp_path):
    from scorer.truth.checks import check_table
    from scorer.truth.strings import StringTable

    with pytest.raises(TruthError, match="two ids are the same string"):
        check_table(StringTable.of(["a", "b", "a"]), "id", "x")  # each key in the table, reachable: only the bytes tell


def test_value_shape_needs_one_value_per_id(tmp_path):
    from scorer.truth.strings import read_string_truth

    listed = _compiled_strings(tmp_path)
    with pytest.raises(TruthError, match="one value per id"):
        read_string_truth(listed, "value")
    valued = _compiled_strings(tmp_path, "id,value\nA,1.5\nB,-2\n", "value")
    assert read_string_truth(valued, "value").grades.tolist() == [1.5, -2.0]


def test_numpy_key_hash_is_the_kernels_hash():
    from scorer.kernels.strings import hash_bytes
    from scorer.truth.checks import hash_keys

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 40, 300)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    keys = np.concatenate([rng.integers(0, 256, int(ends[-1]), dtype=np.uint8), np.zeros(8, np.uint8)])
    expected = [int(hash_bytes(keys, s, e)) for s, e in zip(starts, ends)]
    assert hash_keys(keys, starts, ends).tolist() == expected


def test_long_keys_hash_as_the_kernel_does_and_too_long_ones_are_refused():
    from scorer.kernels.strings import hash_bytes
    from scorer.truth.checks import MAX_KEY_BYTES, check_table, hash_keys
    from scorer.truth.strings import StringTable

    names = ["a" * 300, "b", "c" * 5000, "dd"]
    table = StringTable.of(names)
    assert hash_keys(*table.arrays()[:3]).tolist() == [int(hash_bytes(table.keys, s, e)) for s, e in zip(table.starts, table.ends)]
    assert check_table(table, "id", "x") == 4
    with pytest.raises(TruthError, match="longer than"):
        check_table(StringTable.of(["e" * (MAX_KEY_BYTES + 1)]), "id", "x")


def test_crafted_string_table_exits_2_instead_of_hanging(tmp_path):
    path = _compiled_strings(tmp_path)
    crafted = craft(path, tmp_path / "crafted.strings.npz", **STRING_ATTACKS["id table with no empty entry"][0](path))
    sub = tmp_path / "sub.csv"
    sub.write_text("customer_id,prediction\nZZZ,0001\n")
    done = run_cli("score", sub, "--truth", crafted, "--competition", "hm", cache=tmp_path / "cache", timeout=120)
    assert done.returncode == 2, done.stderr
    assert "id_table" in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_is_refused_without_blocking(tmp_path):
    from scorer.dask.truthcache import truth_for
    from scorer.spec.competition import load_competition

    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TruthError, match="is a FIFO"):
        truth_for(str(fifo), load_competition("otto"))


# the cache folder is trusted as the ahead-of-time module's is (scorer.private_files): this user's alone

OTHER = {5: {"clicks": 4}, 2: {"orders": [8]}, 9: {}, 6: {}}  # a well-formed truth of the same sessions, other labels


def _source_and_entry(tmp_path, monkeypatch, cache: Path) -> tuple[Path, Path]:
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    source = tmp_path / "t.jsonl"
    source.write_text(truth_lines(TRUTH))
    return source, cache_path(source, list(TYPES))


def _plant_other_truth(tmp_path, entry: Path) -> None:
    """A compiled truth that passes every check, with other labels, at the entry's name."""
    other = tmp_path / "other.jsonl"
    other.write_text(truth_lines(OTHER))
    load_truth(other, TYPES, use_cache=False).save(entry)


def test_the_cache_folder_is_made_private_and_its_entries_0600(tmp_path, monkeypatch):
    cache = tmp_path / "made" / "cache"
    source, entry = _source_and_entry(tmp_path, monkeypatch, cache)
    load_truth(source, TYPES)
    assert oct(cache.stat().st_mode & 0o777) == "0o700" and oct(entry.stat().st_mode & 0o777) == "0o600"
    opened = tmp_path / "opened"  # one an older scorer made 0755 is closed to others at the next write
    opened.mkdir(mode=0o755)
    opened.chmod(0o755)
    source, entry = _source_and_entry(tmp_path, monkeypatch, opened)
    load_truth(source, TYPES)
    assert oct(opened.stat().st_mode & 0o777) == "0o700" and entry.is_file()


REFUSED_FOLDERS = {
    "world-writable": (lambda folder: folder.chmod(0o777), "is writable by others (mode 777)"),
    "group-writable": (lambda folder: (os.chown(folder, -1, 4321), folder.chmod(0o770)), "is writable by others (mode 770)"),  # a shared group
    "foreign-owned": (lambda folder: os.chown(folder, 4321, -1), "is owned by uid 4321"),
}


@pytest.mark.parametrize("spoil", REFUSED_FOLDERS)
def test_a_cache_folder_others_control_is_not_used_and_said_once(tmp_path, monkeypatch, capsys, spoil):
    import scorer.truth.cache as truth_module

    monkeypatch.setattr(truth_module, "_refused", set())
    cache = tmp_path / "cache"
    source, entry = _source_and_entry(tmp_path, monkeypatch, cache)
    load_truth(source, TYPES)  # a private cache, filled
    change, reason = REFUSED_FOLDERS[spoil]
    change(cache)
    _plant_other_truth(tmp_path, entry)  # what another user could write there
    for _ in range(2):
        assert load_truth(source, TYPES).labels(5, "orders") == [1, 2, 7]  # read from the file, in memory
    err = capsys.readouterr().err
    assert err.count("scorer: warning: the truth cache") == 1 and reason in err and str(cache) in err
    assert load_truth(entry, TYPES).labels(5, "clicks") == [4]  # the planted entry was neither read nor replaced


def test_a_cache_folder_that_is_a_symlink_is_not_used(tmp_path, monkeypatch, capsys):
    import scorer.truth.cache as truth_module

    monkeypatch.setattr(truth_module, "_refused", set())
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    source, entry = _source_and_entry(tmp_path, monkeypatch, tmp_path / "link")
    (tmp_path / "link").symlink_to(real)
    _plant_other_truth(tmp_path, real / entry.name)
    assert load_truth(source, TYPES).labels(5, "orders") == [1, 2, 7]
    assert "is a symlink or not a folder" in capsys.readouterr().err
    assert load_truth(real / entry.name, TYPES).labels(5, "clicks") == [4]  # not replaced through the link


PLANTED_ENTRIES = {
    "a symlink": lambda tmp_path, entry: (_plant_other_truth(tmp_path, tmp_path / "o.truth.npz"),
                                          entry.symlink_to(tmp_path / "o.truth.npz")),
    "foreign-owned": lambda tmp_path, entry: (_plant_other_truth(tmp_path, entry), os.chown(entry, 4321, -1)),
    "writable by others": lambda tmp_path, entry: (_plant_other_truth(tmp_path, entry), entry.chmod(0o666)),
}


@pytest.mark.parametrize("plant", PLANTED_ENTRIES)
def test_an_entry_not_this_users_own_is_a_miss_and_replaced(tmp_path, monkeypatch, capsys, plant):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    source, entry = _source_and_entry(tmp_path, monkeypatch, cache)
    PLANTED_ENTRIES[plant](tmp_path, entry)
    assert load_truth(source, TYPES).labels(5, "orders") == [1, 2, 7]
    assert not entry.is_symlink() and entry.stat().st_uid == os.geteuid() and entry.stat().st_mode & 0o777 == 0o600
    assert load_truth(source, TYPES).labels(5, "orders") == [1, 2, 7]  # now from the entry written here
    assert "warning" not in capsys.readouterr().err  # the folder is fine: nothing to say


def test_the_cli_scores_with_a_refused_cache_and_says_why(tmp_path):
    source = tmp_path / "t.jsonl"
    source.write_text(truth_lines(TRUTH))
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(s, t, [1, 2, 3, 7, 11]) for s in (2, 5, 6, 9) for t in TYPES]))
    private = run_cli("score", sub, "--truth", source, "--format", "json", cache=tmp_path / "private")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    refused = run_cli("score", sub, "--truth", source, "--format", "json", cache=shared)
    assert private.returncode == refused.returncode == 0, refused.stderr
    assert json.loads(refused.stdout)["score"] == json.loads(private.stdout)["score"] > 0
    assert refused.stderr.count("is not used: the folder") == 1 and "Traceback" not in refused.stderr
    assert not list(shared.glob("*.npz"))


# a cache entry's string tables: the checks that keep the kernels safe and a spot check; a given file: all

def _table_with_a_lost_key(n_keys=200):
    """A correct table of n_keys keys, then the unsampled key whose probe is shortest moved where it cannot be found."""
    from scorer.truth.checks import SPOT, hash_keys
    from scorer.truth.strings import StringTable

    table = StringTable.of([f"customer{value:06d}" for value in range(n_keys)])
    sampled = set(np.unique(np.linspace(0, n_keys - 1, SPOT).astype(np.int64)).tolist())
    size = len(table.table)
    homes = (hash_keys(table.keys, table.starts, table.ends) & np.uint64(size - 1)).astype(np.int64)
    for position in np.flatnonzero(table.table != -1):
        key = int(table.table[position] & 0xFFFFFFFF)
        hole = (position + 1) % size
        if key not in sampled and position == homes[key] and table.table[hole] == -1:
            moved = table.table.copy()
            moved[hole], moved[position] = moved[position], -1  # one on from its home, behind the hole it left
            return table, StringTable(table.keys, table.starts, table.ends, moved)
    raise AssertionError("no key to move")


def test_a_cache_entry_table_gets_the_safe_checks_a_given_file_the_full_one():
    from scorer.truth.checks import check_table

    good, lost = _table_with_a_lost_key()
    assert check_table(good, "id", "x", full=False) == check_table(good, "id", "x") == 200
    with pytest.raises(TruthError, match="not reachable"):
        check_table(lost, "id", "x")  # a compiled file given as truth: every key
    assert check_table(lost, "id", "x", full=False) == 200  # a cache entry: scores can be wrong, nothing unsafe


@pytest.mark.parametrize("attack", ["id table with no empty entry", "id table entry past the ids", "id table entries moved",
                                    "key past its buffer", "item code past the names"])
def test_a_string_cache_entry_failing_the_safe_or_spot_checks_is_a_miss_and_rebuilt(tmp_path, monkeypatch, attack):
    from scorer.truth.strings import read_string_truth

    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "s.csv"
    source.write_text("customer_id,prediction\nA,0001 0002\nB,\nC,0002 0003\n")
    first = read_string_truth(source, "list")
    entry = cache_path(source, ["strings", "list", "all"], ".strings.npz")
    craft(entry, entry, **STRING_ATTACKS[attack][0](entry))
    again = read_string_truth(source, "list")
    assert [again.name(i) for i in range(3)] == [first.name(i) for i in range(3)] and again.items.tolist() == [0, 1, 1, 2]
    read_string_truth(entry, "list")  # the entry was written again, whole and correct (the full check)


def test_the_spot_check_finds_a_table_built_with_another_hash():
    from scorer.truth.checks import check_table
    from scorer.truth.strings import StringTable

    table = StringTable.of([f"k{value}" for value in range(1000)])
    slots = table.table.copy()
    occupied = slots != -1
    slots[occupied] ^= np.int64(1) << 40  # every tag changed, as by another hash: nothing is found
    with pytest.raises(TruthError, match="not reachable"):
        check_table(StringTable(table.keys, table.starts, table.ends, slots), "id", "x", full=False)


def test_only_an_entry_of_the_private_cache_skips_the_full_table_check(tmp_path, monkeypatch):
    import scorer.truth.checks as checks
    from scorer.truth.strings import read_string_truth

    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "s.csv"
    source.write_text("customer_id,prediction\nA,0001 0002\nB,\nC,0002 0003\n")
    read_string_truth(source, "list")  # compiled into the cache
    entry = cache_path(source, ["strings", "list", "all"], ".strings.npz")
    given = tmp_path / "given.strings.npz"
    given.write_bytes(entry.read_bytes())
    seen = []
    check = checks.check_table
    monkeypatch.setattr(checks, "check_table", lambda table, what, path, full=True: seen.append((what, full)) or check(table, what, path, full))
    read_string_truth(source, "list")
    read_string_truth(given, "list")
    assert seen == [("id", False), ("item", False), ("id", True), ("item", True)]


# a compiled file given as truth: its full check remembered for its exact bytes (a memo in the private cache)

def _spy_checks(monkeypatch) -> list:
    """The `full` of every check_truth and check_string_truth call, in order."""
    import scorer.truth.checks as checks

    seen = []
    for name in ("check_truth", "check_string_truth"):
        real = getattr(checks, name)
        monkeypatch.setattr(checks, name, lambda *args, _real=real, full=True, **kwargs: seen.append(full) or _real(*args, full=full, **kwargs))
    return seen


def _load(path: Path):
    from scorer.truth.strings import read_string_truth

    return read_string_truth(path, "list") if path.name.endswith(".strings.npz") else load_truth(path, TYPES)


def _given(tmp_path, kind: str) -> Path:
    return _compiled(tmp_path) if kind == "truth" else _compiled_strings(tmp_path)


def _memos(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.checked"))


@pytest.mark.parametrize("kind", ["truth", "strings"])
def test_a_given_compiled_truth_is_checked_in_full_once_for_the_same_bytes(tmp_path, monkeypatch, kind):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    path = _given(tmp_path, kind)
    seen = _spy_checks(monkeypatch)
    first, second = _load(path), _load(path)
    assert seen == [True, False]  # the second load: the memo, then only the safety checks
    assert np.array_equal(first.items, second.items) and np.array_equal(first.indptr, second.indptr)
    [memo] = _memos(cache)
    assert memo.stat().st_mode & 0o777 == 0o600 and memo.stat().st_uid == os.geteuid()
    copy = tmp_path / f"copy.{kind}.npz"
    copy.write_bytes(path.read_bytes())
    _load(copy)
    assert seen[-1] is False  # keyed by content, not by path


@pytest.mark.parametrize("kind", ["truth", "strings"])
def test_changed_bytes_of_the_same_size_are_checked_in_full(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = _given(tmp_path, kind)
    _load(path)
    size = path.stat().st_size
    raw = bytearray(path.read_bytes())
    at = raw.index(b'"source": "') + len(b'"source": "')
    raw[at] ^= 1  # one byte of the recorded source name, in place
    path.write_bytes(bytes(raw))
    seen = _spy_checks(monkeypatch)
    _load(path)
    _load(path)
    assert path.stat().st_size == size and seen == [True, False]


def test_the_memo_key_holds_the_check_version(tmp_path, monkeypatch):
    import scorer.truth.checks as checks
    from scorer.truth.compiled import memo_name
    from scorer.truth.npz import map_file

    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    path = _compiled(tmp_path)
    _load(path)
    before = memo_name(map_file(path), "truth")
    monkeypatch.setattr(checks, "CHECK_VERSION", checks.CHECK_VERSION + 1)  # a check added since the memo was written
    assert memo_name(map_file(path), "truth") != before and memo_name(map_file(path), "strings") != before
    seen = _spy_checks(monkeypatch)
    _load(path)
    _load(path)
    assert seen == [True, False]


def _plant_memo(folder: Path, path: Path, kind: str = "truth") -> Path:
    """The memo this scorer would write after checking `path` in full, written by someone else's hand."""
    from scorer.truth.compiled import memo_name
    from scorer.truth.npz import map_file

    key, name = memo_name(map_file(path), kind)
    (folder / name).write_bytes(key)
    (folder / name).chmod(0o600)
    return folder / name


def _unsorted(tmp_path) -> Path:
    """A compiled truth that passes the safety checks and fails the full one (items out of order)."""
    return craft(_compiled(tmp_path), tmp_path / "crafted.truth.npz", **ID_ATTACKS["items unsorted"][0])


def test_a_memo_is_trusted_as_a_cache_entry_is(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    crafted = _unsorted(tmp_path)
    with pytest.raises(TruthError, match="not sorted"):
        load_truth(crafted, TYPES)
    assert not _memos(cache)  # a file that fails leaves no memo
    _plant_memo(cache, crafted)  # only this user can write into the private folder (as a cache entry)
    assert load_truth(crafted, TYPES).labels(5, "orders") == [7, 2, 1]  # safe, if wrong: what a wrong entry would do


PLANTED_MEMOS = {
    "foreign-owned": lambda memo: os.chown(memo, 4321, -1),
    "writable by others": lambda memo: memo.chmod(0o666),
    "a symlink": lambda memo: (memo.rename(memo.with_name("real")), memo.symlink_to(memo.with_name("real"))),
    "another key": lambda memo: memo.write_bytes(memo.read_bytes().replace(b'"truth"', b'"strings"')),
}


@pytest.mark.parametrize("plant", PLANTED_MEMOS)
def test_a_memo_not_this_users_own_or_not_its_key_is_not_trusted(tmp_path, monkeypatch, plant):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    crafted = _unsorted(tmp_path)
    PLANTED_MEMOS[plant](_plant_memo(cache, crafted))
    with pytest.raises(TruthError, match="not sorted"):
        load_truth(crafted, TYPES)


@pytest.mark.parametrize("spoil", REFUSED_FOLDERS)
def test_a_memo_in_a_cache_folder_others_control_is_not_trusted_and_loads_still_work(tmp_path, monkeypatch, capsys, spoil):
    import scorer.truth.cache as truth_module

    monkeypatch.setattr(truth_module, "_refused", set())
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    good, crafted = _compiled(tmp_path), _unsorted(tmp_path)
    _load(good)  # its memo, written while the folder was private
    _plant_memo(cache, crafted)
    change, reason = REFUSED_FOLDERS[spoil]
    change(cache)
    with pytest.raises(TruthError, match="not sorted"):
        load_truth(crafted, TYPES)
    seen = _spy_checks(monkeypatch)
    assert load_truth(good, TYPES).labels(5, "orders") == [1, 2, 7] and load_truth(good, TYPES).labels(9, "carts") == [0, 4]
    assert seen == [True, True]  # every load checked in full
    err = capsys.readouterr().err
    assert err.count("scorer: warning: the truth cache") == 1 and reason in err


def test_without_a_cache_folder_or_with_use_cache_off_every_load_is_checked_in_full(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(blocked / "cache"))  # cannot be made: no cache, nothing to say
    path = _compiled(tmp_path)
    seen = _spy_checks(monkeypatch)
    for _ in range(2):
        assert load_truth(path, TYPES).labels(5, "orders") == [1, 2, 7]
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        assert load_truth(path, TYPES, use_cache=False).labels(5, "orders") == [1, 2, 7]
    assert seen == [True] * 4 and not (tmp_path / "cache").exists() and "warning" not in capsys.readouterr().err


def test_the_cli_scores_a_compiled_truth_the_same_with_its_memo(tmp_path):
    path = _compiled(tmp_path)
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(s, t, [1, 2, 3, 7, 11]) for s in (2, 5, 6, 9) for t in TYPES]))
    runs = [run_cli("score", sub, "--truth", path, "--format", "json", cache=tmp_path / "cache") for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[-1].stderr
    assert json.loads(runs[0].stdout)["score"] == json.loads(runs[1].stdout)["score"] > 0
    assert len(_memos(tmp_path / "cache")) == 1


def test_a_compiled_truth_of_the_other_kind_is_refused_before_its_arrays_are_checked(tmp_path, monkeypatch):
    """A set compiled for a config that reads the truth as a multiset (rules.truth) is refused on its meta record alone."""
    from dataclasses import replace

    from scorer.spec.competition import load_competition
    from scorer.truth import strings

    hm = load_competition("hm")
    multiset = replace(hm, rules=hm.rules.turned(truth="multiset"))
    truth = tmp_path / "truth.csv"
    truth.write_text("customer_id,prediction\nc1,0706016001 0706016001 0706016002\n")
    as_set = tmp_path / "set.strings.npz"
    strings.read_string_truth(truth, hm.shape, hm.types[0], use_cache=False, competition=hm).save(as_set)

    def checked(*args, **kwargs):
        raise AssertionError("the arrays were checked before the kind was")

    monkeypatch.setattr(strings, "check_compiled", checked)
    with pytest.raises(TruthError, match="holds the truth as a set, the competition reads it as a multiset"):
        strings.read_string_truth(as_set, hm.shape, hm.types[0], competition=multiset)
