"""Synthetic OTTO-like event log as Parquet, one event per row (session int32, aid int32, ts int64, type int8).

Full size (the default) matches OTTO's training log: 12,899,779 sessions, about 216.7M events, 1,855,603
items, four weeks from 2022-07-31. Session lengths are 2 + lognormal (mean about 16.8, capped at 500), item
popularity is skewed (power law over a random permutation of the ids), types are 89.9% clicks, 7.8% carts,
2.3% orders, and a session's events are in time order with short gaps and occasional gaps of days, so
sessions span up to weeks as in OTTO. Deterministic for a given --seed.

    python bench/make_events.py                      # full size -> bench/data/events.parquet
    python bench/make_events.py --scale 0.01         # 1% of the sessions
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

OTTO_SESSIONS = 12_899_779
OTTO_EVENTS = 216_716_096
OTTO_ITEMS = 1_855_603
START_MS = 1_659_304_800_000  # 2022-07-31 22:00 UTC
SPAN_MS = 28 * 86_400_000
TYPE_P = (0.899, 0.078, 0.023)
SIGMA = 1.25


def lognormal_mu(mean_extra: float, sigma: float = SIGMA) -> float:
    # floor(exp(N(mu, sigma))) has mean about exp(mu + sigma^2 / 2) - 0.5
    return float(np.log(mean_extra + 0.5) - sigma**2 / 2)


def generate(out: Path, scale: float = 1.0, seed: int = 0, ts_unit: str = "ms", chunk_sessions: int = 500_000,
             type_names: bool = False, fmt: str = "parquet") -> dict:
    """Write the log as Parquet (one event per row) or as OTTO JSONL (one session per line)."""
    rng = np.random.default_rng(seed)
    n_sessions = max(1, int(round(OTTO_SESSIONS * scale)))
    n_items = max(10, int(round(OTTO_ITEMS * min(1.0, scale * 10))))
    item_perm = rng.permutation(n_items).astype(np.int32)
    mu = lognormal_mu(OTTO_EVENTS / OTTO_SESSIONS - 2)
    type_field = pa.string() if type_names else pa.int8()
    schema = pa.schema([("session", pa.int32()), ("aid", pa.int32()),
                        ("ts", pa.int64() if ts_unit == "ms" else pa.int32()), ("type", type_field)])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    total = 0
    started = time.perf_counter()
    if fmt == "jsonl":
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from scorer.kernels.holdout import format_sessions
        from scorer.kernels.holdout_layout import EVENT_BYTES, SESSION_BYTES

        writer = _JsonlWriter(tmp, format_sessions, EVENT_BYTES, SESSION_BYTES)
    else:
        writer = pq.ParquetWriter(tmp, schema, compression="snappy")
    with writer:
        for first in range(0, n_sessions, chunk_sessions):
            count = min(chunk_sessions, n_sessions - first)
            lengths = 2 + np.minimum(np.floor(np.exp(rng.normal(mu, SIGMA, count))), 498).astype(np.int64)
            n = int(lengths.sum())
            session = np.repeat(np.arange(first, first + count, dtype=np.int32), lengths)
            begin = np.zeros(count, dtype=np.int64)
            np.cumsum(lengths[:-1], out=begin[1:])
            # gaps: mostly about a minute, sometimes about two days
            long_gap = rng.random(n) < 0.04
            gaps = np.where(long_gap, rng.exponential(2 * 86_400_000, n), rng.exponential(60_000, n)).astype(np.int64)
            gaps[begin] = 0
            offset = np.cumsum(gaps)
            offset -= np.repeat(offset[begin], lengths)
            start = START_MS + rng.integers(0, SPAN_MS, count)
            ts = np.repeat(start, lengths) + offset
            np.minimum(ts, START_MS + SPAN_MS - 1, out=ts)  # the log ends after four weeks (keeps order)
            aid = item_perm[np.minimum((rng.random(n) ** 3 * n_items).astype(np.int64), n_items - 1)]
            typ = rng.choice(3, size=n, p=TYPE_P).astype(np.int8)
            if fmt == "jsonl":
                writer.write(first, count, lengths, aid, ts if ts_unit == "ms" else ts // 1000, typ)
                total += n
                continue
            ts_col = pa.array(ts) if ts_unit == "ms" else pa.array((ts // 1000).astype(np.int32))
            type_col = pa.array(np.array(["clicks", "carts", "orders"])[typ]) if type_names else pa.array(typ)
            writer.write_table(pa.Table.from_arrays([pa.array(session), pa.array(aid), ts_col, type_col], schema=schema))
            total += n
    tmp.replace(out)
    return {"path": str(out), "sessions": n_sessions, "events": total, "items": n_items,
            "seconds": round(time.perf_counter() - started, 1), "bytes": out.stat().st_size}


class _JsonlWriter:
    def __init__(self, path, kernel, event_bytes, session_bytes):
        self.file = open(path, "wb")
        self.kernel, self.event_bytes, self.session_bytes = kernel, event_bytes, session_bytes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()

    def write(self, first, count, lengths, aid, ts, typ):
        starts = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        out = np.empty(int(starts[-1]) * self.event_bytes + count * self.session_bytes, dtype=np.uint8)
        used = self.kernel(starts, np.arange(count), lengths, np.arange(first, first + count), aid, ts, typ, out)
        self.file.write(out[:used].data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "events.parquet")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of OTTO's 12.9M sessions (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ts-unit", choices=("ms", "s"), default="ms")
    parser.add_argument("--type-names", action="store_true", help="type as strings instead of int8 codes")
    parser.add_argument("--format", choices=("parquet", "jsonl"), default="parquet",
                        help="parquet (one event per row) or OTTO JSONL (one session a line; about 11 GB at full size)")
    args = parser.parse_args()
    info = generate(args.out, scale=args.scale, seed=args.seed, ts_unit=args.ts_unit, type_names=args.type_names,
                    fmt=args.format)
    print(f"wrote {info['path']}: {info['sessions']:,} sessions, {info['events']:,} events, {info['items']:,} items, "
          f"{info['bytes'] / 1e9:.2f} GB in {info['seconds']} s")


if __name__ == "__main__":
    main()
