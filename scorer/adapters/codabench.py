"""Codabench / CodaLab scoring program: INPUT/ref holds the truth, INPUT/res the submission; scores go to OUTPUT.

Writes ``scores.json`` (Codabench) and ``scores.txt`` (CodaLab, ``key: value`` lines) with the leaderboard
keys ``score`` and one per type; never a file named ``metadata``. Uploaded zips are unpacked by the
platform without flattening, so both folders are searched recursively.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from scorer.adapters.message import leaderboard_values, participant_message
from scorer.api import resolve_competition, score
from scorer.errors import SubmissionError, TruthError, UsageError
from scorer.result import Result
from scorer.string_truth import STRINGS_SUFFIX
from scorer.truth import COMPILED_SUFFIX

IGNORED_NAMES = {"metadata", "metadata.yaml", "Thumbs.db", ".DS_Store"}
TRUTH_SUFFIXES = (".jsonl", ".json", ".ndjson", ".parquet", ".pq", ".csv")


@dataclass
class Outcome:
    exit_code: int  # 0 scored, 1 invalid submission
    message: str  # for the participant
    result: Result | None = None
    scores: dict[str, float] | None = None


def files_under(folder: Path) -> list[Path]:
    """Regular files below `folder`, skipping hidden ones, __MACOSX and platform metadata files."""
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") or part == "__MACOSX" for part in parts) or path.name in IGNORED_NAMES:
            continue
        if path.is_file():
            found.append(path)
    return found


def find_truth(ref: Path) -> Path:
    """The one truth file under ref/ (a compiled .truth.npz or .strings.npz wins over the source it came from)."""
    if not ref.is_dir():
        raise TruthError(f"no reference folder {ref} (the truth goes in the task's reference data)")
    files = files_under(ref)
    for kind in ((COMPILED_SUFFIX, STRINGS_SUFFIX), TRUTH_SUFFIXES):
        matches = [path for path in files if path.name.lower().endswith(kind)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise TruthError(f"several truth files under {ref}: {', '.join(str(m.relative_to(ref)) for m in matches)}; keep one")
    raise TruthError(f"no truth file under {ref} (expected {COMPILED_SUFFIX}, {STRINGS_SUFFIX} or one of {', '.join(TRUTH_SUFFIXES)})")


def find_submission(res: Path) -> Path:
    """The one file the participant uploaded (at any depth of res/)."""
    files = files_under(res) if res.is_dir() else []
    if not files:
        raise SubmissionError("the upload holds no file: upload one CSV (plain, .gz or .zip)")
    if len(files) > 1:
        names = ", ".join(str(path.relative_to(res)) for path in files[:5]) + (", …" if len(files) > 5 else "")
        raise SubmissionError(f"the upload holds {len(files)} files ({names}): upload exactly one CSV (plain, .gz or .zip)")
    return files[0]


def write_scores(output: Path, scores: dict[str, float]) -> None:
    try:
        output.mkdir(parents=True, exist_ok=True)
        (output / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
        (output / "scores.txt").write_text("".join(f"{key}: {value:.10g}\n" for key, value in scores.items()))
    except OSError as error:
        hint = " (the grader image runs as uid 1000: build it with --build-arg RUNTIME_USER=0 for a root-owned output folder)"
        raise UsageError(f"cannot write the scores to {output}: {error.strerror or error}{hint if getattr(os, 'getuid', lambda: 1)() else ''}") from None


def grade(input_dir: str | Path, output_dir: str | Path, competition: str = "otto", config: str | None = None) -> Outcome:
    """Score INPUT/res against INPUT/ref strictly and write the scores; a bad truth or config raises."""
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    comp = resolve_competition(competition, config)
    truth_path = find_truth(input_dir / "ref")
    try:
        submission = find_submission(input_dir / "res")
    except SubmissionError as error:
        return Outcome(1, f"Submission rejected: {error}.")
    result = score(submission, truth_path, comp, strict=True)
    if result.score is None:
        return Outcome(1, participant_message(result), result)
    scores = leaderboard_values(result)
    write_scores(output_dir, scores)
    return Outcome(0, "scored: " + ", ".join(f"{key} {value:.6f}" for key, value in scores.items()), result, scores)
