"""A candidate table to try `scorer candidates` on, from the split `scorer prepare` writes: per test session its own
items, the latest first, then the most popular items of the training sessions, N candidates a session.

    python bench/make_events.py --scale 0.01 --out events.parquet     # or OTTO's own train.jsonl
    scorer prepare events.parquet -o split/
    python bench/make_candidates.py split/ -o candidates.parquet      # 100 candidates a session
    scorer candidates candidates.parquet --truth split/test_labels.parquet --k 20,50,100

The table has the columns session, aid and score (higher first: the session's items above the popular ones), no
type: every candidate serves every type. A baseline to compare a real candidate generator with, not one.

Memory is bounded at any size: the table is made and written CHUNK sessions at a time, and the training log's item
counts are summed batch by batch where the split is Parquet. At OTTO's full size (1.67M test sessions, 100 a session:
167M rows) what stays in memory is the test sessions' own items and one chunk.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scorer.prepare.readers import read_events

CHUNK = 20_000  # sessions made and written at a time: 2M rows at 100 a session


def split_file(folder: Path, name: str) -> Path:
    """prepare's output `name` in either format (.parquet or .jsonl)."""
    found = [folder / f"{name}{suffix}" for suffix in (".parquet", ".jsonl") if (folder / f"{name}{suffix}").is_file()]
    if not found:
        raise SystemExit(f"{folder}: no {name}.parquet or {name}.jsonl (run `scorer prepare EVENTS -o {folder}` first)")
    return found[0]


def history(folder: Path, per_session: int) -> pd.DataFrame:
    """Each test session's distinct items, the latest first (rank 0, 1, ...), its first per_session."""
    events = read_events(split_file(folder, "test_sessions"))
    frame = pd.DataFrame({"session": np.repeat(events.sess_ids, np.diff(events.starts)), "aid": events.aid, "ts": events.ts})
    frame = frame.sort_values(["session", "ts"], ascending=[True, False], kind="stable").drop_duplicates(["session", "aid"])
    frame["rank"] = frame.groupby("session").cumcount()
    return frame.loc[frame["rank"] < per_session, ["session", "aid", "rank"]].reset_index(drop=True)


def item_counts(path: Path) -> np.ndarray:
    """Events per item id of the training log: a Parquet file's aid column read batch by batch, a JSONL file whole."""
    if path.suffix != ".parquet":
        return np.bincount(read_events(path).aid)
    counts = np.zeros(0, dtype=np.int64)
    for batch in pq.ParquetFile(path).iter_batches(columns=["aid"], batch_size=1 << 22):
        part = np.bincount(batch.column(0).to_numpy())
        if len(part) > len(counts):
            counts = np.concatenate([counts, np.zeros(len(part) - len(counts), dtype=np.int64)])
        counts[: len(part)] += part
    return counts


def popular(folder: Path, n: int) -> np.ndarray:
    """The n items with the most training events, the most frequent first."""
    counts = item_counts(split_file(folder, "train_sessions"))
    return np.argsort(-counts, kind="stable")[: min(n, np.count_nonzero(counts))]


def chunk_of(own: pd.DataFrame, sessions: np.ndarray, top: np.ndarray, per_session: int) -> pd.DataFrame:
    """session, aid, score for these sessions: their own items (score 2N - rank) before the popular ones (N - rank)."""
    filler = pd.DataFrame({"session": np.repeat(sessions, len(top)), "aid": np.tile(top, len(sessions)),
                           "rank": np.tile(np.arange(len(top)), len(sessions))})
    own = own.assign(score=2 * per_session - own["rank"])
    filler = filler.assign(score=per_session - filler["rank"])
    table = pd.concat([own, filler]).drop_duplicates(["session", "aid"])  # an own item keeps its higher score
    table = table.sort_values(["session", "score"], ascending=[True, False], kind="stable")
    table = table.groupby("session").head(per_session)
    return table[["session", "aid", "score"]].astype({"session": np.int64, "aid": np.int64, "score": np.float32})


def chunks(folder: Path, per_session: int = 100, chunk: int = CHUNK):
    """The table, CHUNK sessions at a time, in session order."""
    own = history(folder, per_session)
    top = popular(folder, per_session)
    starts = np.flatnonzero(np.r_[True, own["session"].to_numpy()[1:] != own["session"].to_numpy()[:-1]])
    for first in range(0, len(starts), chunk):
        begin, end = starts[first], starts[first + chunk] if first + chunk < len(starts) else len(own)
        part = own.iloc[begin:end]
        yield chunk_of(part, part["session"].unique(), top, per_session)


def candidates(folder: Path, per_session: int = 100) -> pd.DataFrame:
    """The whole table at once (for a small split; main writes it chunk by chunk)."""
    return pd.concat(list(chunks(folder, per_session)), ignore_index=True)


def write(folder: Path, output: Path, per_session: int, chunk: int = CHUNK) -> tuple[int, int]:
    """The table into output (.parquet or .csv) chunk by chunk: (rows, sessions)."""
    rows = sessions = 0
    writer = None
    try:
        for part in chunks(folder, per_session, chunk):
            if output.suffix == ".csv":
                part.to_csv(output, index=False, header=rows == 0, mode="w" if rows == 0 else "a")
            else:
                table = pa.Table.from_pandas(part, preserve_index=False)
                writer = writer or pq.ParquetWriter(output, table.schema)
                writer.write_table(table)
            rows += len(part)
            sessions += part["session"].nunique()
    finally:
        if writer is not None:
            writer.close()
    return rows, sessions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", type=Path, help="the folder `scorer prepare -o` wrote")
    parser.add_argument("-o", "--output", type=Path, default=Path("candidates.parquet"), help="the table (.parquet or .csv)")
    parser.add_argument("--per-session", type=int, default=100, metavar="N", help="candidates a session (default 100)")
    args = parser.parse_args(argv)
    if args.per_session < 1:
        parser.error(f"--per-session must be at least 1, got {args.per_session}")
    rows, sessions = write(args.split, args.output, args.per_session)
    print(f"wrote {args.output}: {rows:,} candidates for {sessions:,} sessions")


if __name__ == "__main__":
    main()
