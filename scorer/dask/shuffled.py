"""Partitioned scoring that scales: submission rows routed to their session's partition by Dask's shuffle, each
partition scored against its own part of the truth, statistics tree-reduced.

The flow, all of it tasks on the cluster; the client holds the task graph and the final statistics only:
1. the truth's partitioned dataset (scorer.dask.truth_parts), made once per truth content and partition count;
2. one task per part file reads it into Arrow (CSV: pyarrow's reader, every column text; Parquet: its two
   columns, labels as text or integer lists) and adds each row's session partition and its global order
   (part index << 40 | row within the part: parts in path order, then rows in file order);
3. Dask's shuffle (dask.dataframe set_index on the partition, divisions 0..P-1) brings every row to its partition;
4. one task per partition sorts its rows by their global order, scores them as a frame (scorer.api.score, the frame
   path: no CSV is written) against its truth partition only, and returns its statistics (scorer.dask.statistics);
5. the statistics of the reads and of the partitions are merged as a tree of tasks, `split_every` at a time.

Every session's rows are in one partition, in the order of the concatenated parts, so repeated rows keep the rule
of one file (the last one counts, lenient) and the exact sums make every figure equal the single-machine score of
the concatenated parts to the last bit. A row whose id the partitioner cannot read (no session integer where the
id pattern puts it) goes to partition 0, where the scorer names its problem.
"""

from __future__ import annotations

import logging
import math
import operator
import time
from pathlib import Path

import numpy as np

from scorer.dask.futures import failure, settle
from scorer.dask.statistics import ORDER_BITS, Statistics, merge, of_result, part_and_line, to_result
from scorer.engine.problems import Code
from scorer.errors import ScorerError, UsageError, one_line
from scorer.kernels import door
from scorer.spec.competition import Competition

ORDER, PARTITION, SESSION = "_order", "_partition", "_session"
BYTES_PER_PARTITION = 32 << 20  # default partition count: one per 32 MB of truth file, at least two per worker


def check_metrics(competition: Competition) -> None:
    """Statistics need totals that are ratios of row sums: catalogue and beyond-accuracy metrics are not; and the parts
    are split by the two-column layout, which the table reader's configs (several key columns, other separators) lack."""
    if competition.table_reader:
        raise UsageError(f"partitioned scoring splits two-column files by their first column; {competition.name!r} is read by the "
                         "table reader (its own key, columns or rules): score the concatenated parts")
    sizes = np.ones(1, np.int64)
    others = [str(metric) for metric in competition.metrics if metric.ratio_parts(np.zeros(1), sizes) is None]
    if others:
        raise UsageError(f"partitioned scoring sums each metric's row figures; {', '.join(others)} cannot be split by session: "
                         f"score the concatenated parts, or leave these metrics out (--metrics)")


def default_partitions(truth_path: str, workers: int) -> int:
    size = Path(truth_path).stat().st_size
    return max(2 * max(workers, 1), math.ceil(size / BYTES_PER_PARTITION))


def id_layout(competition: Competition) -> tuple[int, int]:
    """(bytes before the session, the byte after it) of the id pattern, as the partitioner reads an id."""
    pattern = competition.id_pattern
    before, after = pattern.split("{session}", 1)
    if "{" in before or not after or after[0] == "{":
        raise UsageError(f"partitioned scoring reads the session from ids such as {pattern!r}: the pattern must put a literal "
                         f"character after {{session}} and no field before it")
    return len(before.encode()), after.encode()[0]


