"""A candidate table to try `scorer candidates` on, from the split `scorer prepare` writes: per test session its own
items, the latest first, then the most popular items of the training sessions, N candidates a session.

    python bench/make_events.py --scale 0.01 --out events.parquet     # or OTTO's own train.jsonl
    scorer prepare events.parquet -o split/
    python bench/make_candidates.py split/ -o candidates.parquet      # 100 candidates a session
    scorer candidates candidates.parquet --truth split/test_labels.parquet --k 20,50,100

The table has the columns session, aid and score (higher first: the session's items above the popular ones), no
type: every candidate serves every type. A baseline to compare a real candidate generator with, not one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from scorer.prepare.readers import read_events


def split_file(folder: Path, name: str) -> Path:
    """prepare's output `name` in either format (.parquet or .jsonl)."""
    found = [folder / f"{name}{suffix}" for suffix in (".parquet", ".jsonl") if (folder / f"{name}{suffix}").is_file()]
    if not found:
        raise SystemExit(f"{folder}: no {name}.parquet or {name}.jsonl (run `scorer prepare EVENTS -o {folder}` first)")
    return found[0]


def history(folder: Path) -> pd.DataFrame:
    """Each test session's distinct items, the latest first (rank 0, 1, ...)."""
    events = read_events(split_file(folder, "test_sessions"))
    frame = pd.DataFrame({"session": np.repeat(events.sess_ids, np.diff(events.starts)), "aid": events.aid, "ts": events.ts})
    frame = frame.sort_values(["session", "ts"], ascending=[True, False], kind="stable").drop_duplicates(["session", "aid"])
    frame["rank"] = frame.groupby("session").cumcount()
    return frame[["session", "aid", "rank"]]


def popular(folder: Path, n: int) -> np.ndarray:
    """The n items with the most training events, the most frequent first."""
    aid = read_events(split_file(folder, "train_sessions")).aid
    counts = np.bincount(aid)
    return np.argsort(-counts, kind="stable")[: min(n, np.count_nonzero(counts))]


def candidates(folder: Path, per_session: int = 100) -> pd.DataFrame:
    """session, aid, score: a session's own items (score 2N - rank) before the popular ones (score N - rank), N each."""
    own = history(folder)
    own = own[own["rank"] < per_session]
    sessions = own["session"].unique()
    top = popular(folder, per_session)
    filler = pd.DataFrame({"session": np.repeat(sessions, len(top)), "aid": np.tile(top, len(sessions)),
                           "rank": np.tile(np.arange(len(top)), len(sessions))})
    own = own.assign(score=2 * per_session - own["rank"])
    filler = filler.assign(score=per_session - filler["rank"])
    table = pd.concat([own, filler]).drop_duplicates(["session", "aid"])  # an own item keeps its higher score
    table = table.sort_values(["session", "score"], ascending=[True, False], kind="stable")
    table = table.groupby("session").head(per_session)
    return table[["session", "aid", "score"]].astype({"session": np.int64, "aid": np.int64, "score": np.float32})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", type=Path, help="the folder `scorer prepare -o` wrote")
    parser.add_argument("-o", "--output", type=Path, default=Path("candidates.parquet"), help="the table (.parquet or .csv)")
    parser.add_argument("--per-session", type=int, default=100, metavar="N", help="candidates a session (default 100)")
    args = parser.parse_args(argv)
    table = candidates(args.split, args.per_session)
    if args.output.suffix == ".csv":
        table.to_csv(args.output, index=False)
    else:
        table.to_parquet(args.output, index=False)
    print(f"wrote {args.output}: {len(table):,} candidates for {table['session'].nunique():,} sessions")


if __name__ == "__main__":
    main()
