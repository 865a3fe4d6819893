"""An example of the arguments of every exported kernel (scorer.kernels.door.STAGES), as its callers pass them: the
ahead-of-time build takes each signature from the numba types of its example, and the tests run the examples through
both builds. Where a caller builds its arguments with the engine's own classes, so does its example; otherwise the
caller makes its arrays contiguous and of the types written here (the test of the door holds every call to them).
"""

from __future__ import annotations

import numpy as np

from scorer.kernels import codes
from scorer.kernels.rows import (
    INDPTR_DTYPE,  # a truth's CSR offsets
    LINE_DTYPE,  # slot_line's type
    frozen,  # an input callers may hand over read-only (Arrow's buffers): the signature takes both
)

# the examples' sizes: any, small
_ROWS, _SLOTS = 4, 8


def examples(stage: str) -> dict[str, tuple]:
    """{exported name: example arguments} of one stage."""
    return _STAGES[stage]()


def _otto():
    """OTTO's competition, a two-session truth, and the IdKernel over them (the arrays parse_block takes)."""
    from scorer.engine.id_kernel import IdKernel
    from scorer.spec.competition import load_competition
    from scorer.truth.ids import from_long

    competition = load_competition("otto")
    truth = from_long(np.array([1, 2]), np.array([0, 1]), np.array([5, 6]), competition.types)
    return competition, truth, IdKernel(competition, truth, 1)


def _problems(kernel) -> tuple[np.ndarray, np.ndarray]:
    """A pass's problem counts and records (counts per code, found: a row per kept problem)."""
    return np.zeros(codes.N_CODES, np.int64), np.zeros((kernel.max_per_code * codes.N_CODES, 5), np.int64)


def _score() -> dict[str, tuple]:
    from scorer.engine.beyond import NO_SIDE
    from scorer.engine.figures import SlotFigures
    from scorer.kernels.rows import scratch_for
    from scorer.spec.exact_sums import new_accumulators

    competition, truth, kernel = _otto()
    row_ints, row_values = kernel.rows()
    block = frozen(np.zeros(16, np.uint8))  # the kernels only read the block: one helper serves the frames' read-only buffers too
    counts, found = _problems(kernel)
    slots, narrow = np.zeros(_SLOTS, np.int64), np.zeros(_SLOTS, np.uint32)  # hit-rank masks: int64, or uint32 to K 32
    figures = SlotFigures.of(competition, truth.indptr, slots, None)
    n_types = len(competition.types)
    strided = (figures.hits[0::n_types], figures.indptr[0:-1:n_types], figures.indptr[1::n_types])  # a type's slots
    narrow_strided = (narrow[0::n_types], *strided[1:])
    metric = (figures.kinds, figures.ks, figures.discount, figures.ideal)
    merge = (row_ints, row_values, 0, 0, np.zeros(_SLOTS, LINE_DTYPE), np.zeros((_SLOTS, 0)))
    return {
        "parse_block": (block, 0, 1, 0, kernel.idspec, kernel.truth, kernel.metric, NO_SIDE, kernel.limits, scratch_for(kernel.kmax),
                        row_ints, row_values, counts, found, 0),
        "merge_rows": (*merge, slots, found, 0, found, 0),
        "merge_rows_uint32": (*merge, narrow, found, 0, found, 0),
        "figure_sums": (*strided, *metric, new_accumulators(len(figures.kinds))),
        "figure_sums_uint32": (*narrow_strided, *metric, new_accumulators(len(figures.kinds))),
        "figures_from_hits": (*strided, *metric, np.empty((_SLOTS, 1), np.float64)),
        "figures_from_hits_uint32": (*narrow_strided, *metric, np.empty((_SLOTS, 1), np.float64)),
        "frame_rows": _frame_rows(kernel, counts, found),
        "accumulate": (np.zeros(_ROWS), new_accumulators(1), 0),
    }


