"""scorer.explain: a submission under every published convention beside ours, and the rows behind each gap
(`scorer explain` prints its report)."""

from __future__ import annotations

from scorer.errors import UsageError


def explain(submission, truth, *, competition="otto", config=None, against: str | None = None, show: int = 5, all: bool = False,
            threads: int = 2, untrusted: bool = False):
    """Score a submission under other evaluators' conventions (OTTO's evaluate.py, apk, trec_eval, ranx, ...; for the
    impression shape gauc, first-click MRR, tie order, fill) and show what makes each gap; the options are those of
    `scorer explain` (against: comma-separated conventions, default all that apply; show: rows listed per rule; all: the
    text also lists the rules that move no figure).

    Returns a scorer.analytics.explain.Explanation (the impression shape: an ImpressionExplanation). The id_type shape
    reads the file a second time for the rows' masks, so it takes a path; the impression shape also takes a frame.
    """
    from scorer.api import resolve_competition
    from scorer.frames import is_frame, is_stream
    from scorer.jobs.options import whole

    whole("show", show, 0, 10_000)
    whole("threads", threads, 1, 64)
    resolved = resolve_competition(competition, config)
    if resolved.shape == "impression":
        from scorer.analytics.impression_explain import explain_impressions as explain_file

        if is_stream(submission) and type(submission).__name__ == "RecordBatchReader":
            submission = submission.read_all()  # scored once per convention: a reader is read once
    else:
        from scorer.analytics.explain import explain as explain_file

        if is_frame(submission):
            raise UsageError("explain reads an id_type submission's file twice (the second time for each row's masks): give its "
                             "path, not a frame (write the frame to its CSV first)")
    explanation = explain_file(submission, truth, resolved, against=against, threads=threads, untrusted=untrusted, shown=show)
    explanation.all_rules = bool(all)
    return explanation
