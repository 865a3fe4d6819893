"""The checks of `scorer audit` on a platform's files: a Kaggle solution (its labels are the truth, its Usage split)
and a Codabench or CodaLab bundle zip (every file competition.yaml names is there, its reference data is the
truth, and its scoring program runs on the sample as the platform's worker runs it)."""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from scorer.adapters.bundle_zip import MAX_YAML_BYTES, extract, load_yaml, open_zip, read_small
from scorer.adapters.codabench import find_truth
from scorer.adapters.kaggle import USAGE, HostVisibleError, parse_ids, truth_from_solution
from scorer.analytics.audit import check_split
from scorer.analytics.split import Split
from scorer.api import resolve_truth
from scorer.engine.checklist import Check, failed
from scorer.engine.receipt import truth_hash
from scorer.errors import ScorerError, UsageError
from scorer.file_formats import unreadable
from scorer.handed_back import read_json
from scorer.schema import ANY, ListOf, MapOf, Number, OneOf, Record, SchemaError, Text
from scorer.spec import MAX_SECONDS
from scorer.spec.competition import Competition
from scorer.truth.ids import USAGES, Truth

EXPORT = "scorer export kaggle-solution TRUTH -o solution.csv --public 0.3"
NAMED_KEYS = {"image", "terms", "file", "scoring_program", "ingestion_program", "reference_data", "input_data",
              "public_data", "starting_kit"}  # keys of competition.yaml (Codabench v2, CodaLab v1.5) that name a file or folder


def same_truth(one: Truth, other: Truth) -> bool:
    """The same sessions and items (the Usage column and the source aside)."""
    return truth_hash(dataclasses.replace(one, usage=None, source="")) == truth_hash(dataclasses.replace(other, usage=None, source=""))


# --- a Kaggle solution --------------------------------------------------------------------------------------
def solution_checks(path: str | Path, truth: Truth, comp: Competition) -> list[Check]:
    """Its labels are the truth's, and its Usage splits whole sessions into public and private."""
    import pandas as pd
    import pyarrow as pa

    why = unreadable(path, "solution")
    if why:
        raise UsageError(why)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read the solution {path}: {error}") from None
    id_column = comp.header[0]
    if id_column not in frame.columns or USAGE not in frame.columns:
        data = any(str(name).strip().isdigit() for name in frame.columns)  # a row of another file (a truth's ids): not shown
        return [failed("solution", "a first line of data, not column names (not shown)" if data else f"columns {', '.join(map(str, frame.columns))}",
                       f"write the solution with the columns {id_column}, {comp.header[1]}, {USAGE}: {EXPORT}")]
    try:
        labels = truth_from_solution(frame.drop(columns=USAGE), id_column, comp)
    except HostVisibleError as error:
        return [failed("solution", str(error), f"write the solution from the truth: {EXPORT}")]
    checks = [Check("solution", True, f"{len(frame):,} rows whose labels are the truth's") if same_truth(labels, truth) else
              failed("solution", f"its labels are not the truth's ({labels.n_sessions:,} sessions, the truth {truth.n_sessions:,})",
                     f"write the solution from the truth you audit: {EXPORT}")]
    ok, session, _ = parse_ids(pa.array(frame[id_column].to_numpy(object), pa.string()), comp)
    codes = frame[USAGE].str.lower().map({name: code for code, name in enumerate(USAGES)}).fillna(-1).to_numpy(np.int64)
    at = np.searchsorted(truth.sessions, session)
    known = ok & (codes >= 0) & (at < truth.n_sessions)
    known[known] &= truth.sessions[at[known]] == session[known]
    seen = np.zeros((truth.n_sessions, 3), bool)
    seen[at[known], codes[known]] = True
    overlap = int(np.count_nonzero(seen[:, 0] & seen[:, 1]))
    usage = np.where(seen[:, 0], 0, np.where(seen[:, 1], 1, 2)).astype(np.int8)
    checks.append(check_split(Split(usage, "Usage of the solution"), overlap))
    return checks


# --- a Codabench / CodaLab bundle ---------------------------------------------------------------------------
@dataclass
class Bundle:
    path: Path
    names: set[str]  # every entry of the zip
    spec: dict  # competition.yaml
    program: str | None  # the first task's (Codabench) or phase's (CodaLab) scoring program, as named
    reference: str | None
    limit: float | None  # that phase's execution_time_limit, seconds


_FILE = Text(longest=4096)
_PHASE = Record({}, {"execution_time_limit": Number(0, MAX_SECONDS, open=True), "scoring_program": _FILE,
                     "reference_data": _FILE}, others=True)
