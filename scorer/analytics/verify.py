"""Verify a score receipt (scorer.engine.receipt): score the submission again and say what, if anything, differs.

The checks, one per thing a receipt vouches for: version (the scorer's), config (the competition's canonical
config), truth and submission (content hashes) and figures (the score, every metric, and the split and
bootstrap figures the receipt holds, to the last bit).
"""

from __future__ import annotations

import json
import os

from scorer.api import score
from scorer.engine.checklist import Check, failed, warned
from scorer.engine.receipt import WHAT, differences, make_receipt
from scorer.engine.receipt_schema import RECEIPT
from scorer.errors import SubmissionError, UsageError
from scorer.handed_back import TooDeep, checked, json_lines, opened, parse

FIXES = {
    "version": "run the scorer version the receipt names (pip install recsys-scorer==VERSION, or its image)",
    "config": "pass the competition config the score was made with (--config PATH)",
    "truth": "pass the truth the score was made with (--truth)",
    "submission": "pass the file that was scored, byte for byte",
    "figures": "the same inputs give other figures: report it (a scorer bug), unless another check failed too",
}
MAX_RECEIPT_BYTES = 64 << 20  # a receipt, or a score's JSON holding one; a longer file is read as JSON lines
MAX_RECORD_BYTES = 64 << 20  # one line of `scorer grade -o`


def receipt_from(data, submission: str, where: str) -> dict:
    """The receipt in a parsed document: a receipt itself, a score JSON or grade record holding one, or a list of
    grade records (the one of the file `submission`: record_of), checked against RECEIPT. where: the file, in messages."""
    if isinstance(data, list):
        data = record_of([record for record in data if isinstance(record, dict)], submission, len(data))
    if isinstance(data, dict) and isinstance(data.get("receipt"), dict):
        data = data["receipt"]
    if not isinstance(data, dict) or "receipt" not in data or "figures" not in data:
        raise UsageError("no receipt found: give receipt.json, a `scorer score --format json` output or a `scorer grade` record")
    return checked(data, RECEIPT, where, "receipt")


def read_receipt(path: str, submission: str) -> dict:
    """The receipt in a file (a JSON document, or the JSON lines of `scorer grade -o`) for the file `submission`: a
    regular file, read within bounds (scorer.handed_back), checked against RECEIPT."""
    with opened(path, "receipt") as (fd, status):
        if status.st_size <= MAX_RECEIPT_BYTES:
            try:
                return receipt_from(parse(os.pread(fd, MAX_RECEIPT_BYTES, 0)), submission, path)
            except TooDeep as error:
                raise UsageError(f"the receipt {path} {error}") from None
            except ValueError:
                pass  # not one document: JSON lines
        records, count = [], 0
        for line, record, error in json_lines(fd, MAX_RECORD_BYTES, f"receipt {path}"):
            if error is not None:
                raise UsageError(f"the receipt {path} is not JSON (nor JSON lines): line {line.number} {error}")
            count += 1
            if isinstance(record, dict) and (_named(record, os.path.basename(submission)) or _at(record, submission)):
                records.append(record)  # memory: this file's records only
    return receipt_from(record_of(records, submission, count), submission, path)


def record_of(records: list[dict], submission: str, count: int) -> dict:
    """The grade record of the file `submission` among `records` (`scorer grade -o`'s, in the order written, of `count`
    in all). Its own: the records whose "path" is this file under any spelling (scorer.file_identity), else those of
    its file name (the file was moved); of those, the newest whose receipt holds these bytes' content key (the newest
    record of a (path, content key) counts), else, when they all name one file, the newest (it was graded before it
    changed: verify says the submission differs). UsageError when none is this file's, or several files' and none of
    these bytes."""
    from scorer.engine.receipt import submission_hash
    from scorer.file_identity import identity

    name = os.path.basename(submission)
    mine = [r for r in records if _at(r, submission)]
    pool = mine or [r for r in records if _named(r, name)]
    if not pool:
        raise UsageError(f"the receipt file holds {count:,} records, none of them for {name!r}: give the record of this submission")
    key = submission_hash(submission)
    same_bytes = [r for r in pool if isinstance(r.get("receipt"), dict) and r["receipt"].get("submission") == key]
    if same_bytes:
        return same_bytes[-1]
    if mine or len({identity(r.get("path") or r.get("file", "")) for r in pool}) == 1:
        return pool[-1]
    raise UsageError(f"the receipt file holds {len(pool):,} records of files named {name!r} from other folders, none of "
                     "these bytes: give the record of this submission")


def _at(record: dict, submission: str) -> bool:
    """Whether the record's "path" is the file `submission`, however either is spelled."""
    from scorer.file_identity import same_file

    return isinstance(record.get("path"), str) and same_file(record["path"], submission)


def _named(record: dict, name: str) -> bool:
    return os.path.basename(str(record.get("file", ""))) == name


def rescore(recorded: dict, submission, truth, competition, threads: int = 2) -> dict:
    """A receipt made now, from the same mode, split and bootstrap settings as the recorded one."""
    from scorer.analytics.split import resolve_split
    from scorer.analytics.summary import analyse

    result = score(submission, truth, competition, strict=recorded.get("mode") == "strict", threads=threads)
    if result.unread is not None:  # nothing to compare: the reason, not a hash of None
        raise SubmissionError(result.unread)
    split_settings, bootstrap_settings = recorded.get("split"), recorded.get("bootstrap")
    analytics = None
    if (split_settings or bootstrap_settings) and result.score is not None and result.slot_values is not None:
        split = None
        if split_settings:
            split = resolve_split(result.truth, split_settings.get("public"), int(split_settings.get("seed", 0)))
        boot = bootstrap_settings or {}
        analytics = analyse(result, result.truth, n_bootstrap=int(boot.get("resamples", 0)), seed=int(boot.get("seed", 0)),
                            level=float(boot.get("level", 0.95)), split=split, threads=threads)
    now = make_receipt(result, competition, submission, split=split_settings, bootstrap=bootstrap_settings, analytics=analytics)
    return json.loads(json.dumps(now))  # as the recorded one was read: tuples become lists


def verify(recorded: dict, submission, truth, competition, threads: int = 2) -> list[Check]:
    """One check per thing a receipt vouches for (WHAT), each naming what differs and the fix."""
    now = rescore(recorded, submission, truth, competition, threads)
    found = differences(recorded, now)
    same = {
        "version": f"scorer {now['scorer']['version']} (kernels: {now['scorer']['kernels']}; "
                   f"the receipt's: {recorded.get('scorer', {}).get('kernels')})",
        "config": f"{now['competition']['name']}, {now['competition']['config']}",
        "truth": now["truth"],
        "submission": now["submission"],
        "figures": f"score {now['figures']['score']!r} and {sum(map(len, now['figures']['metrics'].values()))} metric figures"
                   + "".join(f", the {key} figures" for key in ("split", "bootstrap") if key in now["figures"]),
    }
    return [_verdict(what, found, same[what]) for what in WHAT]


def _verdict(what: str, found: dict[str, str], same: str) -> Check:
    """Passed; failed with its fix; or, for another scorer version whose figures agree, a warning."""
    if what not in found:
        return Check(what, True, same)
    if what == "version" and "figures" not in found:
        return warned(what, found[what], "the figures agree all the same; to prove them with the same code, "
                                         + FIXES[what])
    return failed(what, found[what], FIXES[what])
