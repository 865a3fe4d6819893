"""A score's per-session figures as a pyarrow Table (scorer.score(..., per_session=True): Result.sessions).

One row per truth session and type that a metric counts (the rows with truth; every row where a metric counts empty
ones: empty=zero, signed_jaccard), nothing per item:
  session      the session's id (an integer, or the id text of the string shapes);
  type         the type's name;
  line         the submission's line whose row counted (a frame's row + 1), null where it has none;
  truth        |T|, the row's truth items (the impression shape: its candidates);
  weight       only where the competition's rules weigh rows (missing = skip, repeated_key = all): how many times the row
               counts in a mean;
  hits, denominator   the scored metric's parts: its total for a type is Σ hits / Σ denominator over the type's rows
               (recall@K: the hits in the first K and min(K, |T|); a mean over rows: the row's figure and 1, times its
               weight), null where the scored metric is no such ratio (rmse, signed_jaccard, the value shape's curves);
  one column per metric whose total comes from its rows: the row's figure as the pass keeps it (the hits for recall,
               precision, hitrate and f1@k; AP, NDCG, RR, Jaccard, set F1, AUC; the squared or absolute error for rmse,
               mae); docs/api.md says how each metric's total sums its column. Figures of all the rows at once (roc_auc,
               pr_auc, log_loss, rce, coverage, the beyond-accuracy metrics) have none.
"""

from __future__ import annotations

import numpy as np

from scorer.spec.totals import RatingMean, RowRatio, SignedJaccard

ID_PIECE = 1 << 16  # string ids gathered this many at a time (no index array over all their bytes)


def per_row(metric) -> bool:
    """Is the metric's total formed from per-row figures (not a figure of the whole file's rows at once)?"""
    return isinstance(metric.kind.total, (RowRatio, RatingMean, SignedJaccard))


def counts_empty(metric) -> bool:
    """Does the metric count rows without truth (empty=zero, or signed_jaccard's -b)?"""
    if isinstance(metric.kind.total, SignedJaccard):
        return True
    return "empty" in dict(metric.kind.options) and metric.option("empty") == "zero"


def session_table(competition, truth, outcome):
    """The Table of the module docstring, of a pass's outcome over the truth."""
    import pyarrow as pa

    n_types = len(competition.types)
    metrics = [(j, metric) for j, metric in enumerate(competition.metrics) if per_row(metric)]
    every_row = any(counts_empty(metric) for _, metric in metrics)
    scored = competition.metrics[0]
    weights = getattr(outcome, "weights", None)
    parts: dict[str, list] = {name: [] for name in ("index", "type", "line", "truth", "weight", "hits", "denominator")}
    columns: dict[str, list] = {str(metric): [] for _, metric in metrics}
    for t in range(n_types):
        sizes = truth.type_sizes(t).astype(np.int64)
        keep = np.arange(len(sizes)) if every_row else np.flatnonzero(sizes > 0)
        weight = None if weights is None else np.asarray(weights[t::n_types], np.float64)[keep]
        parts["index"].append(keep)
        parts["type"].append(np.full(len(keep), t, np.int8))
        parts["truth"].append(sizes[keep])
        parts["line"].append(np.asarray(outcome.slot_line[t::n_types], np.int32)[keep])
        parts["weight"].append(np.ones(len(keep)) if weight is None else weight)
        scored_values = None
        for j, metric in metrics:
            values = np.asarray(outcome.figures.column(j, t, n_types), np.float64)[keep]
            columns[str(metric)].append(values)
            scored_values = values if j == 0 else scored_values
        ratio = None if scored_values is None else scored.ratio_parts(scored_values, sizes[keep], weight)
        nothing = np.full(len(keep), np.nan)
        parts["hits"].append(nothing if ratio is None else np.asarray(ratio[0], np.float64))
        parts["denominator"].append(nothing if ratio is None else np.asarray(ratio[1], np.float64))
    joined = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    table = {
        "session": _session_ids(truth, joined["index"]),
        "type": pa.DictionaryArray.from_arrays(pa.array(joined["type"], pa.int8()), pa.array(list(competition.types))),
        "line": pa.array(joined["line"], mask=joined["line"] == 0),
        "truth": pa.array(joined["truth"]),
        **({} if weights is None else {"weight": pa.array(joined["weight"])}),
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
