"""Breakdowns of the scored recall per type: recall@k curve, hit-rank histogram, truth-size and session-length bins.

hist_t[r] = sessions with truth of type t whose item at 0-based rank r is a hit (from the hit masks);
recall@k_t = Σ_{r<k} hist_t[r] / Σ_s min(k, |T_st|)  (so recall@K read off the curve is the scored recall);
a bin b of sessions: recall_t(b) = Σ_{s∈b} hits_st / Σ_{s∈b} min(K, |T_st|), and share_t(b) = its part of the denominator;
with beyond-accuracy metrics, a bin also holds each per-row one (novelty, diversity, serendipity, arp, aplt, auc, gauc)
aggregated as the whole-run figure is, over the bin's sessions (all have truth of the type); gini is catalogue-level: totals only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.file_formats import format_of, unreadable
from scorer.handed_back import nests_deeper, parse
from scorer.kernels import door

SIZE_BINS = ((1, 1, "1"), (2, 3, "2-3"), (4, 10, "4-10"), (11, None, ">10"))
LENGTH_BINS = ((1, 1, "1"), (2, 3, "2-3"), (4, 10, "4-10"), (11, 30, "11-30"), (31, None, ">30"))


def recall_curve(hist: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """recall@k for k = 1..K per type (NaN where a type has no truth): hist (T, K), sizes (n, T) of the kept sessions."""
    n_types, kmax = hist.shape
    out = np.full((n_types, kmax), np.nan)
    ks = np.arange(1, kmax + 1)
    for t in range(n_types):
        capped = np.bincount(np.minimum(sizes[:, t], kmax), minlength=kmax + 1)  # sessions per min(K, |T|)
        den = (capped[None, :] * np.minimum(ks[:, None], np.arange(kmax + 1)[None, :])).sum(axis=1)
        hits = np.cumsum(hist[t])
        out[t] = np.where(den > 0, hits / np.where(den > 0, den, 1), np.nan)
    return out


def _bins(values: np.ndarray, hits: np.ndarray, den: np.ndarray, edges, beyond=None) -> list[dict]:
    """One row per bin; beyond(inside) -> {metric: value} adds the bin's beyond-accuracy figures."""
    rows = []
    total = den.sum()
    for low, high, label in edges:
        inside = (values >= low) & (values <= (high if high is not None else np.iinfo(np.int64).max))
        rows.append(_bin_row(label, inside, hits, den, total, beyond))
    return rows


def _bin_row(label: str, inside: np.ndarray, hits: np.ndarray, den: np.ndarray, total, beyond) -> dict:
    d = den[inside].sum()
    row = {"bin": label, "sessions": int(np.count_nonzero(inside)),
           "recall": float(hits[inside].sum() / d) if d > 0 else None, "share": float(d / total) if total > 0 else None}
    if beyond is not None:
        row["beyond"] = beyond(inside)
    return row


def breakdown(hit_masks: np.ndarray, hits: np.ndarray, sizes: np.ndarray, types: tuple[str, ...], kmax: int,
              keep: np.ndarray | None = None, lengths: np.ndarray | None = None, beyond=None) -> dict:
    """Per type: recall@k (k = 1..kmax), hit-rank histogram, and recall by truth size (and by session length).

    hit_masks: the Result's slot_hits; hits: (n, T) hit counts of the scored recall; sizes: (n, T) |truth|;
    lengths: events per truth session (0 = not in the sessions file), or None;
    beyond: None, or beyond(t, session indices) -> {metric: value} for the bins' beyond-accuracy figures.
    """
    n = sizes.shape[0]
    keep = np.ones(n, bool) if keep is None else np.asarray(keep, bool)
    hist = door.kernel("rank_histogram")(np.ascontiguousarray(hit_masks, np.int64), np.ascontiguousarray(sizes, np.int64), keep, kmax)
    curve = recall_curve(hist, sizes[keep])
    out: dict = {"k": kmax, "recall_at_k": {}, "hit_ranks": {}, "truth_size": {}}
    if lengths is not None:
        out["session_length"] = {}
    for t, name in enumerate(types):
        with_truth = keep & (sizes[:, t] > 0)
        out["recall_at_k"][name] = [None if np.isnan(x) else float(x) for x in curve[t]]
        out["hit_ranks"][name] = hist[t].tolist()
        size, den, hit = sizes[with_truth, t], np.minimum(sizes[with_truth, t], kmax).astype(np.float64), hits[with_truth, t]
        where = np.flatnonzero(with_truth)
        in_bin = None if beyond is None else (lambda inside, t=t, where=where: beyond(t, where[inside]))
        out["truth_size"][name] = _bins(size, hit, den, SIZE_BINS, in_bin)
        if lengths is not None:
            length = lengths[with_truth]
            rows = _bins(length, hit, den, LENGTH_BINS, in_bin)
            unknown = length == 0
            if unknown.any():
                rows.append(_bin_row("not in sessions file", unknown, hit, den, den.sum(), in_bin))
            out["session_length"][name] = rows
    return out


