"""The beyond-accuracy metrics next to rectools' (a published implementation), on random OTTO-shaped data.

    PYTHONPATH=.:/tmp/rectools python bench/compare_rectools.py [--sessions 2000] [--seed 0]

rectools 0.19 pins numpy<2 and pandas<3 on Python 3.11, so it is installed apart from the
project's environment: `pip install --no-deps --target /tmp/rectools rectools typeguard`.
Compared (docs/metrics.md, "Beyond-accuracy metrics and AUC", table of conventions):
  - arp@K            = AvgRecPopularity(k)                       (same convention)
  - novelty@K        = MeanInvUserFreq(k) + log2(Σ pop / users)   (p(i) over interactions, not users)
  - diversity@K      = IntraListDiversity(k, Hamming on the category) (same; rows of 2+ items)
Serendipity differs in definition (rectools: Kotkov's rank-probability form), so it is not compared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

TYPES = ("clicks", "carts", "orders")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        import pandas as pd
        from rectools import Columns
        from rectools.metrics import AvgRecPopularity, IntraListDiversity, MeanInvUserFreq
        from rectools.metrics.distances import PairwiseHammingDistanceCalculator
    except ImportError as error:
        sys.exit(f"rectools cannot be imported ({error}): pip install --no-deps --target /tmp/rectools rectools typeguard, "
                 "then PYTHONPATH=.:/tmp/rectools")
    from scorer.api import score
    from scorer.spec.competition import load_competition
    from scorer.spec.metrics import parse_metric
    from scorer.truth.items import from_popularity

    rng = np.random.default_rng(args.seed)
    k, n_items = args.k, args.items
    # training interactions: each (user, item) once, so rectools' users(i) is our pop(i)
    train_users, train_items = [], []
    for user in range(args.sessions):
        for item in set(rng.zipf(1.3, rng.integers(1, 12)) % n_items):
            train_users.append(user)
            train_items.append(int(item))
    prev = pd.DataFrame({Columns.User: train_users, Columns.Item: train_items})
    counts = np.bincount(train_items, minlength=n_items).astype(float)
    category = rng.integers(0, 6, n_items)
    side = from_popularity(np.arange(n_items), counts, category)
    lines, reco = ["session_type,labels"], []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        with open(folder / "labels.jsonl", "w") as out:
            for s in range(1, args.sessions + 1):
                out.write(json.dumps({"session": s, "labels": {"clicks": int(rng.integers(n_items))}}) + "\n")
                items = list(dict.fromkeys(int(i) for i in rng.integers(0, n_items + 20, rng.integers(1, k + 1))))
                lines.append(f"{s}_clicks," + " ".join(map(str, items)))
                reco += [(s, item, rank + 1) for rank, item in enumerate(items)]
        (folder / "sub.csv").write_text("\n".join(lines) + "\n")
        names = [f"arp@{k}", f"novelty@{k}", f"diversity@{k}"]
        competition = dataclasses.replace(load_competition("otto"), diagnostics=tuple(parse_metric(m) for m in names))
        ours = score(folder / "sub.csv", folder / "labels.jsonl", competition, items=side).metrics["clicks"]
    reco = pd.DataFrame(reco, columns=[Columns.User, Columns.Item, Columns.Rank])
    # ids past the table: a category of their own each
    features = pd.DataFrame({"category": np.concatenate([category, -1 - np.arange(20)])}, index=np.arange(n_items + 20))
    shift = math.log2(counts.sum() / prev[Columns.User].nunique())
    theirs = {
        f"arp@{k}": AvgRecPopularity(k=k).calc(reco, prev),
        f"novelty@{k}": MeanInvUserFreq(k=k).calc(reco, prev) + shift,
        f"diversity@{k}": IntraListDiversity(k=k, distance_calculator=PairwiseHammingDistanceCalculator(features))
        .calc_per_user(reco).loc[lambda v: reco.groupby(Columns.User).size().loc[v.index] >= 2].mean(),
    }
    worst = 0.0
    print(f"{'metric':<16}{'scorer':>14}{'rectools':>14}{'difference':>14}")
    for name in names:
        difference = abs(ours[name] - theirs[name])
        worst = max(worst, difference)
        print(f"{name:<16}{ours[name]:>14.9f}{theirs[name]:>14.9f}{difference:>14.2e}")
    print(f"novelty: rectools' MIUF shifted by log2(Σ pop / users) = {shift:.6f} (p over interactions, not users)")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
