"""Write trivago- and MPD-sized files for bench/bench_recsys.py: a submission as the challenge's participants wrote it
and its truth in the published form.

- trivago 2019 (test size: about 250,000 clickouts): ground_truth.csv in train.csv's 12 columns (each target
  clickout, with a few other actions between them), submission.csv `user_id,session_id,timestamp,step,
  item_recommendations` with the session's impressions (up to 25 item ids) reordered;
- the MPD challenge set (10,000 playlists × 500 tracks): challenge_truth.json (each playlist's hidden tracks, 5 to 250),
  submission.csv with its team_info line and `pid, uri, ...` rows of 500 distinct track URIs.

    python bench/make_recsys.py [--trivago 250000] [--playlists 10000] [--out bench/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TRIVAGO_HEADER = "user_id,session_id,timestamp,step,action_type,reference,platform,city,device,current_filters,impressions,prices\n"


def _tokens(rng, n: int, width: int, alphabet: bytes) -> np.ndarray:
    """n random tokens of `width` characters of `alphabet`, as an array of Python strings."""
    letters = np.frombuffer(alphabet, np.uint8)
    raw = letters[rng.integers(0, len(letters), (n, width))]
    return np.array([row.tobytes().decode() for row in raw], dtype=object)


def trivago(n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """trivago-shaped truth and submission of n clickouts (written once per size)."""
    truth, sub = folder / f"trivago_truth_{n}.csv", folder / f"trivago_submission_{n}.csv"
    if truth.is_file() and sub.is_file():
        return sub, truth
    rng = np.random.default_rng(seed)
    users = _tokens(rng, n, 12, b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    sessions = _tokens(rng, n, 13, b"0123456789abcdef")
    steps = rng.integers(1, 60, n)
    stamps = 1541548800 + rng.integers(0, 86400 * 2, n)
    lengths = rng.integers(1, 26, n)
    with open(truth, "w") as t, open(sub, "w") as s:
        t.write(TRIVAGO_HEADER)
        s.write("user_id,session_id,timestamp,step,item_recommendations\n")
        for i in range(n):
            items = [str(x) for x in rng.integers(1, 9_000_000, lengths[i])]
            clicked = items[int(rng.integers(0, len(items)))]
            key = f"{users[i]},{sessions[i]},{stamps[i]},{steps[i]}"
            if i % 4 == 0:  # an action before the clickout, read past by the truth's filter
                t.write(f"{users[i]},{sessions[i]},{stamps[i] - 5},{steps[i] - 1},interaction item image,{clicked},DE,\"Berlin, Germany\",mobile,,,\n")
            t.write(f"{key},clickout item,{clicked},DE,\"Berlin, Germany\",mobile,,{'|'.join(items)},{'|'.join(['99'] * len(items))}\n")
            rng.shuffle(items)
            s.write(f"{key},{' '.join(items)}\n")
    return sub, truth


def mpd(n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """MPD-shaped truth (challenge_set.json's form, the hidden tracks) and submission of n playlists × 500 tracks."""
    truth, sub = folder / f"mpd_truth_{n}.json", folder / f"mpd_submission_{n}.csv"
    if truth.is_file() and sub.is_file():
        return sub, truth
    rng = np.random.default_rng(seed)
    catalogue = np.array([f"spotify:track:{token}" for token in _tokens(rng, 200_000, 22, b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")],
                         dtype=object)
    playlists = []
    with open(sub, "w") as s:
        s.write("team_info,main,bench team,bench@example.com\n")
        for pid in range(1_000_000, 1_000_000 + n):
            drawn = rng.integers(0, len(catalogue), 1200)
            picked = catalogue[drawn[np.sort(np.unique(drawn, return_index=True)[1])][:750]]  # 750 distinct, in drawn order
            hidden = int(rng.integers(5, 251))
            playlists.append({"pid": pid, "num_holdouts": hidden, "tracks": [{"track_uri": uri} for uri in picked[500 : 500 + hidden]]})
            listed = list(picked[:500])
            found = rng.choice(hidden, hidden // 4, replace=False)  # some hidden tracks found, each once, at random ranks
            for at, which in zip(rng.choice(500, len(found), replace=False), found):
                listed[at] = picked[500 + int(which)]
            s.write(f"{pid}, " + ", ".join(listed) + "\n")  # 500 distinct tracks: verify_submission.py's (and S040's) rule
    truth.write_text(json.dumps({"info": {"generated": "bench/make_recsys.py"}, "playlists": playlists}))
    return sub, truth


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trivago", type=int, default=250_000, help="clickouts (default 250,000: the test set's)")
    parser.add_argument("--playlists", type=int, default=10_000, help="playlists (default 10,000: the challenge set's)")
    parser.add_argument("--out", type=Path, default=HERE / "data")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for made in (trivago(args.trivago, args.out), mpd(args.playlists, args.out)):
        print(" ".join(f"{path} ({path.stat().st_size:,} bytes)" for path in made))


if __name__ == "__main__":
    main()