def _frame_rows(kernel, counts, found) -> tuple:
    """frame_rows' arguments for a one-row frame, as scorer.engine.frame_pass passes them (its _Job fixes their types)."""
    from scorer.engine.frame_pass import _Job
    from scorer.kernels.rows import scratch_for

    empty8, empty64 = np.empty(0, np.uint8), np.empty(0, np.int64)
    lists = (np.array([0, 1], np.int64), empty8, 0, np.array([5], np.int64), empty8, 0, empty64)
    job = _Job((np.frombuffer(b"1_clicks", np.uint8), np.array([0, 8]), empty8, 0), (empty64, empty64, empty64), lists, 1, 0, ())
    row_ints, row_values = kernel.rows()
    return (0, 1, 0, job.ids, job.keys, job.lists, kernel.idspec, kernel.truth, kernel.metric, kernel.max_per_code,
            scratch_for(kernel.kmax)[:3], row_ints, row_values, counts, found, 0)


def _tiny_truth():
    """A string truth of two ids, each with one item, and its table of names: the types every string shape passes."""
    from scorer.truth.strings import StringTable, StringTruth

    names = StringTable(np.frombuffer(b"ab" + bytes(8), np.uint8).copy(), np.array([0, 1]), np.array([1, 2]),
                        np.full(16, -1, np.int64))  # a table's types; its entries are no matter here
    truth = StringTruth(("all",), np.arange(2, dtype=np.int64), np.array([0, 1, 2], INDPTR_DTYPE), np.array([0, 1], np.int64),
                        ids=names, item_names=names)
    return truth, names


def _shape_kernel(shape: str = "long"):
    """A string-shape kernel over a tiny truth: its arrays have the types every string shape passes."""
    from scorer.engine.string_kernel import ShapeKernel
    from scorer.spec.competition import load_competition

    truth, names = _tiny_truth()
    competition = {"list": "hm", "long": "airbnb"}[shape]
    return ShapeKernel(load_competition(competition), truth, 1), names


def _table_kernel(name: str):
    """The table reader's kernel (scorer.engine.table_kernel) of a bundled config over a tiny truth."""
    from scorer.engine.table_kernel import TableKernel
    from scorer.spec.competition import load_competition

    return TableKernel(load_competition(name), _tiny_truth()[0], 1)


def _table() -> dict[str, tuple]:
    """The table reader's kernels: a list row of several key columns, the merge of a repeated key, the long shape's finish."""
    listed, long = _table_kernel("trivago19"), _table_kernel("dressipi22")
    counts, found = _problems(listed)
    row_ints, row_values = listed.rows()
    n_slots = 2
    slot_line, slot_values, slot_hits = np.zeros(n_slots, LINE_DTYPE), np.zeros((n_slots, listed.stored_metrics)), np.zeros(n_slots, np.int64)
    kept = np.zeros(listed.max_per_code, np.int64)
    return {
        "parse_table_block": (frozen(np.zeros(16, np.uint8)), 0, 1, 0, listed.layout, listed.tables, listed.truth, listed.metric,
                              listed.limits, listed.scratch(), listed.side, row_ints, row_values, np.zeros((1, 4), np.int64), counts,
                              found, 0),
        "merge_table_rows": (row_ints, row_values, 0, 0, listed.keep, slot_line, slot_values, slot_hits, np.zeros(n_slots, np.int32),
                             found, 0, found, 0),
        "finish_table_long": (np.zeros(n_slots + 1, np.int64), np.zeros(_ROWS, np.int64), np.zeros(_ROWS, np.int64), long.repeat, long.truth,
                              long.metric, long.scratch(), slot_line, np.zeros((n_slots, long.stored_metrics)), slot_hits, kept, kept,
                              np.zeros(2, np.int64)),
    }


