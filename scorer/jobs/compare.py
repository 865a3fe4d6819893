"""scorer.compare: is A really better than B? The paired difference, its interval, the p-value, the sessions each wins
(`scorer compare` prints its report)."""

from __future__ import annotations

import numpy as np

from scorer.frames import Tabular

ROW_COLUMNS = ("sessions", "row", "a", "b", "difference", "low", "high", "p_value", "wins", "ties", "losses")


class Comparison(Tabular):
    """What `scorer compare` reports. results: the Results of A and B; figures: {sessions: the paired figures} (sessions
    "all", or "public", "private" and "all" with a split), None when either file has no score; to_dict() the command's
    JSON, to_text() its text; to_arrow() one row per sessions and row (the weighted score, then each type): A, B, A - B,
    its interval, the p-value, the sessions A wins, ties and loses; sessions: the paired per-session table (compare(...,
    per_session=True))."""

    def __init__(self, results: list, figures: dict | None, beyond: dict, split, paired=None):
        self.results, self.figures, self.beyond, self.split, self.paired = results, figures, beyond, split, paired

    @property
    def ok(self) -> bool:
        return self.figures is not None

    @property
    def exit_code(self) -> int:
        """The command's: 1 when either file has no score, else 0."""
        return 0 if self.ok else 1

    @property
    def sessions(self):
        """A pyarrow Table, one row per truth session and type: session, type, the lines of A's and B's rows, the scored
        metric's hits of A and of B and its denominator, difference (A's hits - B's), contribution (that row's part of the
        weighted score's difference: weight x difference / the type's Σ denominator) and outcome ("win", "tie" or "loss"
        for A; null where the row has no truth)."""
        from scorer.errors import UsageError

        if self.paired is None:
            raise UsageError("no per-session figures: compare with per_session=True to keep them (scorer.compare(..., per_session=True))"
                             if self.ok else "no per-session figures: a file has no score")
        return self.paired

    def to_dict(self) -> dict:
        a, b = (r.to_dict() for r in self.results)
        if not self.ok:
            return {"a": a, "b": b, "comparison": None}
        out = {"a": a, "b": b, "comparison": self.figures}
        if self.beyond:
            out["beyond"] = self.beyond
        if self.split is not None:
            out["split"] = {"source": self.split.source, "sessions": self.split.counts()}
        return out

    def to_text(self) -> str:
        from scorer.analytics.compare import render_beyond, render_text
        from scorer.engine.result import render_problems

        lines: list[str] = []
        if not self.ok:
            for r in self.results:
                if r.score is not None and r.slot_values is not None:
                    continue
                if r.unread is not None:
                    lines.append(f"{r.submission}: no score: {r.unread}")
                    continue
                lines.append(f"{r.submission}: no score" + (" (strict mode)" if r.strict else ""))
                problems = render_problems(r.report)
                if problems:
                    lines.append(problems)
            return "\n".join(lines)
        for name, figure in self.figures.items():
            if self.split is not None:
                lines.append(f"== {name} sessions ({self.split.source}) ==")
            lines += [render_text(figure, f" on the {name} sessions" if self.split is not None else ""), ""]
        if self.beyond:
            lines += [render_beyond(self.beyond), ""]
        for r, label in zip(self.results, "AB"):
            counts = r.report.summary()
            if counts:
                lines.append(f"{label} ({r.submission}): " + ", ".join(f"{row['code']} {row['count']:,}" for row in counts))
        return "\n".join(lines)

    def to_arrow(self):
        import pyarrow as pa

        rows = []
        for name, figure in (self.figures or {}).items():
            for row_name, row in [("score", figure["score"]), *figure["types"].items()]:
                rows.append({"sessions": name, "row": row_name, **{key: row[key] for key in ROW_COLUMNS[2:]}})
        types = {"sessions": pa.string(), "row": pa.string(), "wins": pa.int64(), "ties": pa.int64(), "losses": pa.int64()}
        return pa.table({key: pa.array([row[key] for row in rows], types.get(key, pa.float64())) for key in ROW_COLUMNS})

    def _repr_html_(self) -> str:
        from scorer.analytics.compare import p_text
        from scorer.engine import display
        from scorer.wording import fixed

        if not self.ok:
            return display.block(display.heading("no comparison:", "a file has no score"),
                                 *(display.problems(r.report) for r in self.results))
        whole = self.figures["all"]
        row = whole["score"]
        span = "" if row["low"] is None else f" [{fixed(row['low'], 6, '+')}, {fixed(row['high'], 6, '+')}], p {p_text(row['p_value'])}"
        table = self.to_arrow()
        return display.block(display.heading(f"A - B = {fixed(row['difference'], 6, '+')}{span}",
                                             f"(A {fixed(row['a'])}, B {fixed(row['b'])}: {whole['metric']}, weighted)"),
                             display.paragraph(f"A = {whole['a']}; B = {whole['b']}"),
                             display.paragraph(f"paired over {whole['sessions']:,} sessions; {whole['resamples']:,} resamples "
                                               f"(seed {whole['seed']}), {100 * whole['level']:g}% percentile interval (low, high), "
                                               "two-sided randomization p-value"),
                             display.table(table.column_names, [list(r.values()) for r in table.to_pylist()]),
                             *(display.paragraph(f"{label} ({r.submission}):") + display.problems(r.report)
                               for r, label in zip(self.results, "AB") if r.report.summary()))


