"""The compiled files' format: uncompressed .npz files whose arrays start aligned, written atomically and read as
views of one copy-on-write mapping (nothing is read until a page is used), and the format's version and suffix.
"""

from __future__ import annotations

import io
import json
import mmap
import os
import threading
import zipfile
from contextlib import nullcontext
from pathlib import Path
from typing import IO, BinaryIO, Callable, cast

import numpy as np

from scorer import private_files

CACHE_VERSION = 5  # the compiled format and the cache key: bump when either changes
COMPILED_SUFFIX = ".truth.npz"

ALIGN = 64  # where each array's data starts in a written .npz, so that read_npz can map it aligned


def write_npz(path: str | Path, meta: dict[str, object], folder: int | None = None, **arrays: np.ndarray) -> None:
    """Write arrays and a JSON meta record as an uncompressed .npz (np.load reads it) whose arrays' data start
    at multiples of ALIGN, atomically (a reader never sees half a file, and a failed write leaves none).
    With folder (a private folder's descriptor, scorer.private_files), the file named path.name in it, 0600."""
    path = Path(path)
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays}
    if folder is not None:
        private_files.write(folder, path.name, lambda handle: _write_aligned(handle, arrays))
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # one per writer, threads too
    try:
        with open(tmp, "wb") as handle:
            _write_aligned(handle, arrays)
        os.replace(tmp, path)
    except BaseException:  # a full disk, a signal: never leave the half-written file behind
        tmp.unlink(missing_ok=True)
        raise