def read_part(index: int, path: str, name: str, competition: Competition, parts: int, untrusted: bool):
    """(frame, statistics) of one part file: its rows with their partition, session and global order, and the problems
    of reading it (a part that cannot be read is S027 naming it: no score)."""
    import pandas as pd

    header = list(competition.header)
    stats = Statistics()
    try:
        table, bad_rows = _read_table(Path(path), header, untrusted)
        table = _as_text(table, header)
    except UsageError as error:
        table, bad_rows = None, []
        _problem(stats, Code.BAD_HEADER, f"{name}: {error}", (index, 1))
    except Exception as error:  # pyarrow and the file system raise many kinds; the message says what is wrong
        table, bad_rows = None, []
        _problem(stats, Code.UNREADABLE, f"{name}: cannot read the part: {one_line(error)}", (index, 0))
    for line, text in bad_rows:
        _problem(stats, Code.WRONG_FIELD_COUNT, f"{name}: line {line} does not have the {len(header)} fields "
                 f"{', '.join(header)}: {text[:80]!r}", (index, line))
    stats.counts = {"rows_read": len(bad_rows), "rows_with_errors": len(bad_rows)}
    if table is None:
        return _empty_frame(header), stats
    lines = _row_lines(table.num_rows, [line for line, _ in bad_rows])
    frame = _with_partitions(table, index, competition, parts, lines)
    return frame.to_pandas(types_mapper=pd.ArrowDtype), stats


def _row_lines(n_rows: int, skipped: list[int]) -> np.ndarray:
    """The line of each row read (line 1: the header), the lines of the `skipped` rows left out."""
    lines = np.arange(2, n_rows + len(skipped) + 2, dtype=np.int64)
    return np.setdiff1d(lines, np.asarray(skipped, np.int64), assume_unique=True)[:n_rows] if skipped else lines


def _as_text(table, header: list[str]):
    """Both columns as large_string, as every part's frame has them for the shuffle: integer lists joined by spaces
    (a list's text is what a CSV part would hold; its null stays null); a column of another type is cast, and one
    that cannot be is unreadable."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer import frames

    columns = []
    for name in header:
        column = table.column(name).combine_chunks()
        if frames.is_list(column.type):
            column = pc.binary_join(pc.cast(column, pa.list_(pa.large_string())), pa.scalar(" ", pa.large_string()))
        text = frames.strings(column)
        columns.append(text if text is not None else pc.cast(column, pa.large_string()))
    return pa.table(dict(zip(header, columns)))


def _problem(stats: Statistics, code: Code, message: str, where: tuple[int, int]) -> None:
    """Record one problem of reading a part (where: its part index and line) in the part's statistics."""
    from scorer.dask.statistics import Kept
    from scorer.engine.problems import Problem, kind

    entry = kind(code)  # none of these codes is a warning in lenient mode: the catalogue's severity holds
    key, severity = entry.code, entry.severity
    stats.problem_counts[key] = stats.problem_counts.get(key, 0) + 1
    stats.covered[key] = stats.covered.get(key, 0) + 1
    stats.kept.setdefault(key, []).append(Kept((where[0], where[1], key), Problem(key, severity, message, where[1] or None)))
    stats.fatal = stats.fatal or code in (Code.UNREADABLE, Code.BAD_HEADER)


def _read_table(path: Path, header: list[str], untrusted: bool):
    """The part as an Arrow table of the header's two columns, and the (line, text) of rows with another field count."""
    import pyarrow.parquet as pq

    from scorer.engine.reader import open_regular
    from scorer.file_formats import PARQUET_SUFFIXES

    fd, _ = open_regular(path, untrusted=untrusted)
    with open(fd, "rb") as opened:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            handle = pq.ParquetFile(opened)
            missing = [column for column in header if column not in handle.schema_arrow.names]
            if missing:
                raise UsageError(f"the Parquet part has no column {missing[0]!r} (expected {', '.join(header)})")
            return handle.read(columns=header), []
        return _read_csv(opened, header)