def compare(a, b, truth, *, competition="otto", config=None, strict: bool = False, bootstrap: int = 1000, seed: int = 0,
            level: float = 0.95, split: str | None = None, items=None, train=None, metrics: str | None = None,
            max_per_code: int = 20, threads: int = 2, progress: bool | None = False, untrusted: bool = False,
            per_session: bool = False) -> Comparison:
    """Compare two submissions on the same truth: the paired bootstrap interval and randomization p-value of the
    difference, per type and weighted, and the sessions each wins; the options are those of `scorer compare`.

    a, b: paths or frames; split: "public=F" or "usage" (also compare on the public and private sessions); items, train,
    metrics: the beyond-accuracy diagnostics, side by side; per_session: keep the paired per-session table (.sessions).
    """
    from scorer.analytics.compare import beyond_sides
    from scorer.analytics.compare import compare as paired
    from scorer.api import resolve_competition, resolve_truth, score
    from scorer.errors import UsageError
    from scorer.jobs.options import resampling, split_of, split_wanted, with_items

    bootstrap, seed, level = resampling(bootstrap, seed, level)
    wanted = split_wanted(split)
    competition, side = with_items(resolve_competition(competition, config), metrics, items, train)
    truth_read = resolve_truth(truth, competition)
    if truth_read.n_sessions == 0:
        raise UsageError(f"the truth {truth} has no sessions: nothing to compare")
    resolved = split_of(wanted, truth_read, truth, seed)
    # each file scored in turn (each pass already uses the threads), then paired per session
    results = [score(source, truth_read, competition, strict=strict, items=side, max_per_code=max_per_code, threads=threads,
                     progress=progress, untrusted=untrusted, per_session=per_session) for source in (a, b)]
    if any(r.score is None or r.slot_values is None for r in results):
        return Comparison(results, None, {}, resolved)
    subsets = {"all": None} if resolved is None else {"public": resolved.mask("public"), "private": resolved.mask("private"),
                                                      "all": resolved.mask("all")}
    figures = {name: paired(*results, n=bootstrap, seed=seed, level=level, keep=keep, threads=threads) for name, keep in subsets.items()}
    return Comparison(results, figures, beyond_sides(*results), resolved, paired_sessions(*results) if per_session else None)


def paired_sessions(result_a, result_b):
    """The paired per-session table of Comparison.sessions, from the two Results' per-session tables (the same rows: one
    truth, one competition)."""
    import pyarrow as pa

    a, b = result_a.sessions, result_b.sessions
    hits_a, hits_b = a["hits"].to_numpy(), b["hits"].to_numpy()
    denominator = a["denominator"].to_numpy()
    types = a["type"].combine_chunks().indices.to_numpy(zero_copy_only=False)
    weights = np.array([result_a.weights[t] for t in result_a.metrics], np.float64)
    totals = np.bincount(types, weights=denominator, minlength=len(weights))
    difference = hits_a - hits_b
    share = np.divide(weights[types], totals[types], out=np.zeros(len(types)), where=totals[types] > 0)
    outcome = np.where(difference > 0, "win", np.where(difference < 0, "loss", "tie"))
    return pa.table({"session": a["session"], "type": a["type"], "line_a": a["line"], "line_b": b["line"], "hits_a": hits_a,
                     "hits_b": hits_b, "denominator": denominator, "difference": difference, "contribution": difference * share,
                     "outcome": pa.array(outcome, mask=~(denominator > 0)).dictionary_encode()})
