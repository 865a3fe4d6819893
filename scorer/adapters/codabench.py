"""Codabench / CodaLab scoring program: INPUT/ref holds the truth, INPUT/res the submission; scores go to OUTPUT.

Writes ``scores.json`` (Codabench) and ``scores.txt`` (CodaLab, ``key: value`` lines) with the leaderboard
keys ``score`` and one per type, and ``receipt.json`` (scorer.engine.receipt: hashes, never the truth); never a
file named ``metadata`` (the worker writes OUTPUT/metadata itself and leaves one in INPUT/res: it is skipped).
Uploaded zips are unpacked by the platform without flattening, so both folders are searched recursively.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from scorer.adapters.message import leaderboard_values, participant_message
from scorer.api import resolve_competition, score
from scorer.engine.reader import refusal
from scorer.engine.receipt import make_receipt, write_receipt
from scorer.engine.result import Result
from scorer.errors import SubmissionError, TruthError, UsageError
from scorer.file_formats import CSV_SUFFIXES, JSONL_SUFFIXES, PARQUET_SUFFIXES, FolderTooDeep, entries_below
from scorer.truth.impressions import IMPRESSIONS_SUFFIX
from scorer.truth.npz import COMPILED_SUFFIX
from scorer.truth.strings import STRINGS_SUFFIX
from scorer.wording import fixed

IGNORED_NAMES = {"metadata", "metadata.yaml", "Thumbs.db", ".DS_Store"}
TRUTH_SUFFIXES = JSONL_SUFFIXES + PARQUET_SUFFIXES + CSV_SUFFIXES
RECEIPT_NAME = "receipt.json"  # beside the scores: `scorer verify OUTPUT/receipt.json SUBMISSION --truth T` proves them later


@dataclass
class Outcome:
    exit_code: int  # 0 scored, 1 invalid submission
    message: str  # for the participant
    result: Result | None = None
    scores: dict[str, float] | None = None


def _ignored(relative: Path) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in relative.parts) or relative.name in IGNORED_NAMES


def entries_under(folder: Path) -> list[Path]:
    """Everything below `folder` that is not a folder (files, links, special files), skipping hidden ones,
    __MACOSX and platform metadata files. Links to folders are listed, never followed."""
    return sorted(path for path in entries_below(folder) if not _ignored(path.relative_to(folder)))


def files_under(folder: Path) -> list[Path]:
    """Regular files below `folder` (links to files included), skipping hidden ones, __MACOSX and platform metadata files."""
    return [path for path in entries_under(folder) if path.is_file()]


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def find_truth(ref: Path) -> Path:
    """The one truth file under ref/ (a compiled .truth.npz, .strings.npz or .impressions.npz wins over the source it came
    from)."""
    if not ref.is_dir():
        raise TruthError(f"no reference folder {ref} (the truth goes in the task's reference data)")
    try:
        files = files_under(ref)
    except FolderTooDeep as error:
        raise TruthError(f"the reference folder {ref} has {error}") from None
    for kind in ((COMPILED_SUFFIX, STRINGS_SUFFIX, IMPRESSIONS_SUFFIX), TRUTH_SUFFIXES):
        matches = [path for path in files if path.name.lower().endswith(kind)]
        if len(matches) == 1:
            if not _inside(matches[0], ref):
                raise TruthError(f"the truth file {matches[0].relative_to(ref)} is a link to a file outside {ref}")
            return matches[0]
        if matches:
            raise TruthError(f"several truth files under {ref}: {', '.join(str(m.relative_to(ref)) for m in matches)}; keep one")
    raise TruthError(f"no truth file under {ref} (expected {COMPILED_SUFFIX}, {STRINGS_SUFFIX}, {IMPRESSIONS_SUFFIX} or one of "
                     f"{', '.join(TRUTH_SUFFIXES)})")


def _not_a_plain_upload(path: Path, res: Path) -> str | None:
    """Why the uploaded entry `path` may not be read (scorer.engine.reader.refusal: a link, a hard link, a special
    file), or None. Its status is the entry's own (lstat): nothing a link points at is named or read.
    """
    try:
        why = refusal(path.lstat(), untrusted=True)
    except OSError as error:
        why = f"cannot be read ({error.strerror or error})"
    return f"{path.relative_to(res)} {why}" if why else None


def find_submission(res: Path) -> Path:
    """The one regular file the participant uploaded (at any depth of res/): no link, hard link or special file."""
    try:
        entries = entries_under(res) if res.is_dir() else []
    except FolderTooDeep as error:
        raise SubmissionError(f"the upload has {error}: upload one CSV (plain, .gz or .zip)") from None
    if not entries:
        raise SubmissionError("the upload holds no file: upload one CSV (plain, .gz or .zip)")
    if len(entries) > 1:
        names = ", ".join(str(path.relative_to(res)) for path in entries[:5]) + (", …" if len(entries) > 5 else "")
        raise SubmissionError(f"the upload holds {len(entries)} files ({names}): upload exactly one CSV (plain, .gz or .zip)")
    why = _not_a_plain_upload(entries[0], res)
    if why:
        raise SubmissionError(f"{why}: upload the CSV itself (plain, .gz or .zip)")
    return entries[0]


def _write_whole(path: Path, text: str) -> None:
    """Write the file whole or not at all: into a temporary name beside it, flushed to disk, then renamed over it.
    A failed write (a full disk) leaves neither an empty nor a half file, nor the temporary one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_scores(output: Path, scores: dict[str, float]) -> None:
    """scores.json and scores.txt, each written whole or not at all (the platform reads a file that is there)."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        _write_whole(output / "scores.json", json.dumps(scores, indent=2) + "\n")
        _write_whole(output / "scores.txt", "".join(f"{key}: {value:.10g}\n" for key, value in scores.items()))
    except OSError as error:
        uid = getattr(os, "getuid", lambda: 0)()
        hint = f" (this process runs as uid {uid}: run the grader image as its default user, root, or give the folder to uid {uid})" if uid else ""
        raise UsageError(f"cannot write the scores to {output}: {error.strerror or error}{hint}") from None


def grade(input_dir: str | Path, output_dir: str | Path, competition: str = "otto", config: str | None = None,
          max_seconds: float | None = None) -> Outcome:
    """Score INPUT/res against INPUT/ref strictly and write the scores; a bad truth or config raises.

    ``max_seconds`` replaces the config's time limit: keep it below the platform's own, so that the
    participant reads our message (S028) rather than the platform's kill.
    """
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    comp = resolve_competition(competition, config)
    if max_seconds is not None:
        comp = dataclasses.replace(comp, limits=dataclasses.replace(comp.limits, max_seconds=float(max_seconds)))
    truth_path = find_truth(input_dir / "ref")
    try:
        submission = find_submission(input_dir / "res")
    except SubmissionError as error:
        return Outcome(1, f"Submission rejected: {error}.")
    result = score(submission, truth_path, comp, strict=True, untrusted=True)
    if result.score is None:
        return Outcome(1, participant_message(result), result)
    scores = leaderboard_values(result)
    write_scores(output_dir, scores)
    try:
        write_receipt(output_dir / RECEIPT_NAME, make_receipt(result, comp, submission))
    except OSError as error:
        raise UsageError(f"cannot write the receipt to {output_dir}: {error.strerror or error}") from None
    return Outcome(0, "scored: " + ", ".join(f"{key} {fixed(value)}" for key, value in scores.items()), result, scores)