def _strings() -> dict[str, tuple]:
    """The string shapes' pass (list, long, value) and their truth's tables."""
    from scorer.kernels.rows import long_state

    kernel, names = _shape_kernel()
    counts, found = _problems(kernel)
    block = frozen(np.zeros(16, np.uint8))
    row_ints, row_values = kernel.rows()
    n_slots = names.size
    slot_line, slot_values, slot_hits = np.zeros(n_slots, LINE_DTYPE), np.zeros((n_slots, kernel.stored_metrics)), np.zeros(n_slots, np.int64)
    kept = np.zeros(kernel.max_per_code, np.int64)
    figures = (kernel.truth, kernel.metric, kernel.covered, slot_line, slot_values, slot_hits, kept, kept)
    slots, lines, codes64 = np.zeros(_ROWS, np.int64), np.zeros(_ROWS, np.int32), np.zeros(_ROWS, np.int64)
    chosen = np.zeros(n_slots, np.bool_)
    table = np.full(16, -1, np.int64)
    return {
        "parse_strings_block": (block, 0, 1, 0, kernel.shape, kernel.tables, kernel.truth, kernel.metric, kernel.limits, kernel.scratch(),
                                row_ints, row_values, np.zeros((1, 3), np.int64), counts, found, 0),
        "count_slots": (slots, np.zeros(n_slots + 1, np.int64), np.zeros(n_slots, np.int32), -1),
        "first_rows": (np.zeros((_ROWS, 3), np.int64)[:, 0], np.zeros(n_slots, np.int32), np.int32(6), chosen),
        "place_by_slot": (slots, lines, np.int64(0), codes64, chosen, np.zeros(n_slots, np.int64), codes64, codes64),
        "finish_long": (np.zeros(n_slots + 1, np.int64), codes64, codes64, long_state(kernel.kmax), *figures),
        "finish_long_runs": (slots, lines, np.int64(0), codes64, chosen, True, long_state(kernel.kmax), *figures),
        "fill_table": (frozen(names.keys), names.starts, names.ends, table),
        "count_byte": (block, 16, 10),
        "read_rows": (block, 0, 8, *(np.zeros(_ROWS, np.int64) for _ in range(2)), table, *(np.zeros(_ROWS, np.int64) for _ in range(2)),
                      table, np.zeros(_ROWS, np.int64), np.zeros(_ROWS, np.int64)),
        **_table(),
    }


def _explain() -> dict[str, tuple]:
    from scorer.engine.explain_pass import block_arguments, truth_rows_of

    competition, truth, kernel = _otto()
    masks = np.zeros(_ROWS, np.int64)
    steps = np.zeros(_ROWS, np.int64)
    int32s = np.zeros(_ROWS, np.int32)  # the truth rows' slots and |T| (explain_pass.truth_rows_of)
    counts8 = np.zeros(_ROWS, np.uint8)  # items read, at most 63
    return {
        "explain_block": (frozen(np.zeros(16, np.uint8)), 0, 1, 0, *block_arguments(competition, truth, truth_rows_of(truth)[2])),
        "merge_explain_rows": (np.zeros((_ROWS, 4), np.int64), 0, masks, masks, counts8),
        "convention_sums": (masks, masks, counts8, int32s, np.zeros(_ROWS, np.bool_), np.int64(20), steps, steps, steps,
                            np.zeros(_ROWS, np.bool_), np.zeros((_ROWS, 3)), np.zeros((_ROWS, 2), np.int64), np.zeros((_ROWS, 5), np.int64)),
        "place_truth_rows": (truth.indptr, truth.items, np.int64(3), steps, np.zeros(_SLOTS, np.int32), int32s, int32s, np.zeros(_ROWS, np.bool_)),
        "rows_missing_beside_others": (np.zeros(_SLOTS, LINE_DTYPE), truth.indptr, np.int64(3), masks),
    }