_COLUMNS = ListOf(Record({"key": Text(longest=256)}, others=True))
SPEC = Record({}, {  # the fields of competition.yaml the audit reads (Codabench v2, CodaLab v1.5); others are left alone
    "tasks": ListOf(Record({}, {"scoring_program": _FILE, "reference_data": _FILE}, others=True)),
    "phases": OneOf("a list or a mapping of phases", ListOf(_PHASE), MapOf(_PHASE)),
    "leaderboards": ListOf(Record({}, {"columns": _COLUMNS}, others=True)),
    "leaderboard": Record({}, {"columns": MapOf(ANY)}, others=True),
}, others=True)


def read_bundle(path: str | Path) -> Bundle:
    """The bundle's competition.yaml (checked against SPEC) and entries; UsageError when it is no zip (a regular file),
    a member is over a limit (scorer.adapters.bundle_zip), or it has no competition.yaml."""
    try:
        import yaml  # noqa: F401  (bundle_zip.load_yaml's)
    except ImportError:
        raise UsageError("auditing a bundle needs PyYAML: pip install pyyaml") from None
    label = f"the bundle {path}"
    with open_zip(path, label) as archive:
        names = set(archive.namelist())
        if "competition.yaml" not in names:
            raise UsageError(f"the bundle {path} has no competition.yaml at its top (zip the bundle's contents, not its folder)")
        spec = load_yaml(read_small(archive, "competition.yaml", label), "the bundle's competition.yaml")
    if not isinstance(spec, dict):
        raise UsageError("the bundle's competition.yaml holds no mapping")
    try:
        SPEC.check(spec)
    except SchemaError as error:
        raise UsageError(f"the bundle's competition.yaml: {error}") from None
    tasks = spec.get("tasks") or []
    phases = spec.get("phases") or []
    phases = list(phases.values()) if isinstance(phases, dict) else phases
    first_phase = phases[0] if phases else {}
    first = tasks[0] if tasks else first_phase
    return Bundle(Path(path), names, spec, first.get("scoring_program"), first.get("reference_data"),
                  first_phase.get("execution_time_limit"))


def named_files(spec) -> list[str]:
    """Every file or folder name competition.yaml gives: the NAMED_KEYS' values and the html pages (CodaLab)."""
    found: list[str] = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "html" and isinstance(value, dict):
                found += [page for page in value.values() if isinstance(page, str)]
            elif key in NAMED_KEYS and isinstance(value, str):
                found.append(value)
            else:
                found += named_files(value)
    elif isinstance(spec, list):
        for value in spec:
            found += named_files(value)
    return found


def _present(name: str, names: set[str]) -> bool:
    name = str(PurePosixPath(name))
    return name in names or any(entry.startswith(name + "/") for entry in names)


def file_checks(bundle: Bundle) -> Check:
    """Every file competition.yaml names is in the zip."""
    named = sorted(set(named_files(bundle.spec)))
    missing = [name for name in named if not _present(name, bundle.names)]
    if missing:
        return failed("bundle files", f"competition.yaml names {len(named)} files; missing: {', '.join(missing)}",
                      "add them to the bundle (python bundles/build.py builds a complete one)")
    return Check("bundle files", True, f"all {len(named)} files competition.yaml names are there")


def _extract(bundle: Bundle, name: str, into: Path) -> None:
    """Unpack a folder of the bundle, or a zip inside it (CodaLab's scoring_program.zip), into `into`, each member
    streamed to disk; the inner zip is checked as the bundle is (scorer.adapters.bundle_zip)."""
    into.mkdir(parents=True, exist_ok=True)
    name = str(PurePosixPath(name))
    label = f"the bundle {bundle.path}"
    with open_zip(bundle.path, label) as archive:
        if name in bundle.names and name.endswith(".zip"):
            packed = into.parent / f".{into.name}.zip"
            extract(archive, archive.getinfo(name), packed)
            try:
                with open_zip(packed, f"the bundle's {name}") as inner:
                    _unpack(inner, inner.infolist(), "", into)
            finally:
                packed.unlink(missing_ok=True)
        else:
            _unpack(archive, [info for info in archive.infolist() if info.filename.startswith(name + "/")], name + "/", into)


def _unpack(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], prefix: str, into: Path) -> None:
    """Stream members (named prefix + a relative name) to `into`, none outside it."""
    root = into.resolve()
    for info in members:
        target = (into / info.filename[len(prefix):]).resolve()
        if not target.is_relative_to(root):
            raise UsageError(f"the bundle's {info.filename} would unpack outside its folder")
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            extract(archive, info, target)
        except (zipfile.BadZipFile, zlib.error, EOFError) as error:
            raise UsageError(f"the bundle's {info.filename} cannot be unpacked: {error}") from None


