"""The time-based holdout of `scorer prepare`: a validation split with labels from a session log in memory, the way
the OTTO competition made its test set.

The procedure follows otto-de/recsys-dataset `src/testset.py` + `src/labels.py`:

1. ``max_ts`` is the last timestamp of the log; ``split_ts = max_ts - days`` (in the log's time unit).
2. A session whose first event has ``ts > split_ts`` is a test session (all its events). Every other session
   keeps its events with ``ts < split_ts`` (an event exactly at ``split_ts`` goes nowhere, as in the reference)
   and is a training session if at least two remain, else dropped.
3. Test events whose item never occurs in the (kept) training events are removed; test sessions left with
   fewer than two events are dropped.
4. A test session of n events keeps its first k events, k uniform in 1..n-1; its labels come from events k..n-1:
   clicks = the first later click, carts = all later carts, orders = all later orders (sets); no label of a
   type whose future has none.

Where we differ from the reference, on purpose:

- The cut is drawn with a counter-based hash, ``k = 1 + splitmix64(splitmix64(seed) ^ session) % (n - 1)``,
  instead of Python's ``random.randint`` called in file order, so the split is independent of chunking, file
  order and threads (the distribution is the same, the individual draws are not).
- Item id 0 is an ordinary item: the reference drops a clicks label whose item is 0 (a truthiness test).
- Events of a session that are out of time order are sorted stably by ts first (and counted, and reported);
  the reference assumes order and takes the last event of each line as its latest.
- ``max_ts`` is the largest timestamp of any event (the reference takes each line's last event, the same on
  ordered data).
- Label sets are written sorted ascending (the reference writes Python set order).
- ``--days`` defaults to 7 (OTTO's test week; the reference script's default is 2) and may be fractional.
- A JSONL session with ``"events": []`` is dropped (the reference would crash on it).

Every test session has at least one label (its future is not empty and every event has a type), so the labels
list exactly the test sessions, in both formats.

Timestamps are milliseconds (OTTO's JSONL) or seconds (common Parquet conversions): with ``ts_unit="auto"``
the largest timestamp decides, ``>= 1e11`` means milliseconds (1e11 s is the year 5138, 1e11 ms is 1973).
Output keeps the input's timestamps unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from scorer.errors import UsageError
from scorer.kernels import door
from scorer.kernels import holdout_layout as K
from scorer.prepare import check_days
from scorer.prepare.readers import TYPE_NAMES, Events

MS_THRESHOLD = 10**11


@dataclass
class Holdout:
    """The result of the procedure, still in memory."""

    events: Events
    role: np.ndarray  # per input session: 0 dropped, 1 train, 2 test
    keep: np.ndarray  # per input session: events kept (train prefix)
    test_ids: np.ndarray
    test_starts: np.ndarray
    test_aid: np.ndarray
    test_ts: np.ndarray
    test_typ: np.ndarray
    kept: np.ndarray  # per test session: events before the cut
    label_starts: np.ndarray
    label_type: np.ndarray
    label_aid: np.ndarray
    summary: dict


def seed_mix(seed: int) -> int:
    return int(door.kernel("splitmix64")(np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)))


def detect_ts_unit(max_ts: int) -> str:
    return "ms" if max_ts >= MS_THRESHOLD else "s"


def split_events(events: Events, days: float = 7, seed: int = 42, ts_unit: str = "auto") -> Holdout:
    """Run the competition's procedure on events in memory (sorting out-of-order sessions in place)."""
    check_days(days)
    notes = list(events.notes)
    n_sessions = len(events.sess_ids)
    n_events = len(events.aid)
    bad = door.kernel("unordered_sessions")(events.ts, events.starts)
    n_bad = int(bad.sum())
    if n_bad:
        first = int(np.flatnonzero(bad)[0])
        door.kernel("sort_sessions_by_time")(events.ts, events.aid, events.typ, events.starts, bad)
        notes.append(
            f"{n_bad} session(s) had events out of time order (first: session {int(events.sess_ids[first])}"
            f"{events.where(first)}); sorted their events stably by ts"
        )
    max_ts = int(door.kernel("max_ts_of")(events.ts)) if n_events else 0
    if ts_unit == "auto":
        unit = detect_ts_unit(max_ts)
        how = f"detected: the largest ts {max_ts} is {'>=' if unit == 'ms' else '<'} 1e11"
    elif ts_unit in ("s", "ms"):
        unit, how = ts_unit, "as given"
    else:
        raise UsageError(f"unknown ts unit {ts_unit!r}; expected auto, s or ms")
    per_day = 86_400_000 if unit == "ms" else 86_400
    split_ts = max_ts - int(round(days * per_day))
    when = datetime.fromtimestamp(split_ts / (1000 if unit == "ms" else 1), tz=timezone.utc)
    notes.insert(0, f"timestamps in {'milliseconds' if unit == 'ms' else 'seconds'} ({how}); "
                    f"split at ts {split_ts} ({when:%Y-%m-%d %H:%M:%S} UTC), {days:g} days before the last event")
    if events.ts.shape[0] and int(events.ts.min()) > split_ts:
        notes.append(f"the log covers less than {days:g} days: every session is a test session and none is left "
                     "for training, so the test set is empty")
    role, keep = door.kernel("split_roles")(events.ts, events.starts, np.int64(split_ts))
    max_aid = int(events.aid.max()) if n_events else 0
    bits = door.kernel("train_item_bitmap")(events.aid, events.starts, role, keep, max_aid)
    t_ids, t_starts, t_aid, t_ts, t_typ, removed, dropped = door.kernel("filter_test")(
        events.sess_ids, events.aid, events.ts, events.typ, events.starts, role, bits
    )
    del bits
    kept = door.kernel("cut_points")(t_ids, t_starts, np.uint64(seed_mix(seed)))
    l_starts, l_type, l_aid = door.kernel("labels_after_cut")(t_starts, kept, t_aid, t_typ)

    is_train = role == K.ROLE_TRAIN
    is_test = role == K.ROLE_TEST
    # labels are grouped by session, then by type: a (session, type) pair starts where either changes
    first = np.ones(len(l_type), dtype=bool)
    first[1:] = l_type[1:] != l_type[:-1]
    first[l_starts[:-1][l_starts[:-1] < len(l_type)]] = True
    sessions_per_type = np.bincount(l_type[first], minlength=3)
    items_per_type = np.bincount(l_type, minlength=3)
    per_type_sessions = {name: int(sessions_per_type[code]) for code, name in enumerate(TYPE_NAMES)}
    per_type_items = {name: int(items_per_type[code]) for code, name in enumerate(TYPE_NAMES)}
    del first
    summary = {
        "input": {"sessions": n_sessions, "events": n_events, "sessions_reordered": n_bad},
        "ts_unit": unit,
        "days": days,
        "seed": int(seed),
        "max_ts": max_ts,
        "split_ts": split_ts,
        "train": {
            "sessions": int(is_train.sum()),
            "events": int(keep[is_train].sum()),
            "sessions_dropped_short": int((~is_train & ~is_test).sum()),
        },
        "test": {
            "sessions": int(len(t_ids)),
            "events": int(kept.sum()),
            "events_before_cut": int(len(t_aid)),
            "events_removed_unknown_item": int(removed),
            "sessions_dropped_short": int(dropped),
        },
        "labels": {"sessions": per_type_sessions, "items": per_type_items},
        "notes": notes,
    }
    return Holdout(events, role, keep, t_ids, t_starts, t_aid, t_ts, t_typ, kept, l_starts, l_type, l_aid, summary)

