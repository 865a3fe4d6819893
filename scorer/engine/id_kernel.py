"""The engine's side of OTTO's shape (`session_type` ids, items as integers): competition and truth as kernel arrays."""

from __future__ import annotations

import numpy as np

from scorer.engine.beyond import NO_SIDE, SIDE_OUTPUT, SideKernel
from scorer.engine.figures import hits_dtype
from scorer.engine.row_kernel import Parsed, RowKernel
from scorer.kernels import codes, door
from scorer.kernels.kinds import derivable, discounts, ideal_dcg
from scorer.kernels.rows import frozen, scratch_for
from scorer.spec.competition import Competition
from scorer.truth.checks import every_id
from scorer.truth.ids import Truth

EMPTY_IDS, EMPTY_TABLE = frozen(np.empty(0, np.int64)), frozen(np.empty(0, np.int32))


def truth_arrays(truth: Truth) -> tuple:
    """The truth as the kernels read it: (sessions, lookup base, lookup table, CSR offsets, items), read-only. Where
    the sessions are every id from the first to the last (OTTO's are), neither the sessions nor the table go: a
    session's index is its id less the first (parse.session_index), and the table's pages (4 bytes a session) are
    never read in."""
    sessions = truth.sessions
    if every_id(sessions):
        return EMPTY_IDS, np.int64(sessions[0]), EMPTY_TABLE, frozen(truth.indptr), frozen(truth.items)
    base, table = truth.lookup
    return frozen(sessions), np.int64(base), frozen(table), frozen(truth.indptr), frozen(truth.items)


class IdKernel(RowKernel):
    """The competition and truth as the arrays parse_block (and frame_rows) take."""

    def __init__(self, competition: Competition, truth: Truth, max_per_code: int, items=None):
        prefix, middle, suffix = competition.id_literals()
        as_bytes = lambda text: frozen(np.frombuffer(text.encode(), np.uint8))  # noqa: E731
        names = [name.encode() for name in competition.types]
        self.idspec = (as_bytes(prefix), as_bytes(middle), as_bytes(suffix), competition.session_first,
                       as_bytes("".join(competition.types)), frozen(np.cumsum([0] + [len(name) for name in names]), np.int64))
        self.truth = (*truth_arrays(truth), np.int64(len(competition.types)))
        self.n_metrics = len(competition.metrics)
        kmax = competition.k
        kinds, ks = competition.row_kinds()
        self.stored_metrics = 0 if derivable(kinds, kmax, graded=False) else self.n_metrics  # 0: derived from slot_hits
        self.hits_dtype = hits_dtype(kmax)  # merge_rows writes the masks (the string shapes' kernels write int64 ones)
        self.metric = (kinds, ks, np.int64(kmax), discounts(kmax), ideal_dcg(kmax))
        self.limits = (np.int64(competition.limits.max_line_bytes), np.int64(max_per_code))
        self.max_per_code = max_per_code
        self.kmax = kmax
        self.spare: list[tuple[np.ndarray, np.ndarray]] = []
        self.side = SideKernel(competition, items, truth.n_sessions) if any(m.family == "beyond" for m in competition.metrics) else None
        self.sessions, self.id_pattern, self.types = truth.sessions, competition.id_pattern, competition.types

    def parse(self, data: np.ndarray, start: int, end: int, first_line: int) -> Parsed:
        counts = np.zeros(codes.N_CODES, np.int64)
        found = np.zeros((self.max_per_code * codes.N_CODES, 5), np.int64)
        scratch = scratch_for(self.kmax)
        pos, line, n_problems, chunks = start, first_line - 1, 0, []
        parse_block = door.kernel("parse_block")
        sides = []
        while pos < end:
            row_ints, row_values = self.rows()
            side = NO_SIDE if self.side is None else self.side.for_call()
            pos, line, n_rows, n_problems = parse_block(data, pos, end, line, self.idspec, self.truth, self.metric, side,
                                                        self.limits, scratch, row_ints, row_values, counts, found, n_problems)
            chunks.append((row_ints, row_values, n_rows))
            sides.append(side[SIDE_OUTPUT])
        return Parsed(data[:end], chunks, counts, found, n_problems, line, sides=sides)  # messages quote no byte past the block

    def absorb(self, parsed: Parsed, line_offset: int) -> None:
        if self.side is not None:
            self.side.absorb(parsed)
        self.release(parsed)

    def side_figures(self):
        return self.side.finish() if self.side is not None else None

    def slot_name(self, slot: int) -> str:
        return self.repeat_name(self.sessions[slot // len(self.types)], slot % len(self.types), 0)

    def repeat_name(self, session: int, kind: int, line: int) -> str:
        return self.id_pattern.format(session=int(session), type=self.types[kind])

    def unknown_name(self, session: int, line: int) -> str:
        return f"{int(session)} (line {int(line)})"