def reference_check(bundle: Bundle, truth: Truth, comp: Competition, workdir: Path) -> Check:
    """The bundle's reference data is the truth audited (not the demo truth)."""
    if not bundle.reference or not _present(bundle.reference, bundle.names):
        return failed("bundle truth", "no reference data in the bundle", "build the bundle with --truth YOUR_TRUTH")
    folder = workdir / "reference"
    _extract(bundle, bundle.reference, folder)
    try:
        found = resolve_truth(find_truth(folder), comp)
    except ScorerError as error:
        return failed("bundle truth", f"its reference data cannot be read: {error}", "build the bundle with --truth YOUR_TRUTH")
    if not same_truth(found, truth):
        return failed("bundle truth", f"its reference data holds another truth ({found.n_sessions:,} sessions, the audited "
                      f"one {truth.n_sessions:,})", "build the bundle with --truth YOUR_TRUTH (python bundles/build.py ... --truth)")
    return Check("bundle truth", True, f"its reference data is the audited truth ({truth.n_sessions:,} sessions)")


def leaderboard_keys(spec: dict) -> list[str]:
    """The score keys the leaderboard shows: Codabench's leaderboards[].columns[].key, CodaLab's leaderboard.columns."""
    board = spec.get("leaderboard")
    if isinstance(board, dict) and isinstance(board.get("columns"), dict):
        return list(board["columns"])
    return [column["key"] for entry in spec.get("leaderboards") or [] if isinstance(entry, dict)
            for column in entry.get("columns") or [] if isinstance(column, dict) and "key" in column]


def program_check(bundle: Bundle, submission: Path, workdir: Path, limit: float) -> Check:
    """Run the bundle's scoring program on the submission as the worker does: its command after the image's
    ENTRYPOINT `scorer`, in the program folder, with the reference data and the upload in input/ref and input/res."""
    if not bundle.program or not _present(bundle.program, bundle.names):
        return failed("bundle program", "no scoring program in the bundle", "add scoring_program/ (python bundles/build.py)")
    run = workdir / "run"
    program, ref, res, output = run / "program", run / "input" / "ref", run / "input" / "res", run / "output"
    _extract(bundle, bundle.program, program)
    if bundle.reference and _present(bundle.reference, bundle.names):
        _extract(bundle, bundle.reference, ref)
    res.mkdir(parents=True, exist_ok=True)
    output.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(submission, res / submission.name)
    metadata = program / ("metadata.yaml" if (program / "metadata.yaml").is_file() else "metadata")
    try:
        command = _command(metadata)
    except (OSError, UsageError) as error:
        return failed("bundle program", f"the scoring program has no metadata.yaml (or metadata) with a command ({error})",
                      "add scoring_program/metadata.yaml: command: codabench /app/input /app/output --competition NAME")
    for old, new in (("/app/input", run / "input"), ("/app/output", output), ("/app/program", program),
                     ("$input", run / "input"), ("$output", output), ("$program", program)):
        command = command.replace(old, str(new))
    try:
        argv = [sys.executable, "-m", "scorer", *shlex.split(command)]
    except ValueError as error:
        return failed("bundle program", f"its command cannot be split into words ({error})", "quote the command's words in pairs")
    try:
        done = subprocess.run(argv, cwd=program, capture_output=True, encoding="utf-8", errors="replace", timeout=limit,
                              env=dict(os.environ))
    except subprocess.TimeoutExpired:
        return failed("bundle program", f"did not finish within {limit:g} s", "see the time check")
    last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [""])[-1]
    if done.returncode != 0:
        return failed("bundle program", f"`scorer {command}` exited {done.returncode}: {last}",
                      "make the sample valid for the bundle's truth and config, or fix the program's command")
    try:
        scores = read_json(output / "scores.json", "scores.json", SCORES, MAX_YAML_BYTES)
    except UsageError as error:
        return failed("bundle program", f"it wrote no scores.json the platform can read: {error}",
                      "the command must be `codabench INPUT OUTPUT ...`")
    missing = [key for key in leaderboard_keys(bundle.spec) if key not in scores]
    if missing:
        return failed("bundle program", f"its scores lack the leaderboard's keys {', '.join(missing)}",
                      "name the leaderboard columns after the scores: score and one per type")
    return Check("bundle program", True, f"ran on {submission.name}: " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))


SCORES = MapOf(Number(infinite=True))  # what the platform reads from scores.json: a number per leaderboard key


def _command(metadata: Path) -> str:
    """The command of the scoring program's metadata.yaml (a small file, loaded as competition.yaml is)."""
    with open(metadata, "rb") as handle:
        data = handle.read(MAX_YAML_BYTES + 1)
    found = load_yaml(data, f"its {metadata.name}")
    if not isinstance(found, dict) or not isinstance(found.get("command"), str):
        raise UsageError(f"its {metadata.name} holds no command text")
    return found["command"]
