"""Score receipts: what a score was computed from, as hashes, so that `scorer verify` can prove it later.

A receipt names the scorer (version, kernel set), the competition (name, a SHA-256 of its canonical config,
the metric texts), the truth and the submission by content hash only (never an id of the truth), the mode,
the split and bootstrap settings, and the figures. Hashes are xxh3-128 (blake2b-128 without xxhash, named
in the value): the truth's over its compiled arrays, so one truth hashes the same from JSONL, Parquet or a
.truth.npz; the submission's over its file's bytes as uploaded (scorer.truth.cache.content_key).
"""

from __future__ import annotations

import hashlib
import json
import os
import weakref
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np

from scorer.engine.receipt_schema import RECEIPT_VERSION
from scorer.engine.result import Result, finite_or_none
from scorer.kernels import door
from scorer.spec.competition import SHAPE_RULES, Competition
from scorer.truth.cache import content_digest, content_key

HASH_CHUNK = 1 << 16  # offsets widened to int64 at a time by truth_hash
WHAT = ("version", "config", "truth", "submission", "figures")  # what verify names when it differs

_truth_hashes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a truth object -> its hash (graders reuse one truth)


def canonical_config(competition: Competition) -> dict:
    """What decides a score: the file shape, the id pattern, types, weights, K and metrics; the rules that are not the
    shape's defaults; the table reader's layout. Not the title, the file it came from or the limits (a grader's
    --max-seconds changes those without changing any score)."""
    config = {"name": competition.name, "shape": competition.shape, "header": list(competition.header),
              "id_pattern": competition.id_pattern, "item_separator": competition.item_separator,
              "empty_token": competition.empty_token, "types": list(competition.types),
              "weights": list(competition.weights), "k": competition.k, "metrics": [str(m) for m in competition.metrics]}
    defaults = {rule: values[0] for rule, values in SHAPE_RULES.get(competition.shape, {}).items()}
    turned = {rule: getattr(competition.rules, rule) for rule in defaults if getattr(competition.rules, rule) != defaults[rule]}
    if turned:  # only where they are not the shape's own: a config of the defaults keeps the hash it had before rules
        config["rules"] = turned
    if competition.table_reader:  # the table reader's layout decides which fields are read
        config["table"] = {"key": list(competition.key), "prediction": competition.prediction, "rank": competition.rank,
                           "field_separator": competition.field_separator, "first_line": competition.first_line,
                           "metadata": competition.metadata, "comment": competition.comment, "list_length": competition.list_length,
                           "item_type": competition.item_type}
        if any(competition.integer_keys):  # named only where set: the configs before them keep their hashes
            config["table"]["key_types"] = list(competition.key_types)
        if competition.item_prefix:
            config["table"]["item_form"] = [competition.item_prefix, competition.item_id_bytes]
    return config


def config_hash(competition: Competition) -> str:
    text = json.dumps(canonical_config(competition), sort_keys=True, separators=(",", ":"))
    return "sha256-" + hashlib.sha256(text.encode()).hexdigest()


