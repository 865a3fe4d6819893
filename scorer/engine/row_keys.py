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
