"""The rows' keys (session, type, line) that a pass keeps to find repeated rows by sorting, where slots cannot
(a pass without truth; the Kaggle metric's pass, which judges repeats over the rows of every split)."""

from __future__ import annotations

import numpy as np


class RowKeys:
    """(session, type, line) of every row read, for the repeated-rows check, kept small: one int64 key per row
    (session * n_types + type) while the sessions fit one, and a chunk's lines as (first, count) when they follow
    one another. `in_order` tells whether the keys strictly increase so far, as OTTO's rows do (then none repeats:
    the engine's own shortcut, checked chunk by chunk)."""

    def __init__(self, n_types: int):
        self.n_types = n_types
        self.parts: list[tuple] = []  # per chunk: (key or None, session, type or None, lines or (first, count))
        self.in_order, self.last = True, -1

    def add(self, session: np.ndarray, kind: np.ndarray, line: np.ndarray, line_offset: int) -> None:
        if len(session) == 0:
            return
        n = len(session)
        lines = (int(line[0]) + line_offset, n) if int(line[-1]) - int(line[0]) == n - 1 and np.all(np.diff(line) == 1) else line + line_offset
        if session.min() < 0 or session.max() >= (2**63 - 1) // self.n_types - self.n_types:
            self.in_order = False
            self.parts.append((None, session.copy(), kind.copy(), lines))
            return
        key = session * self.n_types
        key += kind
        if self.in_order and (key[0] <= self.last or not np.all(key[1:] > key[:-1])):
            self.in_order = False
        self.last = int(key[-1])
        if kind.min() < 0 or kind.max() >= self.n_types:  # the key does not tell them apart (the kernel keeps no such row)
            self.parts.append((None, session.copy(), kind.copy(), lines))
        else:
            self.parts.append((key, None, None, lines))

    def triples(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The rows' (session, type, line) arrays, chunk by chunk (as Pass.row_keys holds them)."""
        out = []
        for key, session, kind, lines in self.parts:
            if key is not None:
                session, kind = np.divmod(key, self.n_types)
            if isinstance(lines, tuple):
                lines = np.arange(lines[0], lines[0] + lines[1], dtype=np.int64)
            out.append((session, kind, lines))
        return out

    def repeats(self, shown: int) -> tuple[int, list[tuple[int, int, int, int]]]:
        """How many rows repeat an earlier row's (session, type), and the first `shown` of them in file order, each as
        (session, type, line, line of the row it repeats). Emptied as it goes (the keys move into one array).

        Memory, while every key fits one int64 (sessions from 0 to 2^63 / n_types, as OTTO's): the keys, their stable
        sort order and the sort's buffer, about 20 bytes a row; the repeats are found a chunk of the order at a time
        and only the first `shown` are kept. Otherwise (negative or huge sessions) the triples are sorted whole.
        """
        if self.in_order or not self.parts:
            return 0, []
        if any(key is None for key, _, _, _ in self.parts):
            return self._repeats_of_triples(shown)
        sizes = [len(key) for key, _, _, _ in self.parts]
        starts = np.concatenate(([0], np.cumsum(sizes)))
        key = np.empty(int(starts[-1]), np.int64)
        lines = []
        for at, (part_key, _, _, part_lines) in zip(starts, self.parts):
            key[at : at + len(part_key)] = part_key
            lines.append(part_lines)
        self.parts = []
        order = np.argsort(key, kind="stable")  # rows of one key in file order
        total, rows, earlier = 0, np.empty(0, np.int64), np.empty(0, np.int64)
        for first in range(1, len(key), REPEAT_CHUNK):
            here = order[first : first + REPEAT_CHUNK]
            before = order[first - 1 : first - 1 + len(here)]
            same = np.flatnonzero(key[here] == key[before])
            total += len(same)
            rows, earlier = np.concatenate((rows, here[same])), np.concatenate((earlier, before[same]))
            if len(rows) > shown:
                keep = np.argpartition(rows, shown)[:shown] if shown else np.empty(0, np.int64)
                rows, earlier = rows[keep], earlier[keep]
        by_row = np.argsort(rows)
        line_of = lambda row: _line(lines, starts, int(row))  # noqa: E731
        return total, [(int(key[row] // self.n_types), int(key[row] % self.n_types), line_of(row), line_of(before))
                       for row, before in zip(rows[by_row], earlier[by_row])]

    def _repeats_of_triples(self, shown: int) -> tuple[int, list[tuple[int, int, int, int]]]:
        session, kind, line = (np.concatenate(parts) for parts in zip(*self.triples()))
        self.parts = []
        order = np.lexsort((line, kind, session))
        repeat = np.flatnonzero((session[order][1:] == session[order][:-1]) & (kind[order][1:] == kind[order][:-1])) + 1
        by_line = np.argsort(order[repeat])[:shown]  # the first repeats of the file are shown
        rows, earlier = order[repeat][by_line], order[repeat - 1][by_line]
        return len(repeat), [(int(session[row]), int(kind[row]), int(line[row]), int(line[before])) for row, before in zip(rows, earlier)]


REPEAT_CHUNK = 1 << 20  # rows of the sort order compared at once


def _line(lines: list, starts: np.ndarray, row: int) -> int:
    """The line of the row-th row kept, from its chunk's lines ((first, count) or an array)."""
    chunk = int(np.searchsorted(starts, row, side="right")) - 1
    part = lines[chunk]
    return int(part[0]) + row - int(starts[chunk]) if isinstance(part, tuple) else int(part[row - starts[chunk]])
