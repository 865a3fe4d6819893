"""The truth split into session partitions once: a compiled, content-keyed dataset that every run and worker reuses.

The one partition function: session s belongs to partition splitmix64(s) mod P (scorer.kernels.hashing.partition_of); a
string id (the string shapes) to splitmix64(hash_bytes(id)) mod P, hash_bytes being the string tables' hash.
The dataset of a truth file for P partitions is a folder named by the file's content key (scorer.truth.cache), its
types and P, holding `part-00000.truth.npz` ... (each a compiled truth of its sessions, Truth.save) and
`manifest.json`. It is made once, by one task that reads the whole truth (from the compiled cache), into a
temporary folder renamed into place; later runs find it by the content key. A task then loads only its own
partition, checked as any compiled truth is (scorer.truth.compiled.read_compiled: in full the first time, a memo
after). The default place is the private cache folder ($SCORER_CACHE_DIR/partitioned); on a cluster, give a
folder every worker sees (the shared file system).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

from scorer.kernels import door
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth, offsets

HASH = "splitmix64(session) mod parts; string ids: splitmix64(hash_bytes(id)) mod parts (scorer.kernels.strings)"
KEEP = 4  # partitions kept per worker process
_loaded: OrderedDict = OrderedDict()


def part_file(folder: str | Path, index: int) -> Path:
    return Path(folder) / f"part-{index:05d}.truth.npz"


def dataset_folder(truth_path: str, competition: Competition, parts: int, root: str | Path | None = None) -> Path:
    """Where the dataset of this truth's content, types and partition count lives."""
    from scorer.private_files import cache_dir
    from scorer.truth.cache import handle_key
    from scorer.truth.npz import CACHE_VERSION

    with open(truth_path, "rb") as handle:  # read in blocks, not mapped: a worker's memory holds no truth-sized mapping
        content = handle_key(handle, mapped=False)
    if content is None:
        from scorer.errors import TruthError

        raise TruthError(f"cannot read the truth {truth_path}")
    name = f"{content}-{competition.shape}-{'+'.join(competition.types)}-p{parts}-v{CACHE_VERSION}"
    return Path(root if root is not None else cache_dir() / "partitioned") / name


def partitions_of_truth(truth: Truth, parts: int) -> np.ndarray:
    """Each of the truth's sessions' (or string ids') partition."""
    from scorer.truth.strings import StringTruth

    if isinstance(truth, StringTruth):
        ids = truth.ids
        offsets = np.append(ids.starts, ids.ends[-1:]) if len(ids.starts) else np.zeros(1, np.int64)
        if len(ids.starts) and not np.array_equal(ids.starts[1:], ids.ends[:-1]):  # not packed end to end: one by one
            return np.array([door.kernel("string_partitions")(ids.keys, np.array([a, b], np.int64), parts, np.empty(1, np.int64))[0]
                             for a, b in zip(ids.starts, ids.ends)], np.int64)
        return door.kernel("string_partitions")(ids.keys, offsets, parts, np.empty(len(ids.starts), np.int64))
    return door.kernel("partition_of_ids")(truth.sessions, parts, np.empty(truth.n_sessions, np.int64))


def split_truth(truth: Truth, parts: int) -> list[Truth]:
    """The truth's sessions in `parts` partitions by the partition function, each a Truth of its own (a string truth
    keeps its whole item table in each: items are named by it)."""
    from dataclasses import replace

    from scorer.truth.strings import StringTable, StringTruth

    n_types = len(truth.types)
    partition = partitions_of_truth(truth, parts)
    out = []
    for index in range(parts):
        chosen = np.flatnonzero(partition == index)
        slots = (chosen[:, None] * n_types + np.arange(n_types)).ravel()
        starts, sizes = truth.indptr[slots], truth.indptr[slots + 1] - truth.indptr[slots]
        indptr = offsets(sizes, truth.source)
        take = np.repeat(starts - indptr[:-1], sizes) + np.arange(indptr[-1])
        source = f"{truth.source} (partition {index} of {parts})"
        if isinstance(truth, StringTruth):
            names = StringTable.of([truth.ids.name(int(i)) for i in chosen])
            grades = None if truth.grades is None else truth.grades[take]
            out.append(replace(truth, sessions=np.arange(len(chosen), dtype=np.int64), indptr=indptr, items=truth.items[take],
                               source=source, usage=None, grades=grades, ids=names))
            continue
        usage = None if truth.usage is None else truth.usage[chosen]
        out.append(Truth(truth.types, truth.sessions[chosen], indptr, truth.items[take], source, usage))
    return out