def _read_csv(opened, header: list[str]):
    import gzip
    import zipfile

    import pyarrow as pa
    import pyarrow.csv as csv

    head = opened.read(4)
    opened.seek(0)
    stream = opened
    if head[:2] == b"\x1f\x8b":
        stream = gzip.GzipFile(fileobj=opened)
    elif head == b"PK\x03\x04":
        archive = zipfile.ZipFile(opened)
        members = [info for info in archive.infolist() if not info.is_dir()]
        if len(members) != 1:
            raise UsageError(f"a zip part must hold one file, this one holds {len(members)}")
        stream = archive.open(members[0])
    bad: list[tuple[int, str]] = []

    def skip(row) -> str:
        bad.append((int(row.number) if row.number is not None else 0, row.text or ""))
        return "skip"

    table = csv.read_csv(stream, read_options=csv.ReadOptions(block_size=16 << 20, use_threads=False),  # one thread: rows know their lines
                         parse_options=csv.ParseOptions(invalid_row_handler=skip, ignore_empty_lines=False),
                         convert_options=csv.ConvertOptions(column_types={name: pa.large_string() for name in header},
                                                            strings_can_be_null=False, quoted_strings_can_be_null=False))
    if table.column_names != header:
        raise UsageError(f"the header is {','.join(table.column_names)!r}, expected {','.join(header)!r}")
    return table, bad


def _with_partitions(table, index: int, competition: Competition, parts: int, lines: np.ndarray | None = None):
    """The table with each row's partition, session (-1 when unreadable, and for string ids) and global order (from the
    rows' lines within the part; default: row r is line r + 2)."""
    import pyarrow as pa

    ids = table.column(competition.header[0]).combine_chunks()
    n = table.num_rows
    sessions, partition = np.full(n, -1, np.int64), np.zeros(n, np.int64)
    if n:
        data, offsets = _string_buffers(ids)
        if competition.shape == "id_type":
            skip, separator = id_layout(competition)
            door.kernel("session_partitions")(data, offsets, skip, separator, parts, sessions, partition)
        else:
            door.kernel("string_partitions")(data, offsets, parts, partition)
    order = (np.int64(index) << ORDER_BITS) | (np.arange(n, dtype=np.int64) if lines is None else lines - 2)
    return table.append_column(ORDER, pa.array(order)).append_column(PARTITION, pa.array(partition)).append_column(
        SESSION, pa.array(sessions))


def _string_buffers(ids) -> tuple[np.ndarray, np.ndarray]:
    """(bytes with 8 readable bytes after the last, int64 offsets) of a large_string array; a null reads as empty."""
    import pyarrow.compute as pc

    ids = pc.fill_null(ids, "") if ids.null_count else ids
    offsets = np.frombuffer(ids.buffers()[1], np.int64, len(ids) + 1, ids.offset * 8)
    data = np.zeros(int(offsets[-1]) + 8, np.uint8)
    raw = ids.buffers()[2]
    if raw is not None and offsets[-1] > 0:
        data[: offsets[-1]] = np.frombuffer(raw, np.uint8, int(offsets[-1]))
    return data, offsets


def _empty_frame(header: list[str]):
    import pandas as pd
    import pyarrow as pa

    schema = pa.schema([(header[0], pa.large_string()), (header[1], pa.large_string()), (ORDER, pa.int64()),
                        (PARTITION, pa.int64()), (SESSION, pa.int64())])
    return schema.empty_table().to_pandas(types_mapper=pd.ArrowDtype)


def score_partition(frame, index: int, folder: str, competition: Competition, names: list[str], strict: bool,
                    max_per_code: int) -> Statistics:
    """The statistics of partition `index`: its rows (any order) scored against its truth partition alone."""
    import pyarrow as pa

    from scorer.api import score
    from scorer.dask import truth_parts
    from scorer.engine.file_pass import SHOWN_IDS

    truth = truth_parts.load(folder, index, competition)
    frame = frame.reset_index(drop=True).sort_values(ORDER, kind="stable")
    order = frame[ORDER].to_numpy(np.int64)
    table = pa.Table.from_pandas(frame[list(competition.header)], preserve_index=False)
    result = score(table, truth, competition, strict=strict, max_per_code=max_per_code, threads=1)
    stats = of_result(result, competition, order, names)
    known = _known(frame, truth, competition)
    unknown = np.flatnonzero(~known)[:SHOWN_IDS]
    ids = frame[competition.header[0]]
    for row in unknown:
        if ids.iloc[row] is not None:
            part, line = part_and_line(int(order[row]))
            stats.unknown.append((part, line, _session_name(frame, row, competition), names[part]))
    return stats


