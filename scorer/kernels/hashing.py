"""splitmix64, once: the 64-bit mixing every seeded draw of the package uses (Steele, Lea and Flood 2014), and the
session partition function built on it.

mix64 is its finalizer, a bijection of uint64 whose output bits all depend on every input bit;
splitmix64(x) = mix64(x + φ), φ = 0x9E3779B97F4A7C15 (2^64 / golden ratio). Inlined into the kernels that call them.
"""

import numpy as np
from numba import njit

from scorer.kernels.strings import hash_bytes, lookup

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
SESSION_KEY = np.frombuffer(b'"session"', np.uint8)  # an OTTO truth line's session key (jsonl_sessions)


@njit(cache=True, nogil=True)
def mix64(x):
    """splitmix64's finalizer."""
    x = np.uint64(x)
    x = (x ^ (x >> np.uint64(30))) * MIX1
    x = (x ^ (x >> np.uint64(27))) * MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def splitmix64(x):
    """One step of splitmix64 from state x: mix64(x + φ)."""
    return mix64(np.uint64(x) + GOLDEN)


@njit(cache=True, nogil=True)
def partition_of(session, parts):
    """The session partition of an integer session id: splitmix64(id) mod parts (the one partition function)."""
    return np.int64(splitmix64(session) % np.uint64(parts))


@njit(cache=True, nogil=True)
def session_partitions(data, offsets, skip, separator, parts, sessions, partition):
    """For each id string i (data[offsets[i]:offsets[i + 1]]): its session, the digits after `skip` bytes up to the byte
    `separator` (-1 when they are no integer below 2^63), and its partition (0 for a bad id, whose problem the scorer of
    partition 0 then names)."""
    limit = np.int64(922337203685477580)  # (2^63 - 1) // 10
    for i in range(offsets.shape[0] - 1):
        start, end = offsets[i] + skip, offsets[i + 1]
        value, digits, j = np.int64(0), 0, start
        while j < end and data[j] != separator:
            byte = data[j]
            if byte < 48 or byte > 57 or value > limit or (value == limit and byte > 55):
                digits = -1
                break
            value = value * 10 + (byte - 48)
            digits += 1
            j += 1
        if digits <= 0 or j == end:
            sessions[i], partition[i] = -1, 0
        else:
            sessions[i], partition[i] = value, partition_of(value, parts)


@njit(cache=True, nogil=True)
def partition_of_ids(ids, parts, out):
    """out[i] = partition_of(ids[i], parts); returns out."""
    for i in range(ids.shape[0]):
        out[i] = partition_of(ids[i], parts)
    return out


@njit(cache=True, nogil=True)
def string_partitions(data, offsets, parts, out):
    """out[i] = the partition of the id string data[offsets[i]:offsets[i + 1]]: splitmix64(hash_bytes(id)) mod parts
    (data needs 8 readable bytes after the last string); returns out."""
    for i in range(offsets.shape[0] - 1):
        out[i] = partition_of(hash_bytes(data, offsets[i], offsets[i + 1]), parts)
    return out


@njit(cache=True, nogil=True)
def strings_known(data, offsets, keys, starts, ends, table, out):
    """out[i] = is the string data[offsets[i]:offsets[i + 1]] one of the table's keys? (scorer.kernels.strings); returns out."""
    for i in range(offsets.shape[0] - 1):
        out[i] = lookup(data, offsets[i], offsets[i + 1], keys, starts, ends, table)[0] >= 0
    return out


@njit(cache=True, nogil=True)
def jsonl_sessions(buf, n, starts, ends, sessions):
    """The lines of buf[:n] (each ended by a newline, the last one perhaps not): their starts and ends (the newline
    excluded) and the integer after each line's first `"session"` key and its colon (-1 when there is none below
    2^63); returns the number of lines."""
    key = SESSION_KEY
    limit = np.int64(922337203685477580)  # (2^63 - 1) // 10
    line, start = 0, 0
    while start < n:
        end = start
        while end < n and buf[end] != 10:
            end += 1
        value, found = np.int64(-1), False
        j = start
        while j + key.shape[0] <= end and not found:
            same = True
            for k in range(key.shape[0]):
                if buf[j + k] != key[k]:
                    same = False
                    break
            if same:
                found = True
                p = j + key.shape[0]
                while p < end and (buf[p] == 32 or buf[p] == 9):
                    p += 1
                if p < end and buf[p] == 58:  # ':'
                    p += 1
                    while p < end and (buf[p] == 32 or buf[p] == 9):
                        p += 1
                    digits, parsed = 0, np.int64(0)
                    while p < end and 48 <= buf[p] <= 57:
                        if parsed > limit or (parsed == limit and buf[p] > 55):
                            digits = 0
                            break
                        parsed = parsed * 10 + (buf[p] - 48)
                        digits += 1
                        p += 1
                    if digits > 0:
                        value = parsed
            j += 1
        starts[line], ends[line], sessions[line] = start, end, value
        line += 1
        start = end + 1
    return line


@njit(cache=True, nogil=True)
def gather_lines(data, starts, ends, chosen, out):
    """The lines `chosen` of data (line i: data[starts[i]:ends[i]]), each followed by a newline, into out; returns
    the bytes written."""
    at = 0
    for line in chosen:
        for j in range(starts[line], ends[line]):
            out[at] = data[j]
            at += 1
        out[at] = 10
        at += 1
    return at
