"""A score's per-session figures as a pyarrow Table (scorer.score(..., per_session=True): Result.sessions).

One row per truth session and type that a metric counts (the rows with truth; every row where a metric counts empty
ones, empty=zero), nothing per item:
  session      the session's id (an integer, or the id text of the string shapes);
  type         the type's name;
  line         the submission's line whose row counted (a frame's row + 1), null where it has none;
  truth        |T|, the row's truth items (the impression shape: its candidates);
  hits, denominator   the scored metric's parts: its total for a type is Σ hits / Σ denominator over the type's rows
               (recall@K: the hits in the first K and min(K, |T|); a mean over rows: the row's figure and 1), null
               where the scored metric is no such ratio (rmse, mae);
  one column per metric whose total comes from its rows: the row's figure as the pass keeps it (the hits for recall,
               precision, hitrate and f1@k; AP, NDCG, RR, set F1, AUC; the squared or absolute error for rmse, mae);
               docs/api.md says how each metric's total sums its column.
"""

from __future__ import annotations

import numpy as np

from scorer.spec.metrics import BEYOND, CATALOG

ID_PIECE = 1 << 16  # string ids gathered this many at a time (no index array over all their bytes)


def per_row(metric) -> bool:
    """Is the metric's total formed from per-row figures (not a catalogue or beyond-accuracy figure of the whole file)?"""
    return metric.family not in (CATALOG, BEYOND)


def counts_empty(metric) -> bool:
    return "empty" in dict(metric.kind.options) and metric.option("empty") == "zero"


def session_table(competition, truth, outcome):
    """The Table of the module docstring, of a pass's outcome over the truth."""
    import pyarrow as pa

    n_types = len(competition.types)
    metrics = [(j, metric) for j, metric in enumerate(competition.metrics) if per_row(metric)]
    every_row = any(counts_empty(metric) for _, metric in metrics)
    scored = competition.metrics[0]
    parts: dict[str, list] = {name: [] for name in ("index", "type", "line", "truth", "hits", "denominator")}
    columns: dict[str, list] = {str(metric): [] for _, metric in metrics}
    for t in range(n_types):
        sizes = truth.type_sizes(t).astype(np.int64)
        keep = np.arange(len(sizes)) if every_row else np.flatnonzero(sizes > 0)
        parts["index"].append(keep)
        parts["type"].append(np.full(len(keep), t, np.int8))
        parts["truth"].append(sizes[keep])
        parts["line"].append(np.asarray(outcome.slot_line[t::n_types], np.int32)[keep])
        for j, metric in metrics:
            values = np.asarray(outcome.figures.column(j, t, n_types), np.float64)[keep]
            columns[str(metric)].append(values)
            if j == 0:
                ratio = scored.ratio_parts(values, sizes[keep]) or (np.full(len(keep), np.nan),) * 2
                parts["hits"].append(np.asarray(ratio[0], np.float64))
                parts["denominator"].append(np.asarray(ratio[1], np.float64))
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    table = {
        "session": _session_ids(truth, joined["index"]),
        "type": pa.DictionaryArray.from_arrays(pa.array(joined["type"], pa.int8()), pa.array(list(competition.types))),
        "line": pa.array(joined["line"], mask=joined["line"] == 0),
        "truth": pa.array(joined["truth"]),
        "hits": pa.array(joined["hits"], from_pandas=True),  # NaN (no ratio) as null
        "denominator": pa.array(joined["denominator"], from_pandas=True),
    }
    table.update({name: pa.array(np.concatenate(values)) for name, values in columns.items()})
    return pa.table(table)


def _session_ids(truth, index: np.ndarray):
    """The ids of the truth's sessions at `index`: integers, or the string shapes' id texts."""
    import pyarrow as pa

    names = getattr(truth, "ids", None)
    if names is None:
        return pa.array(np.asarray(truth.sessions, np.int64)[index])
    pieces = []
    for start in range(0, len(index), ID_PIECE):
        pick = index[start : start + ID_PIECE]
        begins, ends = names.starts[pick], names.ends[pick]
        offsets = np.zeros(len(pick) + 1, np.int64)
        np.cumsum(ends - begins, out=offsets[1:])
        gather = np.repeat(begins - offsets[:-1], ends - begins) + np.arange(offsets[-1])
        data = np.asarray(names.keys)[gather]
        pieces.append(pa.LargeStringArray.from_buffers(len(pick), pa.py_buffer(offsets), pa.py_buffer(data)))
    return pa.chunked_array(pieces, pa.large_string()) if pieces else pa.array([], pa.large_string())
