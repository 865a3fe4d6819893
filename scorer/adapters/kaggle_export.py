"""Solution files from a truth, Kaggle's (row id, labels, Usage) and Hugging Face Competitions' (row id, labels, split),
and the matching sample submission."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.spec.competition import Competition, id_literals
from scorer.truth.ids import Truth

SAMPLE_LABELS = ("empty", "popular")
# the split column of each platform's solution: its name and how it spells the two sides
SPLIT_COLUMNS = {"kaggle-solution": ("Usage", "Public", "Private"), "hf-solution": ("split", "public", "private")}


def row_ids(truth: Truth, comp: Competition) -> list[str]:
    """The id of every (session, type) slot, in slot order (session, then the config's type order)."""
    prefix, middle, suffix = id_literals(comp.id_pattern)
    sessions = truth.sessions.tolist()
    if "{type}" not in comp.id_pattern:
        return [f"{prefix}{s}{suffix}" for s in sessions]
    if comp.session_first:
        return [f"{prefix}{s}{middle}{t}{suffix}" for s in sessions for t in comp.types]
    return [f"{prefix}{t}{middle}{s}{suffix}" for s in sessions for t in comp.types]


def slot_labels(truth: Truth) -> list[str]:
    """The truth items of every slot, space-separated ('' when none)."""
    items = truth.items.tolist()
    bounds = truth.indptr.tolist()
    return [" ".join(map(str, items[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]


def usage(sessions: np.ndarray, public: float, seed: int) -> np.ndarray:
    """True for the sessions of the Public split: the same seeded hash split as `scorer score --split public=F --seed S`."""
    if not 0.0 <= public <= 1.0:
        raise UsageError(f"--public must be between 0 and 1, got {public}")
    from scorer.analytics.split import hash_split

    return hash_split(sessions, public, seed).mask("public")


def popular_labels(truth: Truth, k: int) -> list[str]:
    """Per type, the k most frequent truth items (ties by smaller id), space-separated."""
    n_types = len(truth.types)
    slot_of_item = np.repeat(np.arange(len(truth.indptr) - 1), np.diff(truth.indptr))
    out = []
    for t in range(n_types):
        items = truth.items[slot_of_item % n_types == t]
        values, counts = np.unique(items, return_counts=True)
        order = np.lexsort((values, -counts))[:k]
        out.append(" ".join(map(str, values[order].tolist())))
    return out


def _csv_field(text: str) -> str:
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"\r\n') else text


def id_type_only(comp: Competition, target: str) -> None:
    """A UsageError, before any truth is read, when `comp`'s rows are not (session, type) ids: the platforms' metrics of
    both solutions read only those."""
    if getattr(comp, "shape", "id_type") != "id_type":
        raise UsageError(f"{target} writes solutions of shape 'id_type' (a row per session and type, as otto's "
                         f"'12899779_clicks'); {comp.name}'s submissions have shape {comp.shape!r}, which the Kaggle and "
                         "Hugging Face metrics do not read")


def write_solution(truth: Truth, comp: Competition, solution: str | Path, sample: str | Path,
                   public: float = 0.3, seed: int = 0, sample_labels: str = "empty", target: str = "kaggle-solution",
                   replace_sample: bool = True) -> dict:
    """Write the solution CSV (id, labels, and the split column of `target`, SPLIT_COLUMNS; whole sessions per side) and
    the sample submission. replace_sample=False (a sample at its default name, which the user did not name): a sample
    already there is kept when it holds the same bytes ("sample": "kept" in the summary), and a UsageError, before
    anything is written, when it holds others (another export's, of another truth or --sample-labels)."""
    if truth.n_sessions == 0:
        raise UsageError("the truth has no sessions: nothing to export")
    id_type_only(comp, target)
    if sample_labels not in SAMPLE_LABELS:
        raise UsageError(f"sample labels must be one of {', '.join(SAMPLE_LABELS)}, got {sample_labels!r}")
    n_types = len(comp.types)
    ids = [_csv_field(text) for text in row_ids(truth, comp)]
    public_session = usage(truth.sessions, public, seed)
    split_column, public_side, private_side = SPLIT_COLUMNS[target]
    split = np.where(np.repeat(public_session, n_types), public_side, private_side).tolist()
    id_column, label_column = comp.header
    fill = popular_labels(truth, comp.k) if sample_labels == "popular" else [""] * n_types

    def sample_lines():
        yield f"{id_column},{label_column}\n"
        yield from (f"{i},{fill[n % n_types]}\n" for n, i in enumerate(ids))

    kept = not replace_sample and os.path.lexists(sample)
    if kept and not _holds(sample, sample_lines()):
        raise UsageError(f"{sample} is already there and holds another sample submission (another truth, competition or "
                         f"--sample-labels): pass --sample FILE to write this one elsewhere, or --sample {sample} to replace it")
    with open(solution, "w", encoding="utf-8", newline="\n") as out:
        out.write(f"{id_column},{label_column},{split_column}\n")
        out.writelines(f"{i},{labels},{s}\n" for i, labels, s in zip(ids, slot_labels(truth), split))
    if not kept:
        with open(sample, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(sample_lines())
    return {"rows": len(ids), "sessions": truth.n_sessions, "public_sessions": int(public_session.sum()),
            "private_sessions": int(truth.n_sessions - public_session.sum()), "sample": "kept" if kept else "written"}


def _holds(path: str | Path, lines) -> bool:
    """Whether the file at path holds exactly these lines' UTF-8 bytes (read a block at a time beside them)."""
    try:
        with open(path, "rb") as found:
            for line in lines:
                data = line.encode()
                if found.read(len(data)) != data:
                    return False
            return found.read(1) == b""
    except OSError:
        return False
