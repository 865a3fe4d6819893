"""The records of `scorer grade -o` that `scorer leaderboard --results` and `scorer ladder --results` read."""

from __future__ import annotations


def read_records(path: str) -> list[dict]:
    """The records of `scorer grade -o`, one per file: its last final record (scored or invalid, scorer.dask.results_file;
    a resumed run may repeat a file), else its last record (failed or retryable: listed unranked); a last line cut
    short by a killed run is left out, as grade repairs it. The file is read as untrusted input (scorer.handed_back:
    a regular file, one bounded line at a time); a record whose fields are not a grade record's, or whose score is not
    a finite number, is listed unranked with the reason."""
    from scorer.dask.results_file import FINAL, MAX_RECORD_BYTES, finite_score, record_problem, status
    from scorer.errors import UsageError
    from scorer.file_identity import identity
    from scorer.handed_back import json_lines, opened
    from scorer.schema import shown

    records: dict[tuple, dict] = {}
    final: dict[tuple, dict] = {}
    with opened(path, "--results file") as (fd, _):
        for line, record, error in json_lines(fd, MAX_RECORD_BYTES, f"--results {path}"):
            where = f"--results {path} line {line.number}"
            if error is not None:
                if not line.ended:  # no newline after it: a write cut short
                    continue
                raise UsageError(f"{where} {error}")
            if not isinstance(record, dict) or not isinstance(record.get("file"), str):
                raise UsageError(f"{where}: a grade record needs a \"file\" name")
            key = identity(record["path"] if isinstance(record.get("path"), str) else record["file"])  # its file, however spelled
            why = record_problem(record) or (None if finite_score(record) or record.get("score") is None
                                             else f"its score is {shown(record['score'])}, not a finite number")
            if why:
                record = {"file": record["file"], "score": None, "status": "failed", "error": f"line {line.number} is no grade record: {why}"}
            records[key] = record
            if status(record) in FINAL:
                final[key] = record
    return [final.get(name, record) for name, record in records.items()]
