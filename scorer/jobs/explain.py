"""scorer.explain: a submission under every published convention beside ours, and the rows behind each gap
(`scorer explain` prints its report)."""

from __future__ import annotations


def explain(submission, truth, *, competition="otto", config=None, against: str | None = None, show: int = 5, all: bool = False,
            threads: int = 2, untrusted: bool = False):
    """Score a submission under other evaluators' conventions (OTTO's evaluate.py, apk, trec_eval, ranx, ...; for the
    impression shape gauc, first-click MRR, tie order, fill) and show what makes each gap; the options are those of
    `scorer explain` (against: comma-separated conventions, default all that apply; show: rows listed per rule; all: the
    text also lists the rules that move no figure).

    Returns a scorer.analytics.explain.published.Explanation (the impression shape: an ImpressionExplanation). The submission is a
    path or a frame; the id_type shape reads a file twice (the second time for each row's masks), so a frame of it is
    written to a private temporary CSV first, whose line N is the frame's row N - 2 in the problems.
    """
    from scorer.api import resolve_competition
    from scorer.errors import UsageError
    from scorer.frames import as_arrow, is_frame, is_stream
    from scorer.jobs.options import whole, written

    if against is not None and not isinstance(against, str):
        raise UsageError(f"against must be the conventions' names, comma-separated (such as 'gauc,tie_order'), not a {type(against).__name__}")
    whole("show", show, 0, 10_000)
    whole("threads", threads, 1, 64)
    resolved = resolve_competition(competition, config)
    if resolved.shape in ("list", "long", "value"):  # each rule at the edges turned ("rule=value,..." in against)
        from scorer.analytics.explain.rules import explain_rules

        explanation = explain_rules(submission, truth, resolved, against=against, threads=threads, untrusted=untrusted, shown=show)
    elif resolved.shape == "impression":
        from scorer.analytics.explain.impressions import explain_impressions

        if is_stream(submission) and type(submission).__name__ == "RecordBatchReader":
            submission = as_arrow(submission)  # scored once per convention: a reader is read once
        explanation = explain_impressions(submission, truth, resolved, against=against, threads=threads, untrusted=untrusted,
                                          shown=show)
    else:
        from scorer.analytics.explain.published import explain as explain_file

        if is_frame(submission):
            with written(submission, resolved) as (path, name):
                explanation = explain_file(path, truth, resolved, against=against, threads=threads, shown=show)
            explanation.result.submission = name
        else:
            explanation = explain_file(submission, truth, resolved, against=against, threads=threads, untrusted=untrusted, shown=show)
    explanation.all_rules = bool(all)
    return explanation
