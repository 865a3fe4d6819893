"""Generate OTTO-size synthetic data: test labels (JSONL) and a submission (CSV) with realistic hit rates.

    python bench/make_otto.py [--sessions 1671803] [--out bench/data] [--seed 0]

Full size: 1,671,803 sessions, 5,015,409 rows of 20 items (about 820 MB). Written in chunks
by a numba kernel, so memory stays small and generation takes seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from numba import njit

from scorer.kernels.submission_rows import write_int, write_items

FIRST_SESSION = 12_899_779  # OTTO's test sessions start here
N_ITEMS = 1_855_603
TYPES = ("clicks", "carts", "orders")


@njit(cache=True)
def _write_rows(out, sessions, type_names, type_offsets, predictions):
    """Lines "{session}_{type},{item} {item} ..." for every session and type; returns bytes written."""
    pos = 0
    n_types = type_offsets.shape[0] - 1
    for s in range(sessions.shape[0]):
        for t in range(n_types):
            pos = write_int(out, pos, sessions[s])
            out[pos] = 95  # '_'
            pos += 1
            for c in range(type_offsets[t], type_offsets[t + 1]):
                out[pos] = type_names[c]
                pos += 1
            out[pos] = 44  # ','
            pos += 1
            row = predictions[s * n_types + t]
            pos = write_items(out, pos, row, row.shape[0])
            out[pos] = 10
            pos += 1
    return pos


def make_truth(rng, sessions):
    """clicks for 95% of sessions; carts (1-4 items) for 30%; orders (1-5 items) for 18%."""
    truth = {}
    n = len(sessions)
    has = {"clicks": rng.random(n) < 0.95, "carts": rng.random(n) < 0.30, "orders": rng.random(n) < 0.18}
    sizes = {"clicks": np.ones(n, int), "carts": rng.integers(1, 5, n), "orders": rng.integers(1, 6, n)}
    for t in TYPES:
        items = rng.integers(0, N_ITEMS, (n, 5))
        truth[t] = (has[t], sizes[t], items)
    return truth


def write_truth(path: Path, sessions, truth) -> None:
    with open(path, "w") as handle:
        for i, session in enumerate(sessions.tolist()):
            labels = {}
            for t in TYPES:
                has, sizes, items = truth[t]
                if has[i]:
                    chosen = items[i, : sizes[i]].tolist()
                    labels[t] = chosen[0] if t == "clicks" else chosen
            handle.write(json.dumps({"session": session, "labels": labels}) + "\n")


def write_submission(path: Path, rng, sessions, truth, k: int = 20, chunk: int = 200_000, hit_rate: float = 0.4) -> int:
    names = np.frombuffer("".join(TYPES).encode(), np.uint8)
    offsets = np.cumsum([0] + [len(t) for t in TYPES]).astype(np.int64)
    written = 0
    with open(path, "wb") as handle:
        handle.write(b"session_type,labels\n")
        for start in range(0, len(sessions), chunk):
            part = sessions[start : start + chunk]
            n = len(part)
            predictions = rng.integers(0, N_ITEMS, (n * len(TYPES), k))
            for t, name in enumerate(TYPES):
                has, sizes, items = truth[name]
                # put a truth item at a random rank for about 40% (hit_rate) of the sessions that have one
                hit = has[start : start + n] & (rng.random(n) < hit_rate)
                rows = np.flatnonzero(hit) * len(TYPES) + t
                predictions[rows, rng.integers(0, k, len(rows))] = items[start : start + n][hit, 0]
            buffer = np.empty(n * len(TYPES) * (k * 8 + 32), np.uint8)
            size = _write_rows(buffer, part, names, offsets, predictions)
            handle.write(buffer[:size].tobytes())
            written += size
    return written


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1_671_803)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    sessions = np.arange(FIRST_SESSION, FIRST_SESSION + args.sessions, dtype=np.int64)
    truth = make_truth(rng, sessions)
    write_truth(args.out / "test_labels.jsonl", sessions, truth)
    size = write_submission(args.out / "submission.csv", rng, sessions, truth)
    print(f"wrote {args.out}/test_labels.jsonl and submission.csv ({size / 1e6:.0f} MB, {len(sessions) * 3:,} rows) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