def session_lengths(path: str | Path, truth_sessions: np.ndarray) -> np.ndarray:
    """Events per truth session from a test-sessions file (0 for a session not in it).

    OTTO JSONL ({"session": s, "events": [...]}, one session a line) or Parquet/CSV with one event
    per row and a `session` column. UsageError names the file (and line) when it cannot be read.
    """
    path = Path(path)
    why = unreadable(path, "sessions file")
    if why:
        raise UsageError(why)
    if format_of(path) in ("parquet", "csv"):
        ids, counts = _table_counts(path)
    else:
        ids, counts = _jsonl_counts(path)
    order = np.argsort(ids, kind="stable")
    ids, counts = ids[order], counts[order]
    index = np.clip(np.searchsorted(ids, truth_sessions), 0, max(len(ids) - 1, 0))
    found = (len(ids) > 0) & (ids[index] == truth_sessions) if len(ids) else np.zeros(len(truth_sessions), bool)
    return np.where(found, counts[index] if len(ids) else 0, 0).astype(np.int64)


def _table_counts(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        if format_of(path) == "csv":
            import pandas as pd

            session = pd.read_csv(path, usecols=["session"])["session"].to_numpy()
        else:
            import pyarrow.parquet as pq

            session = pq.read_table(path, columns=["session"]).column("session").to_numpy()
    except Exception as error:  # pandas / pyarrow raise many kinds; the message is what matters
        raise UsageError(f"cannot read sessions file {path}: {error} (expected a 'session' column, one event per row)") from None
    if session.dtype.kind not in "iu":
        raise UsageError(f"sessions file {path}: column 'session' must hold integers, found {session.dtype}")
    ids, counts = np.unique(session.astype(np.int64), return_counts=True)
    return ids, counts


def _jsonl_counts(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(session ids, events per session) of a JSONL sessions file.

    OTTO-shaped files are read by `scorer prepare`'s reader (a numba kernel, about 3x faster than pyarrow.json
    at OTTO size and lighter); a file it refuses (other shapes, nulls, repeated sessions, ...) is read as before."""
    from scorer.prepare.readers import read_jsonl

    try:
        events = read_jsonl(path)
        return events.sess_ids, np.diff(events.starts)
    except (UsageError, OSError):
        pass
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pj

        if not nests_deeper(path):  # pyarrow's reader would crash the process
            table = pj.read_json(path)
            if pa.types.is_integer(table.schema.field("session").type):  # 1e23 is read as a float: named line by line
                ids = table.column("session").to_numpy().astype(np.int64)
                counts = pc.fill_null(pc.list_value_length(table.column("events")), 0).to_numpy().astype(np.int64)
                return ids, counts
    except Exception:  # anything pyarrow cannot take is read line by line, which names the line
        pass
    ids, counts = [], []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = parse(line)  # nested too deep: a ValueError, not a RecursionError
                session, events = record["session"], record.get("events", [])
                if isinstance(session, bool) or not isinstance(session, int) or not -2**63 <= session < 2**63 \
                        or not isinstance(events, list):
                    raise ValueError("'session' must be a 64-bit integer and 'events' a list")
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise UsageError(f"sessions file {path}, line {number}: expected "
                                 f'{{"session": ID, "events": [...]}} ({error})') from None
            ids.append(session), counts.append(len(events))
    return np.array(ids, np.int64), np.array(counts, np.int64)
