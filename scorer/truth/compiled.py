"""Compiled truths (.truth.npz, written by Truth.save): read, and checked before a kernel sees them, with a memo
of the bytes that passed the full check."""

from __future__ import annotations

import io
import json
import mmap
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from scorer.digests import sha256
from scorer.errors import TruthError
from scorer.private_files import cache_dir
from scorer.truth.cache import bytes_key, open_cache_folder, read_memo, write_memo
from scorer.truth.ids import Truth
from scorer.truth.npz import CACHE_VERSION, map_file, read_npz


def read_compiled(path: Path, types: tuple[str, ...] | None = None, source: str | None = None, opened: io.BufferedReader | None = None,
                  use_memo: bool = True) -> Truth:
    """A Truth written by Truth.save(), its arrays checked (scorer.truth.checks, see check_compiled) before a kernel
    sees them. TruthError names the file and what is wrong. `source` replaces the recorded source (a cache entry
    serves every copy of the same bytes); `opened`: the file at path, opened from the private cache folder;
    use_memo: remember (and look up) that these bytes passed the full check."""
    from scorer.truth.checks import check_truth, declared_truth

    try:
        mapped = map_file(path if opened is None else opened)
        data = read_npz(mapped, declared_truth)
        meta = json.loads(bytes(data["meta"]).decode())
        if not isinstance(meta, dict):
            raise ValueError("its meta record is not a JSON object")
        truth = Truth(tuple(meta["types"]), data["sessions"], data["indptr"], data["items"], source or meta.get("source", str(path)),
                      data.get("usage"))
        lookup = (meta["lookup_base"], data["lookup_table"]) if "lookup_table" in data else None
    except Exception as error:
        raise TruthError(f"cannot read compiled truth {path}: {error}") from None
    if meta.get("version") != CACHE_VERSION:
        raise TruthError(f"compiled truth {path} has format version {meta.get('version')}, this scorer reads {CACHE_VERSION}: compile it again")
    if types is not None and truth.types != tuple(types):
        raise TruthError(f"compiled truth {path} has types {list(truth.types)}, the config has {list(types)}")
    check_compiled(mapped, "truth", lambda full: check_truth(truth, path, lookup, full=full), vouched=opened is not None, use_memo=use_memo)
    if lookup is not None:
        truth.__dict__["lookup"] = (int(lookup[0]), lookup[1])  # the cached_property's value
    return truth


def open_compiled(path: Path, opened, declared, kind: str) -> tuple[mmap.mmap, dict[str, Any], dict[str, Any]]:
    """(mapped file, arrays, meta record) of a compiled file of this kind and format version (ValueError otherwise);
    declared checks the npy headers before any array is inflated."""
    mapped = map_file(path if opened is None else opened)
    data = read_npz(mapped, declared)
    meta = json.loads(bytes(data["meta"]).decode())
    if not isinstance(meta, dict) or meta.get("version") != CACHE_VERSION or meta.get("kind") != kind:
        found = meta if not isinstance(meta, dict) else f"{meta.get('kind')} version {meta.get('version')}"
        raise ValueError(f"format {found}")
    return mapped, data, meta


MEMO_SUFFIX = ".checked"


def check_compiled(mapped: mmap.mmap, kind: str, check, vouched: bool, use_memo: bool = True) -> None:
    """check(full) on the arrays of a compiled truth mapped from `mapped`. The full check, unless the bytes are
    vouched for by this user's scorer: an entry of the private cache (vouched), or a file whose exact bytes
    passed the full check before (a memo in the private cache folder, keyed by the mapping's content, `kind`,
    CACHE_VERSION and the checks' CHECK_VERSION); those get only the checks that keep the kernels safe
    (full=False). A full check that passes leaves its memo; without a private cache folder, always the full check."""
    if vouched:
        return check(False)
    with ExitStack() as stack:
        folder = open_cache_folder(stack, cache_dir(), create=True) if use_memo else None
        if folder is None:
            return check(True)
        key, name = memo_name(mapped, kind)
        if read_memo(folder, name, len(key) + 1) == key:
            return check(False)
        check(True)
        write_memo(folder, name, key)  # unwritten (a full cache): the next load checks in full again


def memo_name(mapped: mmap.mmap, kind: str) -> tuple[bytes, str]:
    """The memo's content (its key) and file name for these bytes read as `kind`."""
    from scorer.truth import checks

    key = json.dumps([bytes_key(mapped), kind, CACHE_VERSION, checks.CHECK_VERSION]).encode()
    return key, f"{sha256(key).hexdigest()[:32]}{MEMO_SUFFIX}"