def _write_aligned(handle: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    from numpy.lib import format as npy_format

    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            header = io.BytesIO()
            npy_format.write_array_header_2_0(header, npy_format.header_data_from_array_1_0(array))
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            local = 30 + len(info.filename.encode()) + 20  # the local header, with room for a zip64 extra field
            pad = -(handle.tell() + local + 4 + len(header.getvalue())) % ALIGN
            info.extra = b"\xfe\xca" + pad.to_bytes(2, "little") + bytes(pad)  # an unregistered padding field
            info.file_size = len(header.getvalue()) + array.nbytes
            with archive.open(info, "w", force_zip64=True) as member:
                member.write(header.getvalue())
                member.write(array.data.cast("B") if array.nbytes else b"")


class _Mapping(mmap.mmap):
    """A file mapped by map_file: give_back drops pages of the views of these only (not of a caller's own mapping)."""


def map_file(source: str | Path | io.BufferedReader) -> mmap.mmap:
    """A file's bytes (a path, or a file opened for binary reading), mapped once, copy-on-write: a change made
    through the mapping never reaches the file. Where the file system cannot map, its bytes are read into an
    anonymous mapping. The bytes are then hashed (a memo's key), parsed and checked from this one mapping."""
    with open(source, "rb") if isinstance(source, (str, os.PathLike)) else nullcontext(source) as handle:
        try:
            return _Mapping(handle.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError) as error:
            size = os.fstat(handle.fileno()).st_size
            if not size:
                raise ValueError("the file is empty") from error
            copy = mmap.mmap(-1, size)
            handle.seek(0)
            handle.readinto(copy)
            return copy


def give_back(array: np.ndarray) -> None:
    """Drop the whole pages of a mapped array (a view read_npz made) from this process's resident memory; any other
    array is left alone. Its bytes stay in the file and the page cache, and a later read maps them in again: for an
    array no more read for a while, as the truth's items once a pass is over (the totals allocate after it)."""
    mapped: object = array.base  # a view read_npz made has its mapping as base
    if not isinstance(mapped, _Mapping) or not hasattr(mmap, "MADV_DONTNEED") or array.nbytes == 0:
        return
    start = array.ctypes.data - np.frombuffer(mapped, np.uint8, count=1).ctypes.data
    first, end = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE, (start + array.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:  # the scorer never writes a compiled file's arrays, so the file's bytes are theirs
        mapped.madvise(mmap.MADV_DONTNEED, first, end - first)


MAX_DEFLATE_RATIO = 1032  # deflate's most: a member that claims more lies about its size
MAX_INFLATION = 100  # the compressed members of a file may inflate to at most this many times its size


def read_npz(source: str | Path | io.BufferedReader | mmap.mmap, agree: Callable[[dict[str, tuple[int, ...]]], None] | None = None
             ) -> dict[str, np.ndarray]:
    """The arrays of an .npz (a path, a file opened for binary reading, or its map_file mapping). Those stored
    uncompressed (as write_npz stores them) are views of the mapping: nothing is read until a page is used.
    Anything else is read by np.load (from a copy of the same mapped bytes).

    Every member's npy header is read first, and nothing is inflated unless all agree with the file: no Python
    objects; a header and data of exactly the member's size; a stored array inside the file; compressed members
    inflating at most MAX_DEFLATE_RATIO times each and MAX_INFLATION times the file's size in all; and
    agree(declared shapes by name), the reader's own check of how the arrays' lengths go together. ValueError else."""
    mapped = source if isinstance(source, mmap.mmap) else map_file(source)
    arrays: dict[str, np.ndarray | None] = {}  # None: read by np.load
    mapped.seek(0)
    with zipfile.ZipFile(cast(IO[bytes], mapped)) as archive:  # a mapping reads and seeks as a file does
        infos = archive.infolist()
        packed = None if all(info.compress_type == zipfile.ZIP_STORED for info in infos) else \
            zipfile.ZipFile(io.BytesIO(mapped))  # zipfile streams a member only from a file object that says it seeks
        headers = {info.filename.removesuffix(".npy"): (info, *_header(packed, info, mapped)) for info in infos}
        inflated = sum(info.file_size for info, *_ in headers.values() if info.compress_type != zipfile.ZIP_STORED)
        if inflated > MAX_INFLATION * len(mapped):
            raise ValueError(f"its compressed arrays declare {inflated:,} bytes, over {MAX_INFLATION} times the file's "
                             f"{len(mapped):,}")
        if agree is not None:
            agree({name: shape for name, (_, _, shape, _, _) in headers.items()})
        for name, (info, start, shape, fortran, dtype) in headers.items():
            if info.compress_type != zipfile.ZIP_STORED:
                arrays[name] = None
            elif 0 in shape:
                arrays[name] = np.empty(shape, dtype, order="F" if fortran else "C")
            else:
                view = np.ndarray(shape, dtype, buffer=mapped, offset=start, order="F" if fortran else "C")
                arrays[name] = view if view.flags.aligned else view.copy()  # the kernels are compiled for aligned arrays
    if any(array is None for array in arrays.values()):  # not written by write_npz: read from a copy of the bytes
        with np.load(io.BytesIO(mapped), allow_pickle=False) as data:
            return {name: data[name] if array is None else array for name, array in arrays.items()}
    return {name: array for name, array in arrays.items() if array is not None}  # every one: none was None


def _header(packed: zipfile.ZipFile | None, info: zipfile.ZipInfo, mapped: mmap.mmap) -> tuple[int, tuple[int, ...], bool, np.dtype]:
    """(where a stored member's data starts in the file, shape, fortran order, dtype) from the member's npy header,
    read without inflating its data; ValueError when the header disagrees with the member or the file."""
    from numpy.lib import format as npy_format

    name = info.filename
    if info.compress_type == zipfile.ZIP_STORED:
        local = mapped[info.header_offset : info.header_offset + 30]
        start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        mapped.seek(start)
        stream: IO[bytes] = cast(IO[bytes], mapped)
    else:
        if info.file_size > MAX_DEFLATE_RATIO * max(info.compress_size, 1):
            raise ValueError(f"{name} claims to inflate {info.file_size // max(info.compress_size, 1):,} times, more than deflate can")
        stream, start = cast(zipfile.ZipFile, packed).open(info), 0
    version = npy_format.read_magic(stream)
    read = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    shape, fortran, dtype = read(stream)
    header = stream.tell() - start
    if dtype.hasobject:
        raise ValueError(f"{name} holds Python objects")
    size = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if header + size != info.file_size:
        raise ValueError(f"{name} declares {size:,} bytes of data in a member of {info.file_size:,}")
    if info.compress_type == zipfile.ZIP_STORED and (info.compress_size != info.file_size or start + header + size > len(mapped)):
        raise ValueError(f"{name} lies outside the file")
    return start + header, shape, fortran, dtype
