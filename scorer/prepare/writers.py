"""Writers of `scorer prepare`: the holdout's three outputs and summary.json, all or nothing.

Output in the chosen format (default: the input's), written under temporary names and renamed at the end:
``train_sessions``, ``test_sessions`` (cut), ``test_labels`` and ``summary.json``.

- JSONL: OTTO's format, with json.dumps spacing like the reference's output
  (``{"session": 42, "events": [{"aid": 0, "ts": 1661200010000, "type": "clicks"}]}``,
  ``{"session": 42, "labels": {"clicks": 1, "carts": [2, 3], "orders": [2, 3]}}``, absent keys for types
  without a label).
- Parquet: sessions one event per row, ``session`` int32, ``aid`` int32, ``ts`` int64, ``type`` a string
  column (dictionary-encoded, int8 indices: pandas reads it as a categorical of clicks/carts/orders);
  labels a long table ``session`` int64, ``type`` string, ``aid`` int64 (one row per label item).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.kernels import door
from scorer.kernels import holdout_layout as K
from scorer.prepare.holdout import Holdout
from scorer.prepare.readers import FORMATS, TYPE_NAMES, ordered_map

OUTPUT_NAMES = ("train_sessions", "test_sessions", "test_labels")
WRITE_CHUNK_EVENTS = 1 << 21


def _chunks(lens: np.ndarray, target: int):
    """Split consecutive sessions into runs of about `target` events."""
    if len(lens) == 0:
        return []
    cum = np.cumsum(lens)
    total = int(cum[-1])
    cuts = np.searchsorted(cum, np.arange(target, total, target), side="left") + 1
    bounds = np.unique(np.concatenate([[0], cuts, [len(lens)]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _write_sessions_jsonl(path, starts, sel, lens, sess_ids, aid, ts, typ, bar):
    def work(bounds):
        j0, j1 = bounds
        n_ev = int(lens[j0:j1].sum())
        out = np.empty(n_ev * K.EVENT_BYTES + (j1 - j0) * K.SESSION_BYTES, dtype=np.uint8)
        used = door.kernel("format_sessions")(starts, sel[j0:j1], lens[j0:j1], sess_ids, aid, ts, typ, out)
        return out[:used], n_ev

    with open(path, "wb") as f:
        for data, n_ev in ordered_map(work, _chunks(lens, WRITE_CHUNK_EVENTS)):
            f.write(data.data)
            bar.update(n_ev)


def _write_sessions_parquet(path, starts, sel, lens, sess_ids, aid, ts, typ, bar):
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = pa.array(TYPE_NAMES)
    schema = pa.schema([
        ("session", pa.int32()), ("aid", pa.int32()), ("ts", pa.int64()), ("type", pa.dictionary(pa.int8(), pa.string())),
    ])

    def work(bounds):
        j0, j1 = bounds
        n_ev = int(lens[j0:j1].sum())
        o_sess = np.empty(n_ev, np.int32)
        o_aid = np.empty(n_ev, np.int32)
        o_ts = np.empty(n_ev, np.int64)
        o_typ = np.empty(n_ev, np.int8)
        door.kernel("gather_events")(starts, sel[j0:j1], lens[j0:j1], aid, ts, typ, o_sess, o_aid, o_ts, o_typ, sess_ids)
        table = pa.Table.from_arrays(
            [pa.array(o_sess), pa.array(o_aid), pa.array(o_ts), pa.DictionaryArray.from_arrays(pa.array(o_typ), names)],
            schema=schema,
        )
        return table, n_ev

    with pq.ParquetWriter(path, schema, compression="snappy", use_dictionary=["type"]) as writer:
        for table, n_ev in ordered_map(work, _chunks(lens, 2 * WRITE_CHUNK_EVENTS)):
            writer.write_table(table)
            bar.update(n_ev)
    if len(lens) == 0:  # ParquetWriter with no row group still writes a valid empty file
        pass


def _write_labels_jsonl(path, split: Holdout):
    n = len(split.test_ids)
    label_counts = np.diff(split.label_starts)
    with open(path, "wb") as f:
        for s0 in range(0, n, 1 << 20):
            s1 = min(n, s0 + (1 << 20))
            size = (s1 - s0) * K.LABELS_LINE_BYTES + int(label_counts[s0:s1].sum()) * K.LABEL_BYTES
            out = np.empty(size, dtype=np.uint8)
            used = door.kernel("format_labels")(s0, s1, split.test_ids, split.label_starts, split.label_type, split.label_aid, out)
            f.write(out[:used].data)


def _write_labels_parquet(path, split: Holdout):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    session = np.repeat(split.test_ids.astype(np.int64), np.diff(split.label_starts))
    types = pc.take(pa.array(TYPE_NAMES), pa.array(split.label_type))
    table = pa.table({"session": pa.array(session), "type": types, "aid": pa.array(split.label_aid.astype(np.int64))})
    pq.write_table(table, path, compression="snappy")


def output_files(out_dir: str | Path, fmt: str) -> dict[str, Path]:
    """The files `write_split` writes into out_dir, by name: the three outputs in format fmt, and summary.json."""
    return {**{name: Path(out_dir) / f"{name}.{fmt}" for name in OUTPUT_NAMES}, "summary": Path(out_dir) / "summary.json"}


def write_split(split: Holdout, out_dir: Path, fmt: str, progress: bool = False) -> dict[str, Path]:
    """Write the three outputs and summary.json under temporary names, then rename them all.

    On any failure the temporaries are removed and no output of this run is left behind."""
    from tqdm import tqdm

    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = output_files(out_dir, fmt)
    temps = {name: path.with_name(f".{path.name}.tmp-{os.getpid()}") for name, path in final.items()}
    ev = split.events
    train_sel = np.flatnonzero(split.role == K.ROLE_TRAIN)
    train_lens = split.keep[train_sel]
    test_sel = np.arange(len(split.test_ids))
    write_sessions = _write_sessions_jsonl if fmt == "jsonl" else _write_sessions_parquet
    write_labels = _write_labels_jsonl if fmt == "jsonl" else _write_labels_parquet
    total = int(train_lens.sum()) + int(split.kept.sum())
    try:
        with tqdm(total=total, unit=" events", unit_scale=True, desc="writing", disable=not progress, file=sys.stderr) as bar:
            write_sessions(temps["train_sessions"], ev.starts, train_sel, train_lens, ev.sess_ids, ev.aid, ev.ts, ev.typ, bar)
            write_sessions(temps["test_sessions"], split.test_starts, test_sel, split.kept, split.test_ids,
                           split.test_aid, split.test_ts, split.test_typ, bar)
        write_labels(temps["test_labels"], split)
        split.summary["outputs"] = {name: path.name for name, path in final.items()}
        temps["summary"].write_text(json.dumps(split.summary, indent=2) + "\n", encoding="utf-8")
        for name, path in final.items():
            os.replace(temps[name], path)
    except BaseException:
        for path in temps.values():
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        raise
    return final

