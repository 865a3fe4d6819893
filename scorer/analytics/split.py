"""Public/private leaderboard split: Kaggle's Usage per session from the truth, or a seeded hash split.

Hash split: session s is public when u(seed, s) < fraction, with u the splitmix64 hash of
(seed, session id) mapped to [0, 1) (scorer.kernels.resample.hash_units). The same seed and
session always land on the same side, whatever else is in the file; about `fraction` of the
sessions are public.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from scorer.errors import UsageError
from scorer.kernels import door

PUBLIC, PRIVATE, IGNORED = 0, 1, 2  # the codes of scorer.truth.ids.USAGES
SIDES = {"public": PUBLIC, "private": PRIVATE}


@dataclass(frozen=True)
class Split:
    usage: np.ndarray  # int8 per truth session: 0 public, 1 private, 2 ignored
    source: str  # "usage column of the truth" or "hash split public=0.3 seed=S"

    def mask(self, side: str) -> np.ndarray:
        """Sessions of a side: "public", "private" or "all" (public and private; Ignored counts nowhere)."""
        return self.usage != IGNORED if side == "all" else self.usage == SIDES[side]

    def counts(self) -> dict[str, int]:
        found = np.bincount(self.usage, minlength=3)
        return {"public": int(found[PUBLIC]), "private": int(found[PRIVATE]), "ignored": int(found[IGNORED])}


def parse_split(text: str) -> float:
    """"public=0.3" (or "0.3") → 0.3; UsageError names the bad text."""
    match = re.fullmatch(r"\s*(?:public\s*=\s*)?([0-9]*\.?[0-9]+)\s*", text or "")
    fraction = float(match.group(1)) if match else -1.0
    if not 0.0 < fraction < 1.0:
        raise UsageError(f"--split {text!r}: expected public=FRACTION with 0 < FRACTION < 1, such as public=0.3")
    return fraction


def hash_split(sessions: np.ndarray, fraction: float, seed: int) -> Split:
    """Public when u(seed, session) < fraction (see the module docstring)."""
    units = door.kernel("hash_units")(np.ascontiguousarray(sessions, np.int64), np.uint64(seed % 2**64))
    usage = np.where(units < fraction, PUBLIC, PRIVATE).astype(np.int8)
    return Split(usage, f"hash split public={fraction:g} seed={seed}")


def string_keys(ids) -> np.ndarray:
    """A 64-bit hash of each string id's bytes, from a string table (keys with starts/ends, or offsets)."""
    if hasattr(ids, "starts"):
        starts, ends = ids.starts, ids.ends
    else:
        starts, ends = ids.offsets[:-1], ids.offsets[1:]
    return door.kernel("hash_strings")(np.ascontiguousarray(ids.keys, np.uint8), np.ascontiguousarray(starts, np.int64),
                                       np.ascontiguousarray(ends, np.int64))


def resolve_split(truth, fraction: float | None = None, seed: int = 0) -> Split | None:
    """--split wins; otherwise the truth's Usage column; otherwise no split (None)."""
    if fraction is not None:
        ids = getattr(truth, "ids", None)  # string ids (scorer.truth.strings): hash the id's bytes, not its code
        keys = string_keys(ids) if ids is not None else truth.sessions
        split = hash_split(keys, fraction, seed)
        return split
    usage = getattr(truth, "usage", None)
    if usage is not None:
        return Split(np.asarray(usage, np.int8), "Usage column of the truth")
    return None
