"""A Codabench or CodaLab bundle zip, read as the untrusted input it is (by `scorer audit --bundle`).

A regular file only. Its members are checked on the zip's directory before any is inflated: at most MAX_MEMBERS of
them, each at most MAX_MEMBER_BYTES and inflating at most MAX_RATIO times its packed size (beyond SMALL bytes), and
MAX_TOTAL_BYTES in all; zipfile stops a member at its declared size, so the check holds for what is read. Members are
streamed to disk, never read whole; only small files (YAML) are read into memory. YAML of at most MAX_YAML_BYTES is
walked as events first: nested at most MAX_DEPTH deep and at most MAX_YAML_NODES nodes with every alias expanded, so a
"billion laughs" file is refused before it is built (PyYAML shares an aliased node, but whatever walks or copies the
result pays for every copy).
"""

from __future__ import annotations

import shutil
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from scorer.errors import UsageError
from scorer.handed_back import MAX_DEPTH, opened

MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 4 << 30  # a reference truth (OTTO's JSONL: 113 MB) or sample, with room
MAX_TOTAL_BYTES = 16 << 30
MAX_RATIO = 200  # inflated / packed: text and sorted ids pack 3-20x; 700x is a bomb
SMALL = 1 << 20  # a member this small may pack any amount (a page of blanks)
MAX_YAML_BYTES = 1 << 20
MAX_YAML_NODES = 100_000  # every alias expanded; a competition.yaml has hundreds
PIECE = 1 << 20


@contextmanager
def open_zip(path, label: str) -> Iterator[zipfile.ZipFile]:
    """The zip at path (a regular file), its members checked; UsageError naming `label` (e.g. "the bundle b.zip")
    when it is no zip or a member is over a limit."""
    with opened(path, label.removeprefix("the ")) as (fd, _):
        try:
            with open(fd, "rb", closefd=False) as handle, zipfile.ZipFile(handle) as archive:
                check_members(archive, label)
                yield archive
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
            raise UsageError(f"cannot read {label}: {error}") from None


def check_members(archive: zipfile.ZipFile, label: str) -> None:
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise UsageError(f"{label} holds {len(infos):,} members, over the {MAX_MEMBERS:,} a bundle may have")
    total = 0
    for info in infos:
        if info.file_size > MAX_MEMBER_BYTES:
            raise UsageError(f"{label}: {info.filename} inflates to {info.file_size:,} bytes, over the {MAX_MEMBER_BYTES:,} "
                             "a bundle's file may have")
        if info.file_size > SMALL and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise UsageError(f"{label}: {info.filename} inflates {info.file_size // max(info.compress_size, 1):,} times "
                             f"(to {info.file_size:,} bytes from {info.compress_size:,}; at most {MAX_RATIO} times): a zip bomb?")
        total += info.file_size
    if total > MAX_TOTAL_BYTES:
        raise UsageError(f"{label} inflates to {total:,} bytes in all, over the {MAX_TOTAL_BYTES:,} a bundle may have")


def read_small(archive: zipfile.ZipFile, name: str, label: str, limit: int = MAX_YAML_BYTES) -> bytes:
    """A member of at most `limit` bytes, read into memory."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise UsageError(f"{label}: {name} is {info.file_size:,} bytes, over the {limit:,} it may have")
    return archive.read(info)


def extract(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """Stream one member to target (PIECE bytes at a time)."""
    with archive.open(info) as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out, PIECE)


def load_yaml(data: bytes, label: str) -> Any:
    """The YAML document in data (safe_load), once its events show it small: MAX_YAML_BYTES, MAX_DEPTH, MAX_YAML_NODES."""
    import yaml

    if len(data) > MAX_YAML_BYTES:
        raise UsageError(f"{label} is {len(data):,} bytes, over the {MAX_YAML_BYTES:,} it may have")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(yaml.parse(data, Loader=loader), label)
        return yaml.load(data, Loader=loader)
    except yaml.YAMLError as error:
        raise UsageError(f"{label} is not YAML: {' '.join(str(error).split())}") from None


def _check_events(events, label: str) -> None:
    """Count the nodes as if every alias were copied out (an anchored node's size is kept by its anchor) and the depth,
    from the event stream: no node is built, no recursion."""
    import yaml

    sizes: dict[str, int] = {}  # an anchor's node, expanded
    open_nodes: list[list] = [[None, 0]]  # per open collection: its anchor, nodes inside it so far (expanded)
    total = 0  # nodes so far, expanded
    for event in events:
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            open_nodes.append([event.anchor, 0])
            if len(open_nodes) > MAX_DEPTH + 1:
                raise UsageError(f"{label} nests more than {MAX_DEPTH} deep")
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, inside = open_nodes.pop()
            size, total = 1 + inside, total + 1  # what is inside was counted as it came
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, sizes.get(event.anchor, 1)
            total += size
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
            total += 1
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        open_nodes[-1][1] += size
        if total > MAX_YAML_NODES:
            raise UsageError(f"{label} expands to over {MAX_YAML_NODES:,} values (its aliases copied out): "
                             "write the values out, without aliases nested in aliases")
