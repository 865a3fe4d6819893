"""`scorer prepare`: read a raw OTTO session log, split it by time like the competition made its test set, write the outputs.

Readers: scorer.prepare.readers; the procedure: scorer.prepare.holdout; the outputs: scorer.prepare.writers.
"""

from __future__ import annotations

import time
from pathlib import Path

from scorer.errors import UsageError
from scorer.file_formats import unreadable
from scorer.prepare import check_days
from scorer.prepare.holdout import split_events
from scorer.prepare.readers import (
    DEFAULT_CHUNK_BYTES,
    FORMATS,
    TYPE_NAMES,
    detect_format,
    read_events,
)
from scorer.prepare.writers import write_split
from scorer.wording import counted


def prepare(events_path, out_dir, days: float = 7, seed: int = 42, fmt: str | None = None,
            input_format: str | None = None, ts_unit: str = "auto", chunk_bytes: int = DEFAULT_CHUNK_BYTES,
            progress: bool = False) -> dict:
    """Read a session log, split it like the competition and write the outputs; return the summary."""
    events_path = Path(events_path)
    out_dir = Path(out_dir)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    why = unreadable(events_path, "session log")
    if why:
        raise UsageError(why)
    in_fmt = input_format or detect_format(events_path)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir}: exists and is not a directory")
    started = time.perf_counter()
    check_days(days)
    if ts_unit not in ("auto", "s", "ms"):
        raise UsageError(f"unknown ts unit {ts_unit!r}; expected auto, s or ms")
    events = read_events(events_path, in_fmt, chunk_bytes=chunk_bytes, progress=progress)
    if len(events.aid) == 0:
        raise UsageError(f"{events_path}: no events")
    read_s = time.perf_counter() - started
    split = split_events(events, days=days, seed=seed, ts_unit=ts_unit)
    split_s = time.perf_counter() - started - read_s
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        split.summary["input"]["path"] = str(events_path)
        split.summary["input"]["format"] = in_fmt
        split.summary["format"] = fmt or in_fmt
        write_split(split, out_dir, fmt or in_fmt, progress=progress)
    except BaseException:
        if created:
            try:
                out_dir.rmdir()
            except OSError:
                pass
        raise
    total = time.perf_counter() - started
    split.summary["seconds"] = {"read": round(read_s, 3), "split": round(split_s, 3),
                                "write": round(total - read_s - split_s, 3), "total": round(total, 3)}
    return split.summary


def format_summary(summary: dict) -> str:
    """A short human-readable table of a summary."""
    lines = [
        f"input   {summary['input']['sessions']:>12,} sessions {summary['input']['events']:>14,} events",
        f"train   {summary['train']['sessions']:>12,} sessions {summary['train']['events']:>14,} events"
        f"   ({counted(summary['train']['sessions_dropped_short'], 'session')} dropped: < 2 events before the split)",
        f"test    {summary['test']['sessions']:>12,} sessions {summary['test']['events']:>14,} events"
        f"   (of {summary['test']['events_before_cut']:,} before the cut; "
        f"{counted(summary['test']['events_removed_unknown_item'], 'event')} on unknown items removed, "
        f"{counted(summary['test']['sessions_dropped_short'], 'session')} dropped)",
    ]
    for name in TYPE_NAMES:
        lines.append(
            f"labels  {name:<7} {summary['labels']['sessions'][name]:>12,} sessions "
            f"{summary['labels']['items'][name]:>10,} items"
        )
    if "seconds" in summary:
        s = summary["seconds"]
        rate = summary["input"]["events"] / s["total"] if s["total"] > 0 else 0.0
        lines.append(f"time    {s['total']:.1f} s (read {s['read']:.1f}, split {s['split']:.1f}, write {s['write']:.1f}); "
                     f"{rate:,.0f} events/s")
    return "\n".join(lines)