def _feed(digest, name: str, value) -> None:
    """Add one field of a truth to the digest: arrays by dtype, shape and bytes; nested tables field by field."""
    if name == "indptr":  # as int64, as before the offsets were int32: a receipt's truth hash is the same across versions
        digest.update(f"{name}:{np.dtype(np.int64).str}:{value.shape}".encode())
        for start in range(0, len(value), HASH_CHUNK):  # no int64 copy of the whole (38 MiB at OTTO size)
            digest.update(value[start : start + HASH_CHUNK].astype(np.int64).view(np.uint8))
    elif isinstance(value, np.ndarray):
        digest.update(f"{name}:{value.dtype.str}:{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).view(np.uint8).reshape(-1))
    elif is_dataclass(value):
        for part in fields(value):
            _feed(digest, f"{name}.{part.name}", getattr(value, part.name))
    elif value is not None:
        digest.update(f"{name}={json.dumps(value)}".encode())


# fields a truth gained later, hashed only when set: a truth without them keeps the hash its receipts recorded
UNHASHED_WHEN_FALSE = ("multiset",)


def truth_hash(truth) -> str:
    """The content hash of a loaded truth: every array (sessions, offsets, items, Usage, grades, string tables) and its
    types; not where it was read from. About 10 ms at OTTO size (83 MB of arrays); kept per truth object."""
    known = _truth_hashes.get(truth)
    if known is not None:
        return known
    name, digest = content_digest()
    for part in fields(truth):
        value = getattr(truth, part.name)
        if part.name != "source" and not (part.name in UNHASHED_WHEN_FALSE and value is False):
            _feed(digest, part.name, value)
    found = f"{name}-{digest.hexdigest()}"
    _truth_hashes[truth] = found
    return found


def submission_hash(submission) -> str | None:
    """The content key of a submission file, or of a folder of parts (each part's name and key, in name order);
    None for a data frame or what is no regular file. Read in blocks, not mapped: the process's memory does not grow
    by the size of the file or of the largest part (a partitioned score's client holds no part)."""
    path = Path(submission)
    try:
        if path.is_dir():
            parts = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
            listing = json.dumps([[p.relative_to(path).as_posix(), content_key(p, mapped=False)] for p in parts])
            return "parts-" + hashlib.sha256(listing.encode()).hexdigest()
        return content_key(path, mapped=False)
    except (OSError, TypeError, ValueError):
        return None


def figures_of(result: Result) -> dict:
    """The figures a receipt vouches for: the weighted score and every metric of every type."""
    return {"score": finite_or_none(result.score),
            "metrics": {t: {name: finite_or_none(v) for name, v in values.items()} for t, values in result.metrics.items()}}


def make_receipt(result: Result, competition: Competition, submission=None, *, split: dict | None = None,
                 bootstrap: dict | None = None, analytics: dict | None = None, submission_key: str | None = None) -> dict:
    """The receipt of a scored Result. split: {"public": F, "seed": S} or {"usage": true}; bootstrap:
    {"resamples": N, "seed": S, "level": L}; analytics: the split and bootstrap figures, when those ran;
    submission_key: the submission's content key when the caller has it already (not hashed again)."""
    figures = figures_of(result)
    if analytics:
        figures.update({key: analytics[key] for key in ("split", "bootstrap") if key in analytics})
    return {
        "receipt": RECEIPT_VERSION,
        "scorer": {"version": _version(), "kernels": door.served()},
        "competition": {"name": competition.name, "config": config_hash(competition),
                        "metrics": [str(m) for m in competition.metrics]},
        "truth": truth_hash(result.truth) if result.truth is not None else None,
        "submission": submission_key or submission_hash(result.submission if submission is None else submission),
        "mode": "strict" if result.strict else "lenient",
        "split": split,
        "bootstrap": bootstrap,
        "figures": figures,
    }


def _version() -> str:
    from scorer import __version__

    return __version__


def write_receipt(path: str | Path, receipt: dict) -> None:
    """Write receipt.json atomically (its folder made if need be): a temporary file beside it, then a rename (a reader
    never sees half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(receipt, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def differences(recorded: dict, now: dict) -> dict[str, str]:
    """What differs between a recorded receipt and one made now: {what: why} for what in WHAT."""
    found = {}
    if recorded.get("scorer", {}).get("version") != now["scorer"]["version"]:
        found["version"] = f"scorer {recorded.get('scorer', {}).get('version')} made the receipt, this is {now['scorer']['version']}"
    old, new = recorded.get("competition", {}), now["competition"]
    if old.get("config") != new["config"] or old.get("name") != new["name"]:
        changed = "" if old.get("metrics") == new["metrics"] else f" (metrics {old.get('metrics')} then, {new['metrics']} now)"
        found["config"] = f"the competition config differs from the one scored with{changed}"
    for what in ("truth", "submission"):
        if recorded.get(what) != now[what]:
            then, here = str(recorded.get(what)).split("-")[0], str(now[what]).split("-")[0]
            found[what] = (f"the {what} was hashed with {then}, here with {here} (install xxhash to compare)" if then != here
                           else f"the {what} is not the one scored (content hash {now[what]}, receipt {recorded.get(what)})")
    if recorded.get("figures") != now["figures"] or recorded.get("mode") != now["mode"]:
        found["figures"] = _figures_differ(recorded.get("figures") or {}, now["figures"]) if recorded.get("mode") == now["mode"] \
            else f"the receipt was scored {recorded.get('mode')}, now {now['mode']}"
    return found


def _figures_differ(old: dict, new: dict) -> str:
    """The first figure that differs, named by its path (score, metrics.orders.recall@20, split.figures...)."""
    def walk(a, b, where: str) -> str | None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(key for key in b if key not in a)]:  # the receipt's order: the score first
                found = walk(a.get(key), b.get(key), f"{where}.{key}" if where else str(key))
                if found:
                    return found
            return None
        return None if a == b else f"{where}: receipt {a!r}, now {b!r}"

    return "a figure differs: " + (walk(old, new, "") or "?")