def _candidates() -> dict[str, tuple]:
    """`scorer candidates` (scorer.engine.candidate_pass): its columns as candidate_runs takes any table's."""
    from scorer.engine.candidate_pass import kernel_columns, worker_state
    from scorer.engine.id_kernel import truth_arrays

    competition, truth, kernel = _otto()
    state = worker_state(truth.n_sessions, len(truth.types), 1)
    counts, found = np.zeros(codes.N_CODES, np.int64), np.zeros((codes.N_CODES, 3), np.int64)
    ids, bits = (np.zeros(_ROWS, np.int64), np.empty(0, np.int32)), np.empty(0, np.uint8)
    columns = kernel_columns(ids, bits, np.int64(0), ids, bits, np.int64(0), np.zeros(_ROWS, np.int8),
                             (np.zeros(_ROWS), np.empty(0, np.float32)), bits, np.int64(0))
    names = _shape_kernel()[1]
    return {
        "candidate_runs": (0, _ROWS, np.int64(0), columns, truth_arrays(truth), np.int64(3), np.int64(1), state["tables"], state["scratch"],
                           np.zeros(_SLOTS, np.int64), state["runs"], state["hits"], state["unknown"], found, counts),
        "string_codes": (np.zeros(16, np.uint8), frozen(np.zeros(_ROWS + 1, np.int64)), *map(frozen, names.arrays()), np.int64(2),
                         np.zeros(_ROWS, np.int64)),
    }


def _resample() -> dict[str, tuple]:
    """bootstrap, compare, leaderboard, breakdown and summary: their callers make every array contiguous, of these types."""
    ints, table = np.zeros(_ROWS, np.int64), np.zeros((_ROWS, 2), np.int64)
    draws = np.zeros((2, _ROWS))
    return {
        "hash_units": (ints, np.uint64(0)),
        "hash_strings": (frozen(np.zeros(16, np.uint8)), ints, ints),
        "stream_seeds": (np.uint64(0), 2),
        "group_rows": (table, table),
        "poisson_draws": (ints, ints, draws),
        "sign_flip_draws": (ints, ints, draws),
        "session_poisson_weights": (ints, ints, np.zeros(16, np.uint64), np.zeros((2, _ROWS), np.float32)),
        "resampled_block_sums": (ints, ints, np.zeros((_ROWS, 2), np.float32), np.zeros(16, np.uint64), np.zeros((2, 2), np.float32)),
        "rank_histogram": (ints, table, np.ones(_ROWS, np.bool_), 20),
        "hit_counts": (ints, 20),
    }


def _prepare() -> dict[str, tuple]:
    """`scorer prepare`'s holdout (scorer.prepare): events are sessions (int64), aid (int32), ts (int64), type (int8)."""
    buf = frozen(np.zeros(16, np.uint8))
    ints, aid, typ = np.zeros(_ROWS, np.int64), np.zeros(_ROWS, np.int32), np.zeros(_ROWS, np.int8)
    starts, flags = np.zeros(_ROWS + 1, np.int64), np.zeros(_ROWS, np.uint8)
    out = np.zeros(64, np.uint8)
    return {
        "parse_jsonl": (buf, ints, starts, aid, ints, typ, 2**31 - 1),
        "run_starts": (aid,),
        "copy_checked_int32": (frozen(ints), aid, 0, np.int64(1)),
        "copy_checked_int64": (frozen(ints), ints, 0, np.int64(1)),
        "copy_checked_int8": (frozen(ints), typ, 0, np.int64(1)),
        "unordered_sessions": (ints, starts),
        "sort_sessions_by_time": (ints, aid, typ, starts, flags),
        "max_ts_of": (ints,),
        "split_roles": (ints, starts, np.int64(0)),
        "train_item_bitmap": (aid, starts, typ, ints, 0),
        "filter_test": (ints, aid, ints, typ, starts, typ, flags),
        "cut_points": (ints, starts, np.uint64(0)),
        "labels_after_cut": (starts, ints, aid, typ),
        "gather_events": (starts, ints, ints, aid, ints, typ, aid, aid, ints, typ, ints),
        "format_sessions": (starts, ints, ints, ints, aid, ints, typ, out),
        "format_labels": (0, 1, ints, starts, typ, ints, out),
        "splitmix64": (np.uint64(0),),
    }


