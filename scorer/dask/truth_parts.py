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

from scorer.spec.competition import Competition
from scorer.truth.ids import Truth

HASH = "splitmix64(session) mod parts; string ids: splitmix64(hash_bytes(id)) mod parts (scorer.kernels.strings)"
KEEP = 4  # partitions kept per worker process
_loaded: OrderedDict = OrderedDict()


def part_file(folder: str | Path, index: int) -> Path:
    return Path(folder) / f"part-{index:05d}.truth.npz"


def dataset_folder(truth_path: str, competition: Competition, parts: int, root: str | Path | None = None) -> Path:
    """Where the dataset of this truth's content, types and partition count lives."""
    from scorer.private_files import cache_dir
    from scorer.truth.cache import content_key
    from scorer.truth.npz import CACHE_VERSION

    content = content_key(Path(truth_path))
    if content is None:
        from scorer.errors import TruthError

        raise TruthError(f"cannot read the truth {truth_path}")
    name = f"{content}-{competition.shape}-{'+'.join(competition.types)}-p{parts}-v{CACHE_VERSION}"
    return Path(root if root is not None else cache_dir() / "partitioned") / name


def partitions_of_truth(truth: Truth, parts: int) -> np.ndarray:
    """Each of the truth's sessions' (or string ids') partition."""
    from scorer.kernels.hashing import partition_of_ids, string_partitions
    from scorer.truth.strings import StringTruth

    if isinstance(truth, StringTruth):
        ids = truth.ids
        offsets = np.append(ids.starts, ids.ends[-1:]) if len(ids.starts) else np.zeros(1, np.int64)
        if len(ids.starts) and not np.array_equal(ids.starts[1:], ids.ends[:-1]):  # not packed end to end: one by one
            return np.array([string_partitions(ids.keys, np.array([a, b], np.int64), parts, np.empty(1, np.int64))[0]
                             for a, b in zip(ids.starts, ids.ends)], np.int64)
        return string_partitions(ids.keys, offsets, parts, np.empty(len(ids.starts), np.int64))
    return partition_of_ids(truth.sessions, parts, np.empty(truth.n_sessions, np.int64))


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
        indptr = np.zeros(len(slots) + 1, np.int64)
        np.cumsum(sizes, out=indptr[1:])
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

    folder = dataset_folder(truth_path, competition, parts, root)
    if (folder / "manifest.json").is_file():
        return str(folder)
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    truth = resolve_truth(truth_path, competition)
    scratch = Path(tempfile.mkdtemp(prefix=".partial-", dir=folder.parent))
    try:
        sessions = []
        for index, part in enumerate(split_truth(truth, parts)):
            part.save(part_file(scratch, index))
            sessions.append(part.n_sessions)
        manifest = {"hash": HASH, "parts": parts, "types": list(competition.types), "truth": os.path.basename(truth_path),
                    "sessions": sessions}
        (scratch / "manifest.json").write_text(json.dumps(manifest, indent=1))
        try:
            scratch.rename(folder)
        except OSError:  # another task made it meanwhile: theirs serves
            if not (folder / "manifest.json").is_file():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return str(folder)


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