def build(truth_path: str, competition: Competition, parts: int, root: str | None = None) -> str:
    """The dataset's folder, made if it is not there yet (run as one task: it reads the whole truth once)."""
    from scorer.api import resolve_truth

    folder, scratch = _start(truth_path, competition, parts, root)
    if scratch is None:
        return folder
    try:
        truth = resolve_truth(truth_path, competition)
        sessions = []
        for index, part in enumerate(split_truth(truth, parts)):
            part.save(part_file(scratch, index))
            sessions.append(part.n_sessions)
        return _finish(scratch, folder, parts, competition, truth_path, sessions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def load(folder: str, index: int, competition: Competition) -> Truth:
    """Partition `index` of the dataset in `folder`, read (and checked) at most once per process while kept."""
    from scorer.truth.compiled import read_compiled
    from scorer.truth.strings import read_compiled_strings

    key = (folder, index, competition.types, competition.shape)
    if key in _loaded:
        _loaded.move_to_end(key)
        return _loaded[key]
    path = part_file(folder, index)
    truth = read_compiled(path, competition.types) if competition.shape == "id_type" else read_compiled_strings(path, competition.shape)
    _loaded[key] = truth
    while len(_loaded) > KEEP:
        _loaded.popitem(last=False)
    return truth


RANGE_BYTES = 64 << 20  # a JSONL truth is split in byte ranges of this size, one task each


def ensure(client, truth_path: str, competition: Competition, parts: int, root: str | None = None) -> str:
    """The dataset's folder, made on the cluster if it is not there yet; the client reads nothing of the truth (its
    content key is worked out by a task). An OTTO JSONL truth is split by tasks that each hold one byte range (they
    write each partition's lines of their range to a shard), then one task per partition compiles its shards: no
    task holds more than its share. Any other truth, or a JSONL truth that a partition's task cannot read (so that
    the error names the truth file's own line), is split by one task that reads it whole (build)."""
    from scorer.file_formats import format_of

    folder, scratch = client.submit(_start, truth_path, competition, parts, root, pure=False).result()
    if scratch is None:
        return folder
    try:
        if format_of(truth_path) == "jsonl" and competition.shape == "id_type":
            size = os.path.getsize(truth_path)
            ranges = [(start, min(start + RANGE_BYTES, size)) for start in range(0, size, RANGE_BYTES)] or [(0, 0)]
            shards = client.map(shard_range, [truth_path] * len(ranges), ranges, range(len(ranges)), [scratch] * len(ranges),
                                [parts] * len(ranges), pure=False)
            client.gather(shards)
            compiled = client.map(compile_partition, [scratch] * parts, range(parts), [len(ranges)] * parts,
                                  [competition] * parts, [truth_path] * parts, pure=False)
            sessions = client.gather(compiled, errors="skip")
            if len(sessions) == parts:
                return client.submit(_finish, scratch, folder, parts, competition, truth_path, sessions, pure=False).result()
    finally:
        client.submit(shutil.rmtree, scratch, ignore_errors=True, pure=False).result()
    return client.submit(build, truth_path, competition, parts, root, pure=False).result()


def _start(truth_path: str, competition: Competition, parts: int, root: str | None) -> tuple[str, str | None]:
    """(the dataset's folder, None) when it is made; else (the folder, a new scratch folder beside it to make it in)."""
    folder = dataset_folder(truth_path, competition, parts, root)
    if (folder / "manifest.json").is_file():
        return str(folder), None
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return str(folder), tempfile.mkdtemp(prefix=".partial-", dir=folder.parent)


def shard_range(truth_path: str, span: tuple[int, int], index: int, scratch: str, parts: int) -> int:
    """Write the lines of the truth that start in byte range `span` to one shard per partition
    (`shard-<partition>-<index>.jsonl` in scratch); returns the number of lines."""
    data = _whole_lines(truth_path, *span)
    n_lines = int(np.count_nonzero(data == 10)) + 1
    starts, ends, sessions = (np.empty(n_lines, np.int64) for _ in range(3))
    n = door.kernel("jsonl_sessions")(data, len(data), starts, ends, sessions)
    starts, ends, sessions = starts[:n], ends[:n], sessions[:n]
    partition = door.kernel("partition_of_ids")(sessions, parts, np.empty(n, np.int64))
    out = np.empty(len(data) + n, np.uint8)
    for part in range(parts):
        chosen = np.flatnonzero(partition == part)
        size = door.kernel("gather_lines")(data, starts, ends, chosen, out)
        (Path(scratch) / f"shard-{part:05d}-{index:05d}.jsonl").write_bytes(out[:size].tobytes())
    return n


def _whole_lines(path: str, start: int, end: int) -> np.ndarray:
    """The bytes of the lines whose first byte lies in [start, end)."""
    with open(path, "rb") as handle:
        if start > 0:  # the line that starts before `start` belongs to the range before
            handle.seek(start - 1)
            head = handle.read(end - start + 1)
            cut = head.find(b"\n")
            head = head[cut + 1 :] if cut >= 0 else b""
        else:
            head = handle.read(end - start)
        tail = b""
        if head and not head.endswith(b"\n"):  # finish the last line past `end`
            while True:
                more = handle.read(1 << 16)
                if not more:
                    break
                cut = more.find(b"\n")
                if cut >= 0:
                    tail += more[: cut + 1]
                    break
                tail += more
    return np.frombuffer(head + tail, np.uint8)


def compile_partition(scratch: str, part: int, n_ranges: int, competition: Competition, truth_path: str) -> int:
    """Compile partition `part` from its shards (in range order) into its part file in scratch; returns its sessions."""
    from scorer.truth.ids import read_jsonl

    joined = Path(scratch) / f"partition-{part:05d}.jsonl"
    with open(joined, "wb") as out:
        for index in range(n_ranges):
            shard = Path(scratch) / f"shard-{part:05d}-{index:05d}.jsonl"
            out.write(shard.read_bytes())
            shard.unlink()
    truth = read_jsonl(joined, competition.types)
    joined.unlink()
    truth = Truth(truth.types, truth.sessions, truth.indptr, truth.items, f"{truth_path} (partition {part})", truth.usage)
    truth.save(part_file(scratch, part))
    return truth.n_sessions


def _finish(scratch: str | Path, folder: str | Path, parts: int, competition: Competition, truth_path: str, sessions: list[int]) -> str:
    """Write the manifest into scratch and rename it into place (another run's folder, made meanwhile, serves as well)."""
    scratch, folder = Path(scratch), Path(folder)
    manifest = {"hash": HASH, "parts": parts, "types": list(competition.types), "truth": os.path.basename(truth_path),
                "sessions": sessions}
    (scratch / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    try:
        scratch.rename(folder)
    except OSError:  # another run made it meanwhile: theirs serves
        if not (folder / "manifest.json").is_file():
            raise
    return str(folder)