def _audit() -> dict[str, tuple]:
    """`scorer audit`'s perfect, empty and random submissions (scorer.analytics.audit)."""
    ints, text = np.zeros(_ROWS, np.int64), np.zeros(8, np.uint8)
    indptr = np.zeros(_ROWS, INDPTR_DTYPE)
    return {"write_rows": (np.zeros(64, np.uint8), 0, 1, ints, 3, text, ints, text, ints, indptr, ints, 0, 20, 0, 0, ints, 0)}


def _partitions() -> dict[str, tuple]:
    """Partitioned scoring on Dask (scorer.dask): sessions and string ids to their partition, the truth's lines split."""
    data, ints = frozen(np.zeros(16, np.uint8)), np.zeros(_ROWS, np.int64)
    names = _shape_kernel()[1]
    return {
        "session_partitions": (np.zeros(16, np.uint8), frozen(ints), 0, 95, 4, ints, ints),
        "partition_of_ids": (frozen(ints), 4, ints),
        "string_partitions": (frozen(np.zeros(16, np.uint8)), frozen(ints), 4, ints),
        "strings_known": (np.zeros(16, np.uint8), frozen(ints), *map(frozen, names.arrays()), np.zeros(_ROWS, np.bool_)),
        "jsonl_sessions": (data, 16, ints, ints, ints),
        "gather_lines": (data, ints, ints, ints, np.zeros(32, np.uint8)),
    }


def _solution() -> dict[str, tuple]:
    """A Kaggle solution's columns read from their Arrow buffers (scorer.adapters.kaggle)."""
    data, offsets, ints = frozen(np.zeros(16, np.uint8)), frozen(np.zeros(_ROWS + 1, np.int64)), np.zeros(_ROWS, np.int64)
    return {"plain_ids": (data, offsets, np.uint8(95), frozen(np.zeros(8, np.uint8)), ints, ints, ints),
            "label_items": (data, offsets)}


def _impressions() -> dict[str, tuple]:
    """The impression shape (scorer.engine.impression_kernel): MIND's config over a two-impression truth."""
    from scorer.engine.impression_kernel import ImpressionKernel
    from scorer.spec.competition import load_competition
    from scorer.truth.impressions import ImpressionTruth

    truth = ImpressionTruth(("all",), np.array([1, 2], np.int64), np.array([0, 2, 4], INDPTR_DTYPE), np.array([6], np.uint8))
    kernel = ImpressionKernel(load_competition("mind"), truth, 1)
    slot_line, slot_values = np.zeros(2, LINE_DTYPE), np.zeros((2, kernel.n_metrics))
    counts, found = _problems(kernel)
    block = frozen(np.zeros(16, np.uint8))
    ints = np.zeros(_ROWS, np.int64)
    return {
        "impression_block": (block, 0, 1, np.int64(0), kernel.truth_arrays, kernel.metric, kernel.limits, kernel.scratch(), slot_line,
                             slot_values, counts, found, 0),
        "fill_missing": (slot_line, kernel.truth_arrays[2], kernel.truth_arrays[3], kernel.metric, kernel.scratch(), slot_values),
        "count_lines": (block, 0, 16),
        "read_impression_truth": (np.zeros(16, np.uint8), 8, ints, ints, np.zeros(_ROWS, np.uint8), np.zeros(6, np.int64)),
        "impression_frame_rows": (0, 2, frozen(ints), frozen(ints), frozen(np.zeros(_ROWS)), kernel.truth_arrays, kernel.metric, kernel.scratch(),
                                  slot_line, slot_values, counts, found, 0, 1),
    }


_STAGES = {"score": _score, "strings": _strings, "explain": _explain, "candidates": _candidates, "resample": _resample,
           "prepare": _prepare, "audit": _audit, "partitions": _partitions, "solution": _solution,
           "impressions": _impressions}
