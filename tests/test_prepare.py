"""Tests of `scorer prepare` against a slow, obvious reference of the competition's procedure."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer.errors import UsageError
from scorer.kernels import holdout as K
from scorer.prepare.holdout import split_events
from scorer.prepare.pipeline import prepare
from scorer.prepare.readers import read_events

TYPES = ("clicks", "carts", "orders")
DAY_MS = 86_400_000
BASE_MS = 1_659_304_800_000  # 2022-07-31, OTTO's first day
M64 = (1 << 64) - 1


# --- slow reference ----------------------------------------------------------------------------------
def splitmix64(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def reference_kept(seed: int, session: int, n: int) -> int:
    return 1 + splitmix64(splitmix64(seed & M64) ^ session) % (n - 1)


def reference_labels(future: list[tuple[int, int, str]]) -> dict:
    """clicks = the first click, carts / orders = all of them (as sorted lists); absent when none."""
    labels = {}
    clicks = [aid for aid, _, kind in future if kind == "clicks"]
    if clicks:
        labels["clicks"] = clicks[0]
    for kind in ("carts", "orders"):
        items = sorted({aid for aid, _, t in future if t == kind})
        if items:
            labels[kind] = items
    return labels


def reference_prepare(sessions, days: int, seed: int):
    """sessions: [(id, [(aid, ts, type), ...])] in file order. Returns (train, test_cut, labels) as lists."""
    sessions = [(sid, sorted(events, key=lambda e: e[1])) for sid, events in sessions]  # stable
    max_ts = max(e[1] for _, events in sessions for e in events)
    split_ts = max_ts - days * DAY_MS
    train, test = [], []
    for sid, events in sessions:
        if not events:
            continue
        if events[0][1] > split_ts:
            test.append((sid, events))
        else:
            before = [e for e in events if e[1] < split_ts]
            if len(before) >= 2:
                train.append((sid, before))
    known = {e[0] for _, events in train for e in events}
    cut, labels = [], []
    for sid, events in test:
        events = [e for e in events if e[0] in known]
        if len(events) < 2:
            continue
        k = reference_kept(seed, sid, len(events))
        cut.append((sid, events[:k]))
        labels.append((sid, reference_labels(events[k:])))
    return train, cut, labels


# --- helpers ---------------------------------------------------------------------------------------
def write_jsonl(path: Path, sessions) -> Path:
    with open(path, "w") as f:
        for sid, events in sessions:
            f.write(json.dumps({"session": sid, "events": [{"aid": a, "ts": t, "type": y} for a, t, y in events]}) + "\n")
    return path


def write_parquet(path: Path, sessions, type_as_int=False, ts_div=1) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(sid, a, t // ts_div, TYPES.index(y) if type_as_int else y) for sid, events in sessions for a, t, y in events]
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    table = pa.table({
        "session": pa.array(cols[0], pa.int64()),
        "aid": pa.array(cols[1], pa.int64()),
        "ts": pa.array(cols[2], pa.int64()),
        "type": pa.array(cols[3], pa.int8() if type_as_int else pa.string()),
    })
    pq.write_table(table, path)
    return path


def read_sessions_jsonl(path: Path):
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        out.append((row["session"], [(e["aid"], e["ts"], e["type"]) for e in row["events"]]))
    return out


def read_labels_jsonl(path: Path):
    return [(row["session"], row["labels"]) for row in map(json.loads, path.read_text().splitlines())]


def read_sessions_parquet(path: Path):
    import pandas as pd

    df = pd.read_parquet(path)
    out = []
    for sid, group in df.groupby("session", sort=False):
        out.append((int(sid), [(int(a), int(t), str(y)) for a, t, y in zip(group.aid, group.ts, group.type)]))
    return out


def read_labels_parquet(path: Path):
    import pandas as pd

    df = pd.read_parquet(path)
    out = {}
    for sid, kind, aid in zip(df.session, df.type, df.aid):
        labels = out.setdefault(int(sid), {})
        if kind == "clicks":
            labels["clicks"] = int(aid)
        else:
            labels.setdefault(kind, []).append(int(aid))
    return list(out.items())


def random_sessions(seed: int, n: int = 300, days: int = 14, items: int = 60):
    rng = np.random.default_rng(seed)
    sessions = []
    for sid in rng.permutation(n * 2)[:n]:
        length = int(rng.integers(1, 12))
        t0 = BASE_MS + int(rng.integers(0, days * DAY_MS))
        ts = np.sort(t0 + rng.integers(0, 2 * DAY_MS, length))
        kinds = rng.choice(3, size=length, p=[0.7, 0.2, 0.1])
        sessions.append((int(sid), [(int(rng.integers(0, items)), int(t), TYPES[k]) for t, k in zip(ts, kinds)]))
    return sessions


# --- the cutting and labelling rule ----------------------------------------------------------------------
def test_worked_example_session_42():
    # clicks 0, 1, 2; cart 2; click 3; cart 3; click 4; orders 2 and 3; cut after the first event.
    kinds = ["clicks", "clicks", "clicks", "carts", "clicks", "carts", "clicks", "orders", "orders"]
    aids = [0, 1, 2, 2, 3, 3, 4, 2, 3]
    typ = np.array([TYPES.index(k) for k in kinds], dtype=np.int8)
    starts = np.array([0, len(aids)], dtype=np.int64)
    l_starts, l_type, l_aid = K.labels_after_cut(starts, np.array([1]), np.array(aids, np.int32), typ)
    got = {}
    for t, a in zip(l_type, l_aid):
        got.setdefault(TYPES[t], []).append(int(a))
    assert got == {"clicks": [1], "carts": [2, 3], "orders": [2, 3]}
    assert list(l_starts) == [0, 5]
    assert reference_labels([(a, 0, k) for a, k in zip(aids[1:], kinds[1:])]) == {"clicks": 1, "carts": [2, 3], "orders": [2, 3]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(TYPES)), min_size=2, max_size=12), max_size=8),
       st.data())
def test_labels_kernel_matches_reference(sessions, data):
    kept = [data.draw(st.integers(1, len(s) - 1)) for s in sessions]
    aid = np.array([a for s in sessions for a, _ in s], dtype=np.int32)
    typ = np.array([TYPES.index(k) for s in sessions for _, k in s], dtype=np.int8)
    starts = np.zeros(len(sessions) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sessions], out=starts[1:])
    l_starts, l_type, l_aid = K.labels_after_cut(starts, np.array(kept, dtype=np.int64), aid, typ)
    for s, events in enumerate(sessions):
        got = {}
        for k in range(l_starts[s], l_starts[s + 1]):
            got.setdefault(TYPES[l_type[k]], []).append(int(l_aid[k]))
        if "clicks" in got:
            assert len(got["clicks"]) == 1
            got["clicks"] = got["clicks"][0]
        assert got == reference_labels([(a, 0, t) for a, t in events[kept[s]:]])


@settings(deadline=None)
@given(st.integers(0, M64), st.integers(0, 2**31 - 1), st.integers(2, 10_000))
def test_cut_is_the_documented_hash(seed, session, n):
    from scorer.prepare.holdout import seed_mix

    k = int(K.cut_point(np.uint64(seed_mix(seed)), session, n))
    assert k == reference_kept(seed, session, n)
    assert 1 <= k <= n - 1


def test_cut_is_roughly_uniform():
    ids = np.arange(200_000, dtype=np.int64)
    starts = np.arange(0, 5 * len(ids) + 1, 5, dtype=np.int64)
    kept = K.cut_points(ids, starts, np.uint64(123))
    counts = np.bincount(kept, minlength=5)[1:]
    assert counts.min() > 0.24 * len(ids) and counts.max() < 0.26 * len(ids)


# --- the whole procedure -----------------------------------------------------------------------------
event = st.tuples(st.integers(0, 12), st.integers(0, 24).map(lambda h: BASE_MS + h * DAY_MS // 2), st.sampled_from(TYPES))
session_log = st.lists(st.lists(event, min_size=0, max_size=10), min_size=1, max_size=25).filter(
    lambda log: any(log)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session_log, st.integers(1, 6), st.integers(0, 2**40), st.sampled_from(["jsonl", "parquet"]))
def test_prepare_matches_reference(log, days, seed, fmt):
    # Timestamps on a half-day grid, so events fall exactly on the split point; events may be out of order.
    sessions = [(sid * 3 + 1, events) for sid, events in enumerate(log)]
    train, cut, labels = reference_prepare(sessions, days, seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = write_jsonl(tmp / "events.jsonl", sessions)
        summary = prepare(src, tmp / "out", days=days, seed=seed, fmt=fmt, ts_unit="ms", chunk_bytes=97)
        out = tmp / "out"
        if fmt == "jsonl":
            assert read_sessions_jsonl(out / "train_sessions.jsonl") == train
            assert read_sessions_jsonl(out / "test_sessions.jsonl") == cut
            assert read_labels_jsonl(out / "test_labels.jsonl") == labels
        else:
            assert read_sessions_parquet(out / "train_sessions.parquet") == train
            assert read_sessions_parquet(out / "test_sessions.parquet") == cut
            assert read_labels_parquet(out / "test_labels.parquet") == labels
        assert summary["train"]["sessions"] == len(train)
        assert summary["test"]["sessions"] == len(cut)
        assert summary["labels"]["sessions"]["clicks"] == sum("clicks" in lab for _, lab in labels)
        assert summary["labels"]["items"]["carts"] == sum(len(lab.get("carts", [])) for _, lab in labels)
        unordered = sum(any(b[1] < a[1] for a, b in zip(ev, ev[1:])) for _, ev in sessions)
        assert summary["input"]["sessions_reordered"] == unordered


def test_reference_rules_on_a_hand_made_log(tmp_path):
    d = DAY_MS
    sessions = [
        (1, [(10, BASE_MS, "clicks"), (11, BASE_MS + 1, "clicks"), (12, BASE_MS + 9 * d, "clicks")]),  # train, trimmed
        (2, [(10, BASE_MS + 1, "clicks"), (13, BASE_MS + 3 * d, "clicks")]),  # event exactly at split: dropped -> < 2
        (3, [(10, BASE_MS + 3 * d + 1, "clicks"), (99, BASE_MS + 4 * d, "carts"), (11, BASE_MS + 10 * d, "orders")]),
        (4, [(10, BASE_MS + 5 * d, "clicks"), (99, BASE_MS + 6 * d, "clicks")]),  # one known event left: dropped
    ]
    # max ts = BASE + 10 d, split (7 days) = BASE + 3 d
    summary = prepare(write_jsonl(tmp_path / "e.jsonl", sessions), tmp_path / "o", days=7, seed=1)
    train = read_sessions_jsonl(tmp_path / "o" / "train_sessions.jsonl")
    assert train == [(1, [(10, BASE_MS, "clicks"), (11, BASE_MS + 1, "clicks")])]
    test = read_sessions_jsonl(tmp_path / "o" / "test_sessions.jsonl")
    assert test == [(3, [(10, BASE_MS + 3 * d + 1, "clicks")])]  # item 99 removed; 2 events left, cut after 1
    assert read_labels_jsonl(tmp_path / "o" / "test_labels.jsonl") == [(3, {"orders": [11]})]
    assert summary["test"]["events_removed_unknown_item"] == 2
    assert summary["test"]["sessions_dropped_short"] == 1
    assert summary["train"]["sessions_dropped_short"] == 1
    assert summary["split_ts"] == BASE_MS + 3 * d and summary["ts_unit"] == "ms"


def test_output_is_byte_identical_whatever_the_chunk_size(tmp_path):
    src = write_jsonl(tmp_path / "e.jsonl", random_sessions(5, n=800))
    for fmt in ("jsonl", "parquet"):
        outs = []
        for i, chunk in enumerate((61, 4096, 1 << 26)):
            out = tmp_path / f"{fmt}{i}"
            prepare(src, out, days=5, seed=7, fmt=fmt, chunk_bytes=chunk)
            outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
        assert len(outs[0]) == 4
        assert outs[0] == outs[1] == outs[2]
    a = {p.name: p.read_bytes() for p in (tmp_path / "jsonl0").iterdir()}
    prepare(src, tmp_path / "seed8", days=5, seed=8, fmt="jsonl")
    b = {p.name: p.read_bytes() for p in (tmp_path / "seed8").iterdir()}
    assert a["train_sessions.jsonl"] == b["train_sessions.jsonl"] and a["test_labels.jsonl"] != b["test_labels.jsonl"]


@pytest.mark.parametrize("type_as_int,ts_div,unit", [(False, 1, "ms"), (True, 1000, "s")])
def test_parquet_input_gives_the_same_split(tmp_path, type_as_int, ts_div, unit):
    sessions = random_sessions(11, n=400)
    prepare(write_jsonl(tmp_path / "e.jsonl", sessions), tmp_path / "a", days=4, seed=3)
    src = write_parquet(tmp_path / "e.parquet", sessions, type_as_int=type_as_int, ts_div=ts_div)
    summary = prepare(src, tmp_path / "b", days=4, seed=3, fmt="jsonl")
    assert summary["ts_unit"] == unit
    if ts_div == 1:
        for name in ("train_sessions.jsonl", "test_sessions.jsonl", "test_labels.jsonl"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    else:  # seconds: the same procedure on truncated times; labels must still follow the reference
        secs = [(sid, [(a, t // 1000, y) for a, t, y in ev]) for sid, ev in sessions]
        _, cut, labels = reference_prepare([(sid, [(a, t * 1000, y) for a, t, y in ev]) for sid, ev in secs], 4, 3)
        assert read_labels_jsonl(tmp_path / "b" / "test_labels.jsonl") == labels


def test_parquet_rows_not_grouped_by_session(tmp_path):
    import pyarrow.parquet as pq

    sessions = random_sessions(2, n=100)
    src = write_parquet(tmp_path / "e.parquet", sessions)
    table = pq.read_table(src)
    perm = np.random.default_rng(0).permutation(table.num_rows)
    # keep time order within a session: shuffle, then stable-sort by ts only
    shuffled = table.take(perm)
    shuffled = shuffled.take(np.argsort(shuffled.column("ts").to_numpy(), kind="stable"))
    pq.write_table(shuffled, tmp_path / "s.parquet")
    summary = prepare(tmp_path / "s.parquet", tmp_path / "o", days=4, seed=3, fmt="jsonl")
    assert any("not contiguous" in note for note in summary["notes"])
    _, cut, labels = reference_prepare(sorted(sessions), 4, 3)
    assert read_labels_jsonl(tmp_path / "o" / "test_labels.jsonl") == labels


def test_out_of_order_events_are_sorted_and_counted(tmp_path):
    sessions = [(5, [(1, BASE_MS + 300, "clicks"), (2, BASE_MS + 100, "carts"), (3, BASE_MS + 200, "clicks")]),
                (6, [(1, BASE_MS, "clicks"), (2, BASE_MS + 1, "clicks")])]
    events = read_events(write_jsonl(tmp_path / "e.jsonl", sessions))
    result = split_events(events, days=1, seed=0, ts_unit="ms")
    assert result.summary["input"]["sessions_reordered"] == 1
    assert any("session 5, line 1" in note for note in result.summary["notes"])
    assert list(events.aid) == [2, 3, 1, 1, 2] and list(events.ts) == [BASE_MS + 100, BASE_MS + 200, BASE_MS + 300, BASE_MS, BASE_MS + 1]


# --- bad input ---------------------------------------------------------------------------------------
GOOD = '{"session": 1, "events": [{"aid": 1, "ts": 1659304800000, "type": "clicks"}, {"aid": 2, "ts": 1659304900000, "type": "carts"}]}\n'


@pytest.mark.parametrize("bad_line,needle", [
    ('{"events": [{"aid": 1, "ts": 5, "type": "clicks"}]}', 'missing field "session"'),
    ('{"session": 9}', 'missing field "events"'),
    ('{"session": 9, "events": [{"ts": 5, "type": "clicks"}]}', 'no "aid"'),
    ('{"session": 9, "events": [{"aid": 3, "type": "clicks"}]}', 'no "ts"'),
    ('{"session": 9, "events": [{"aid": 3, "ts": 5}]}', 'no "type"'),
    ('{"session": 9, "events": [{"aid": 3, "ts": 5, "type": "views"}]}', "unknown event type: '\"views\"'"),
    ('{"session": 9, "events": [{"aid": 3, "ts": 5, "type": 3}]}', "unknown event type"),
    ('{"session": 9, "events": [{"aid": 3.5, "ts": 5, "type": "clicks"}]}', "non-negative integer: '3.5'"),
    ('{"session": "9", "events": []}', "non-negative integer"),
    ('{"session": 9, "events": [{"aid": -3, "ts": 5, "type": "clicks"}]}', "negative"),
    ('{"session": 9, "events": [{"aid": 3000000000, "ts": 5, "type": "clicks"}]}', "too large"),
    ('{"session": 9, "events": [{"aid": 3, "ts": 5, "type": "clicks"}]} x', "unexpected text"),
    ('', "blank line"),
    ('{"session": 1, "events": []}', "session 1 appears twice (line 1 and line 2)"),
])
def test_bad_jsonl_names_line_and_leaves_nothing(tmp_path, bad_line, needle):
    src = tmp_path / "e.jsonl"
    src.write_text(GOOD + bad_line + "\n" + GOOD.replace('"session": 1', '"session": 2'))
    with pytest.raises(UsageError) as info:
        prepare(src, tmp_path / "out")
    message = str(info.value)
    assert needle in message
    assert "line 2" in message and str(src) in message
    assert not (tmp_path / "out").exists()


def test_truncated_last_line(tmp_path):
    src = tmp_path / "e.jsonl"
    src.write_text(GOOD + GOOD + '{"session": 3, "events": [{"aid": 1, "ts": 16593048')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match=r"line 3, column \d+: the last line is truncated"):
        prepare(src, tmp_path / "out", chunk_bytes=50)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["keep.txt"]


def test_bad_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    def attempt(table, needle):
        pq.write_table(table, tmp_path / "e.parquet")
        with pytest.raises(UsageError, match=needle):
            prepare(tmp_path / "e.parquet", tmp_path / "out")
        assert not (tmp_path / "out").exists()

    good = {"session": [1, 1, 2], "aid": [1, 2, 3], "ts": [5, 6, 7], "type": ["clicks", "carts", "orders"]}
    attempt(pa.table({k: v for k, v in good.items() if k != "ts"}), "missing column.*ts")
    attempt(pa.table({**good, "type": ["clicks", "views", "orders"]}), "row 2: unknown event type 'views'")
    attempt(pa.table({**good, "type": pa.array([0, 1, 5], pa.int8())}), "row 3: unknown event type 5")
    attempt(pa.table({**good, "aid": [1.0, 2.5, 3.0]}), "'aid' has type double")
    attempt(pa.table({**good, "aid": pa.array([1, None, 3], pa.int64())}), "row 2: missing value in column 'aid'")
    attempt(pa.table({**good, "session": [1, -1, 2]}), "row 2: session -1 is out of range")
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(UsageError, match="not a readable Parquet"):
        prepare(tmp_path / "x.parquet", tmp_path / "out")


def test_failure_while_writing_leaves_no_outputs(tmp_path, monkeypatch):
    import scorer.prepare.writers as P

    src = write_jsonl(tmp_path / "e.jsonl", random_sessions(1, n=200))

    def boom(path, split):
        Path(path).write_text("partial")
        raise OSError("disk full")

    monkeypatch.setattr(P, "_write_labels_jsonl", boom)
    with pytest.raises(OSError):
        prepare(src, tmp_path / "out", days=4)
    assert not (tmp_path / "out").exists()


# --- command line ------------------------------------------------------------------------------------
def _run_command(argv):
    import argparse

    from scorer.cli import prepare as command

    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return command.run(parser.parse_args(argv))


def test_command_prints_summary(tmp_path, capsys):
    src = write_jsonl(tmp_path / "e.jsonl", random_sessions(3, n=300))
    assert _run_command([str(src), "--out", str(tmp_path / "o"), "--days", "4", "--format", "parquet"]) == 0
    captured = capsys.readouterr()
    assert "labels  orders" in captured.out and "timestamps in milliseconds" in captured.err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["format"] == "parquet" and summary["days"] == 4
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "summary.json", "test_labels.parquet", "test_sessions.parquet", "train_sessions.parquet"]


def test_cli_main_exit_code_on_bad_input(tmp_path, capsys):
    pytest.importorskip("scorer.cli.score")
    pytest.importorskip("scorer.cli.validate")
    from scorer.cli.main import main

    src = tmp_path / "e.jsonl"
    src.write_text(GOOD + '{"session": 2, "events": [{"aid": 1, "ts": 5, "type": "views"}]}\n')
    assert main(["prepare", str(src), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "Traceback" not in err
    assert main(["prepare", str(write_jsonl(tmp_path / "g.jsonl", random_sessions(4))), "--out", str(tmp_path / "o")]) == 0


# --- round trip through the scorer ------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_round_trip_perfect_submission_scores_one(tmp_path, fmt):
    scorer = pytest.importorskip("scorer.api")
    src = write_jsonl(tmp_path / "e.jsonl", random_sessions(9, n=600))
    summary = prepare(src, tmp_path / "o", days=4, seed=1, fmt=fmt)
    assert summary["test"]["sessions"] > 50
    labels = read_labels_jsonl(tmp_path / "o" / "test_labels.jsonl") if fmt == "jsonl" else read_labels_parquet(
        tmp_path / "o" / "test_labels.parquet")
    test_ids = [sid for sid, _ in (read_sessions_jsonl(tmp_path / "o" / "test_sessions.jsonl") if fmt == "jsonl"
                                   else read_sessions_parquet(tmp_path / "o" / "test_sessions.parquet"))]
    by_session = dict(labels)
    with open(tmp_path / "submission.csv", "w") as f:
        f.write("session_type,labels\n")
        for sid in test_ids:
            lab = by_session.get(sid, {})
            for kind in TYPES:
                items = lab.get(kind, [])
                items = [items] if kind == "clicks" and items != [] else items
                f.write(f"{sid}_{kind},{' '.join(map(str, items))}\n")
    result = scorer.score(str(tmp_path / "submission.csv"), str(tmp_path / "o" / f"test_labels.{fmt}"), competition="otto")
    assert result.score == pytest.approx(1.0)
    for kind in TYPES:
        assert result.metrics[kind]["recall@20"] == pytest.approx(1.0)


def test_parquet_column_types(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    sessions = random_sessions(8, n=150)
    prepare(write_jsonl(tmp_path / "e.jsonl", sessions), tmp_path / "a", days=4, seed=3)
    expected = (tmp_path / "a" / "test_labels.jsonl").read_bytes()
    table = pq.read_table(write_parquet(tmp_path / "e.parquet", sessions))
    variants = {
        "unsigned": table.set_column(0, "session", table.column("session").cast(pa.uint32()))
                         .set_column(1, "aid", table.column("aid").cast(pa.uint64()))
                         .set_column(2, "ts", table.column("ts").cast(pa.uint64())),
        "dictionary": table.set_column(3, "type", table.column("type").dictionary_encode()),
        "large_string": table.set_column(3, "type", table.column("type").cast(pa.large_string())),
    }
    for name, variant in variants.items():
        pq.write_table(variant, tmp_path / f"{name}.parquet")
        prepare(tmp_path / f"{name}.parquet", tmp_path / name, days=4, seed=3, fmt="jsonl")
        assert (tmp_path / name / "test_labels.jsonl").read_bytes() == expected, name
    # our own Parquet output (type as a dictionary string column) is valid input again
    prepare(tmp_path / "e.parquet", tmp_path / "p", days=4, seed=3, fmt="parquet")
    summary = prepare(tmp_path / "p" / "train_sessions.parquet", tmp_path / "again", days=2, seed=3)
    assert summary["input"]["events"] == pq.read_metadata(tmp_path / "p" / "train_sessions.parquet").num_rows


def test_empty_or_too_short_logs(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(UsageError, match="no events"):
        prepare(tmp_path / "empty.jsonl", tmp_path / "o")
    with pytest.raises(UsageError, match="--days must be a number of days above 0"):
        prepare(write_jsonl(tmp_path / "e.jsonl", random_sessions(1, n=20)), tmp_path / "o", days=0)
    assert not (tmp_path / "o").exists()
    summary = prepare(tmp_path / "e.jsonl", tmp_path / "o", days=100)
    assert summary["test"]["sessions"] == 0 and any("less than 100 days" in n for n in summary["notes"])
    assert (tmp_path / "o" / "test_labels.jsonl").read_bytes() == b""


def test_gzip_jsonl_input(tmp_path):
    import gzip

    src = write_jsonl(tmp_path / "e.jsonl", random_sessions(6, n=300))
    with open(src, "rb") as f, gzip.open(tmp_path / "e.jsonl.gz", "wb") as g:
        g.write(f.read())
    prepare(src, tmp_path / "a", days=4, chunk_bytes=1000)
    prepare(tmp_path / "e.jsonl.gz", tmp_path / "b", days=4, chunk_bytes=1000)
    for name in ("train_sessions.jsonl", "test_sessions.jsonl", "test_labels.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def _dump(style: str, sid: int, events) -> str:
    evs = [{"aid": a, "ts": t, "type": y} for a, t, y in events]
    if style == "spaced":  # OTTO / json.dumps: the parser's fast path
        return json.dumps({"session": sid, "events": evs})
    if style == "compact":  # also the fast path
        return json.dumps({"session": sid, "events": evs}, separators=(",", ":"))
    if style == "reordered":  # the general path: other key order, extra keys, integer types, odd spacing
        evs = [{"type": TYPES.index(y), "extra": [1, {"x": "]}"}], "ts": t, "aid": a} for a, t, y in events]
        return json.dumps({"events": evs, "meta": None, "session": sid}, separators=(" ,", " : "))
    return " " + json.dumps({"session": sid, "events": evs}) + " \r"  # surrounding whitespace: general path


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 10**18 - 1), st.sampled_from(TYPES)),
                         max_size=5), min_size=1, max_size=8),
       st.lists(st.sampled_from(["spaced", "compact", "reordered", "padded"]), min_size=8, max_size=8))
def test_jsonl_parser_fast_and_general_paths_agree(log, styles):
    from scorer.prepare.readers import _parse_block

    sessions = [(sid * 7, events) for sid, events in enumerate(log)]
    text = "\n".join(_dump(style, sid, ev) for style, (sid, ev) in zip(styles, sessions))
    _, _, parsed, code, _ = _parse_block((text.encode(), True))
    assert code == K.OK
    sess, lens, aid, ts, typ = parsed
    assert list(sess) == [sid for sid, _ in sessions]
    assert list(lens) == [len(ev) for _, ev in sessions]
    assert list(zip(aid.tolist(), ts.tolist(), [TYPES[t] for t in typ])) == [e for _, ev in sessions for e in ev]


@pytest.mark.parametrize("line,needle", [
    ('{"session": 1, "events": [{"aid": 1, "ts": 1000000000000000000, "type": "clicks"}]}', "too large"),
    ('{"session": 1, "events": [{"aid": 2147483648, "ts": 1, "type": "clicks"}]}', "too large"),
    ('{"session": 1, "events": [{"aid": 1, "ts": 1, "type": "cart"}]}', "unknown event type"),
    ('{"session": 1, "events": [{"aid": 1, "ts": 1, "type": "clicks"}, ]}', "unexpected character"),
    ('{"session": 1, "events": [{"aid": 1, "ts": 1, "type": "clicks"}]', "line 1, column"),
    ('{"session":1,"events":[{"aid":01e3,"ts":1,"type":"clicks"}]}', "non-negative integer"),
])
def test_near_miss_lines_fall_back_to_the_general_parser(tmp_path, line, needle):
    src = tmp_path / "e.jsonl"
    src.write_text(line + "\n")
    with pytest.raises(UsageError, match=needle):
        prepare(src, tmp_path / "o")
