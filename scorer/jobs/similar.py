"""scorer.similar: pairwise similarity of submissions from one-pass sketches (`scorer similar` prints its report)."""

from __future__ import annotations

from contextlib import ExitStack

from scorer.analytics.similar.defaults import DEFAULT_SAMPLE, DEFAULT_Z
from scorer.errors import UsageError
from scorer.jobs.board import Board

PAIR_COLUMNS = ("a", "b", "team_a", "team_b", "same_team", "flagged", "z", "identical", "jaccard", "rank_agreement",
                "z_identical", "z_jaccard", "z_rank_agreement", "rows_compared")


class Similarity(Board):
    """The report of `scorer similar`: to_dict() its JSON (the files, the measures' distribution over all pairs, the
    flagged pairs and the most similar others, with example sessions), to_text() its text; to_arrow() one row per pair
    listed (the flagged, then the most similar others: `top` of them). matrix: what the page draws (not JSON)."""

    columns = PAIR_COLUMNS

    def __init__(self, data: dict, matrix: dict):
        super().__init__(data)
        self.matrix = matrix

    def to_text(self) -> str:
        from scorer.analytics.similar.pairs import render_text

        return render_text(self.data)

    def rows(self) -> list[dict]:
        return [{key: pair[key] for key in PAIR_COLUMNS} for pair in (*self.data["flagged"], *self.data["most_similar_others"])]

    def _repr_html_(self) -> str:
        from scorer.engine import display

        data = self.data
        flagged = len(data["flagged"])
        title = (f"{flagged:,} pair(s) of different teams flagged" if flagged else "no pair of different teams flagged")
        detail = (f"of {len(data['files']):,} submissions ({data['pairs']:,} pairs), at {data['threshold_z']:g} spreads above "
                  f"the median, on a sample of {data['sample']:,} sessions (first {data['k']} items)")
        teams = any(row["team_a"] != row["a"] or row["team_b"] != row["b"] for row in self.rows())  # a teams file was given
        shown = ("a", "b", *(("team_a", "team_b") if teams else ()), "flagged", "z", "identical", "jaccard", "rank_agreement")
        return display.block(display.heading(title, detail), display.table(shown, [[row[c] for c in shown] for row in self.rows()]))


def similar(submissions, *, competition="otto", config=None, teams=None, k: int | None = None, sample: int = DEFAULT_SAMPLE,
            z: float = DEFAULT_Z, top: int = 20, threads: int = 2) -> Similarity:
    """Pairwise similarity of submission files (identical lists, Jaccard, rank agreement) to find solutions shared between
    teams; the options are those of `scorer similar`.

    submissions: a list of paths and frames (at least two), or a dict {name: path or frame} (a frame is sketched from its
    rows written as the competition's CSV to a private temporary file); teams: a teams file (CSV file,team or
    JSON, as `scorer ladder` reads it) or a dict {path or name: team}: pairs of one team are never flagged (default:
    every file is its own team).
    """
    from scorer.analytics.similar.pairs import similarity
    from scorer.analytics.similar.sketch import sketch_files, spec_of
    from scorer.analytics.teams_file import read_teams, team_lookup
    from scorer.api import resolve_competition
    from scorer.frames import is_frame
    from scorer.jobs import options as check

    competition = resolve_competition(competition, config)
    spec = spec_of(competition)
    k = competition.k if k is None else check.whole("k", k, 1, 1000)
    check.whole("sample", sample, 16, 1 << 20)
    check.whole("top", top, 0, 10**6)
    check.whole("threads", threads, 1, 64)
    names, sources = check.named(submissions)
    if len(sources) < 2:
        raise UsageError("give at least two different submission files to compare")
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 < z < float("inf"):
        raise UsageError(f"--z {z}: give a positive number of spreads")
    if isinstance(teams, dict):  # {name: team}: a path given is its own name
        listed = {str(name): str(team) for name, team in teams.items()}
        found = [listed.get(name) for name in names]
    else:
        team_of = team_lookup(read_teams(teams, times=False) if teams else [])
        found = [team_of(name if is_frame(source) else source) for name, source in zip(names, sources)]
    if teams and all(team is None for team in found):
        raise UsageError(f"no submission is listed in the teams file {teams} (by its path or its file name)" if not isinstance(teams, dict)
                         else "no submission is named in teams (by its path, or its name in submissions)")
    with ExitStack() as stack:  # a frame is sketched from its CSV, written to a private temporary folder
        files = [stack.enter_context(check.written(source, competition))[0] if is_frame(source) else source for source in sources]
        sketches = sketch_files(files, sample, k, threads, spec)
    for sketch, name in zip(sketches, names):
        sketch.name = name
    labels = [team if team is not None else name for team, name in zip(found, names)]
    report = {"competition": competition.name, **similarity(sketches, labels, k, float(z), top, threads)}
    matrix = report.pop("matrix")
    return Similarity(report, matrix)

