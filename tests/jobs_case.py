"""The case the tests of the jobs (scorer.compare, leaderboard, ...) share, and how they run the command beside them."""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from conftest import TYPES, run_main
from scorer import api

N_SESSIONS = 120


def still_clock(monkeypatch) -> None:
    """A clock that does not move: a Result's "seconds" is the one figure that measures the run, not the input."""
    monkeypatch.setattr(api.time, "monotonic", lambda: 0.0)


def make_case(folder):
    """A truth of N_SESSIONS sessions and three submissions of different skill: (folder, truth, [paths])."""
    rng = np.random.default_rng(7)
    truth = {}
    for session in range(1, N_SESSIONS + 1):
        labels = {"clicks": int(rng.integers(1, 40))}
        if rng.random() < 0.6:
            labels["carts"] = sorted(set(rng.integers(1, 40, rng.integers(1, 4)).tolist()))
        if rng.random() < 0.5:
            labels["orders"] = sorted(set(rng.integers(1, 40, rng.integers(1, 6)).tolist()))
        truth[session] = labels
    truth_path = folder / "truth.jsonl"
    truth_path.write_text("".join(json.dumps({"session": s, "labels": v}) + "\n" for s, v in truth.items()))
    paths = []
    for name, keep in (("strong.csv", 0.8), ("middle.csv", 0.5), ("weak.csv", 0.2)):
        lines = ["session_type,labels"]
        for session, labels in truth.items():
            for type_name in TYPES:
                items = labels.get(type_name, [])
                items = [items] if isinstance(items, int) else items
                kept = [item for item in items if rng.random() < keep] + rng.integers(40, 80, 3).tolist()
                lines.append(f"{session}_{type_name},{' '.join(map(str, kept))}")
        path = folder / name
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return folder, str(truth_path), paths


def frame(path: str) -> pl.DataFrame:
    return pl.read_csv(path, schema_overrides={"labels": pl.String})


def command(*argv) -> tuple[int, str]:
    code, out, err = run_main(*argv)
    assert "Traceback" not in err
    return code, out


def same_as_command(obj, *argv, text: bool = True) -> None:
    """obj.to_dict() is the command's JSON to the last bit, and its text the command's text."""
    code, out = command(*argv, "--format", "json")
    assert obj.to_json() + "\n" == out
    assert obj.to_dict() == json.loads(out)
    if text:
        _, out = command(*argv)
        assert obj.to_text() + "\n" == out