def _known(frame, truth, competition: Competition) -> np.ndarray:
    """Per row: does its id name a session of this truth partition (or is it unreadable, which the scorer names)?"""
    import pyarrow as pa

    if competition.shape == "id_type":
        sessions = frame[SESSION].to_numpy(np.int64)
        return (sessions < 0) | np.isin(sessions, truth.sessions)
    ids = pa.array(frame[competition.header[0]].array).cast(pa.large_string())
    data, offsets = _string_buffers(ids)
    found = door.kernel("strings_known")(data, offsets, *truth.ids.arrays(), np.zeros(len(ids), np.bool_))
    return found | (offsets[1:] == offsets[:-1])


def _session_name(frame, row: int, competition: Competition):
    return int(frame[SESSION].iloc[row]) if competition.shape == "id_type" else str(frame[competition.header[0]].iloc[row])


def merge_all(statistics: list[Statistics], max_per_code: int) -> Statistics:
    out = statistics[0]
    for more in statistics[1:]:
        out = merge(out, more, max_per_code)
    return out


def score_partitioned(directory: str | Path, truth_path: str | Path, competition: Competition, client, *, parts: int | None = None,
                      strict: bool = False, max_per_code: int = 20, untrusted: bool = False, dataset_root: str | None = None,
                      split_every: int = 8, retries: int = 2, task=None, progress: bool = False):
    """Score the part files under `directory` as one submission on the cluster of `client` (see the module docstring);
    `progress`: a bar on stderr of the partitions scored."""
    import dask
    import dask.dataframe as dd

    from scorer.dask import truth_parts
    from scorer.dask.parts import list_parts

    started = time.monotonic()
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)  # its notes of each shuffle's start and end are not for users
    check_metrics(competition)
    if competition.shape == "id_type":
        id_layout(competition)
    root = Path(directory)
    paths = list_parts(root)
    names = [path.relative_to(root).as_posix() for path in paths]
    if len(paths) >= 1 << (63 - ORDER_BITS):
        raise UsageError(f"{len(paths):,} part files: at most {1 << (63 - ORDER_BITS):,} can be ordered")
    truth_path = str(Path(truth_path).resolve())
    workers = len(client.scheduler_info().get("workers", {})) or 1
    parts = parts or default_partitions(truth_path, workers)
    folder = truth_parts.ensure(client, truth_path, competition, parts, dataset_root)
    read = [dask.delayed(read_part, pure=True)(index, str(path.absolute()), name, competition, parts, untrusted)
            for index, (path, name) in enumerate(zip(paths, names))]
    meta = _empty_frame(list(competition.header))
    rows = dd.from_delayed([dask.delayed(operator.getitem)(piece, 0) for piece in read], meta=meta, verify_meta=False)
    routed = rows.set_index(PARTITION, divisions=list(range(parts)) + [parts - 1])
    partitions = [dask.delayed(task or score_partition, pure=True)(frame, index, folder, competition, names, strict, max_per_code)
                  for index, frame in enumerate(routed.to_delayed())]
    futures = client.compute([dask.delayed(operator.getitem)(piece, 1) for piece in read] + partitions, retries=retries)
    try:
        settle(futures[len(read) :], progress=progress, unit=" partitions")
        settle(futures[: len(read)])
        failed = next((error for error in map(failure, futures) if error is not None), None)
        if isinstance(failed, ScorerError):
            raise failed  # a bad truth (TruthError, exit 2) or config, raised in a task
        if failed is not None:  # a task failed on every attempt, or was cancelled
            total = Statistics()
            _problem(total, Code.UNREADABLE, f"the partitioned scoring could not finish on any attempt: {one_line(failed)}",
                     (0, 0))
        else:
            level = futures
            while len(level) > 1:  # a tree of merges on the cluster, split_every statistics at a time
                level = [client.submit(merge_all, level[i : i + split_every], max_per_code, pure=False, retries=retries)
                         for i in range(0, len(level), split_every)]
            total = level[0].result()
    finally:
        for future in futures:
            future.release()
    return to_result(total, competition, strict, max_per_code, str(directory), time.monotonic() - started)
