"""`scorer explain`: a submission scored under every published convention beside ours, and the rows behind each gap.

The file is scored once by the engine (its problems, our figures, each row's line), then read once more by
scorer.engine.explain_pass for the masks the conventions need. Per type, one kernel call
(scorer.kernels.conventions) sums every convention metric and every intermediate step: ours, then ours with
the first rule, the first two, ... So each rule's part of a gap is the change its step makes, and its rows
are those whose figure (or whether they count) it changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scorer.analytics.explain.conventions import BY_NAME, CONVENTIONS, OTTO_TYPES, OUR_METRICS, RULES, Convention, pooled
from scorer.api import resolve_competition, score
from scorer.engine.explain_pass import read_truth_rows
from scorer.engine.result import Result, finite_or_none
from scorer.errors import UsageError
from scorer.frames import Tabular
from scorer.kernels import door
from scorer.kernels.explain_layout import MAX_RANKS, N_ROWS, N_TOUCHED, RULE_PER_ROW_MEAN, SUM_DEN, SUM_NUM, SUM_RATIO
from scorer.wording import counted, fixed

SHOWN = 5  # rows listed per rule


@dataclass
class Explanation(Tabular):
    """What `scorer explain` reports (scorer.explain): to_dict() its JSON, to_text() its text (all_rules: also the rules
    that touch rows without moving a figure); to_arrow() one row per convention, metric and type: ours, theirs, the gap."""

    result: Result  # the engine's score of the file
    k: int
    conventions: list = field(default_factory=list)  # dicts, as to_dict() gives them
    notes: list = field(default_factory=list)
    all_rules: bool = False  # the text's default

    def to_dict(self) -> dict:
        result = self.result
        return {"submission": result.submission, "competition": result.competition, "k": self.k, "rules": self.rules(),
                "score": finite_or_none(result.score), "valid": result.valid, "metrics": result.metrics,
                "problem_counts": result.report.summary(),
                "conventions": self.conventions, "notes": self.notes}

    def rules(self) -> dict[str, str]:
        """The rules the conventions scored apply, each with what it does, in RULES' order."""
        used = {rule["rule"] for convention in self.conventions for entry in convention["metrics"] for rule in entry["rules"]}
        return {name: what for name, what in RULES.values() if name in used}

    def to_text(self, all_rules: bool | None = None) -> str:
        """The text (all_rules: also the rules that touch rows without moving a figure; default: as explain was asked)."""
        return render_text(self, self.all_rules if all_rules is None else all_rules)

    def rows(self) -> list[dict]:
        return [{"convention": convention["name"], "metric": entry["metric"], "type": entry["type"], "ours_metric": entry["ours_metric"],
                 "ours": entry["ours"], "theirs": entry["theirs"], "gap": entry["gap"],
                 "rows": sum(rule["rows"] for rule in entry["rules"])}
                for convention in self.conventions for entry in convention["metrics"]]

    def to_arrow(self):
        return rows_table(self.rows(), ("convention", "metric", "type", "ours_metric", "ours", "theirs", "gap", "rows"))

    def _repr_html_(self) -> str:
        return explanation_html(self.result, f"each evaluator's metric is ours with its rules applied (K = {self.k})", self.to_arrow(),
                                self.notes)


def choose(names: str | None, types: tuple[str, ...]) -> list[Convention]:
    """The conventions named (comma-separated), or all that apply to these types."""
    otto = tuple(types) == OTTO_TYPES
    if names is None:
        return [c for c in CONVENTIONS if c.default and (otto or not c.otto_only)]
    chosen = []
    for name in (part.strip() for part in names.split(",") if part.strip()):
        if name not in BY_NAME:
            raise UsageError(f"unknown convention {name!r}; known: {', '.join(BY_NAME)}")
        if BY_NAME[name].otto_only and not otto:
            raise UsageError(f"convention {name!r} is defined for OTTO's types {', '.join(OTTO_TYPES)} only")
        chosen.append(BY_NAME[name])
    if not chosen:
        raise UsageError(f"--against names no convention; known: {', '.join(BY_NAME)}")
    return chosen


@dataclass
class _Steps:
    """Every (base metric, rules so far) the chosen conventions pass through, each with the step it adds a rule to."""

    base: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    prev: list = field(default_factory=list)
    index: dict = field(default_factory=dict)

    def add(self, base: int, rules: int, prev: int) -> int:
        key = (base, rules, prev)
        if key not in self.index:
            self.index[key] = len(self.base)
            self.base.append(base)
            self.rules.append(rules)
            self.prev.append(prev)
        return self.index[key]

    def chain(self, base: int, rules: tuple[int, ...]) -> list[int]:
        """The steps of one convention metric: ours, then one rule more at a time."""
        steps = [self.add(base, 0, -1)]
        applied = 0
        for rule in rules:
            applied |= rule
            steps.append(self.add(base, applied, steps[-1]))
        return steps

    def arrays(self):
        regroups = [p >= 0 and bool(r & RULE_PER_ROW_MEAN) and not self.rules[p] & RULE_PER_ROW_MEAN for r, p in zip(self.rules, self.prev)]
        return (np.array(self.base, np.int64), np.array(self.rules, np.int64), np.array(self.prev, np.int64), np.array(regroups, np.bool_))


def _value(base: int, rules: int, sums: np.ndarray, counts: np.ndarray) -> float:
    if pooled(base, rules):
        return float(sums[SUM_NUM] / sums[SUM_DEN]) if sums[SUM_DEN] > 0 else float("nan")
    return float(sums[SUM_RATIO] / counts[N_ROWS]) if counts[N_ROWS] > 0 else float("nan")


def explain(submission, truth, competition="otto", *, config=None, against: str | None = None, threads: int = 2,
            max_per_code: int = 20, untrusted: bool = False, shown: int = SHOWN) -> Explanation:
    """Score a submission file under the conventions named in `against` (comma-separated; None: all that apply)."""
    competition = resolve_competition(competition, config)
    if competition.shape != "id_type":
        raise UsageError(f"explain reads submissions of the id_type shape (OTTO's); {competition.name!r} has shape {competition.shape!r}")
    if competition.k > MAX_RANKS:
        raise UsageError(f"explain handles K up to {MAX_RANKS}; {competition.name!r} has K = {competition.k}")
    chosen = choose(against, competition.types)
    result = score(submission, truth, competition, threads=threads, max_per_code=max_per_code, untrusted=untrusted)
    explanation = Explanation(result, competition.k)
    if result.outcome is None:  # unreadable: its problem says why
        return explanation
    truth = result.truth
    rows = read_truth_rows(submission, competition, truth, threads=threads, untrusted=untrusted)
    steps = _Steps()
    chains = {(c.name, j): steps.chain(m.base, m.rules) for c in chosen for j, m in enumerate(c.metrics)}
    step_arrays = steps.arrays()
    n_types, k = len(competition.types), competition.k
    per_type = []
    for t, type_name in enumerate(competition.types):
        pick = slice(rows.type_starts[t], rows.type_starts[t + 1])  # views: the rows come by type
        slots, sizes = rows.slots[pick], rows.sizes[pick]
        zero_label = rows.label0[pick] if type_name == "clicks" else np.zeros(len(slots), np.bool_)
        sums = np.zeros((len(steps.base), 3))
        counts = np.zeros((len(steps.base), 2), np.int64)
        first_rows = np.full((len(steps.base), shown), -1, np.int64)
        door.kernel("convention_sums")(rows.hits[pick], rows.repeats[pick], rows.n_items[pick], sizes, zero_label, np.int64(k),
                        *step_arrays, sums, counts, first_rows)
        values = [_value(b, r, sums[s], counts[s]) for s, (b, r) in enumerate(zip(steps.base, steps.rules))]
        per_type.append((slots, values, counts, first_rows))

    def name_row(slot: int) -> dict:
        session, kind = divmod(int(slot), n_types)
        line = int(result.slot_line[slot])
        return {"row": competition.id_pattern.format(session=int(truth.sessions[session]), type=competition.types[kind]),
                "line": line or None}

    for convention in chosen:
        entries = []
        for j, metric in enumerate(convention.metrics):
            chain = chains[(convention.name, j)]
            for t, type_name in enumerate(competition.types):
                slots, values, counts, first_rows = per_type[t]
                rules = []
                for rule, step in zip(metric.rules, chain[1:]):
                    prev = steps.prev[step]
                    rules.append({"rule": RULES[rule][0], "description": RULES[rule][1], "rows": int(counts[step, N_TOUCHED]),
                                  "change": finite_or_none(values[step] - values[prev]),
                                  "first": [name_row(slots[i]) for i in first_rows[step] if i >= 0]})
                ours, theirs = values[chain[0]], values[chain[-1]]
                entries.append({"metric": metric.name.format(k=k), "ours_metric": OUR_METRICS[metric.base].format(k=k), "type": type_name,
                                "ours": finite_or_none(ours), "theirs": finite_or_none(theirs), "gap": finite_or_none(theirs - ours),
                                "rules": rules})
        record = {"name": convention.name, "source": convention.source, "note": convention.note, "metrics": entries}
        if convention.otto_only:
            record["total"] = _weighted_total(entries, competition)
        if convention.stops:
            record["stops"] = _key_errors(result, truth, n_types, shown, name_row)
        explanation.conventions.append(record)
    capped = int(np.count_nonzero((rows.n_items == MAX_RANKS) & (rows.repeats != 0)))
    if capped:
        explanation.notes.append(f"{capped:,} rows hold {MAX_RANKS} items or more with repeats: read to rank {MAX_RANKS}, so a "
                                 "convention that collapses repeats may miss an item past it")
    return explanation


def _weighted_total(entries: list, competition) -> dict:
    weights = dict(zip(competition.types, competition.weights))
    ours = sum(weights[e["type"]] * (e["ours"] or 0.0) for e in entries)
    theirs = sum(weights[e["type"]] * (e["theirs"] or 0.0) for e in entries)
    return {"ours": ours, "theirs": theirs, "gap": theirs - ours}


def _key_errors(result: Result, truth, n_types: int, shown: int, name_row) -> dict:
    """Rows of the truth that are missing from a session that has other rows: evaluate.py before d1e176b stops there
    (KeyError: it read prediction['carts'] without asking whether the session has it)."""
    first = np.empty(shown, np.int64)
    found = door.kernel("rows_missing_beside_others")(result.slot_line, truth.indptr, np.int64(n_types), first)
    return {"rows": int(found), "first": [name_row(slot) for slot in first[: min(found, shown)]]}


def _figure(value) -> str:
    return f"{fixed(value):>10}"


def _rows_text(first: list) -> str:
    return ", ".join(f"{r['row']} (line {r['line']})" if r["line"] else f"{r['row']} (missing)" for r in first)


def _stops_text(stops: dict) -> str:
    """Where this evaluate.py stops with a KeyError, or that it runs to the end."""
    if not stops["rows"]:
        return "  this evaluate.py runs to the end: no row of the truth is missing from a session that has other rows"
    first = f"; first: {_rows_text(stops['first'])}" if stops["first"] else ""
    return (f"  this evaluate.py would stop with a KeyError: {counted(stops['rows'], 'row')} missing from sessions that have "
            f"other rows{first}")


def render_text(explanation: Explanation, all_rules: bool = False) -> str:
    """The conventions' tables; under each metric the rules that move its figure (all_rules: every rule that touches
    rows, also those whose change is 0), their rows and the first of them."""
    result = explanation.result
    if result.unread is not None:
        return f"explain: {result.submission} could not be read: {result.unread}"
    out = [f"explain: {result.submission} (K = {explanation.k}): each evaluator's metric is ours with its rules applied"]
    if result.score is not None:
        out.append(f"score (ours): {fixed(result.score)}")
    still = 0  # rules that touch rows but move no figure, not listed
    if not result.valid:
        out.append("the file has errors (scorer validate lists them): a line with an error counts as a row with no items")
    for convention in explanation.conventions:
        out += ["", f"{convention['name']}: {convention['source']}",
                f"  {'metric':<14} {'type':<8} {'ours':>10} {'theirs':>10} {'gap':>10}"]
        for entry in convention["metrics"]:
            out.append(f"  {entry['metric']:<14} {entry['type']:<8} {_figure(entry['ours'])} {_figure(entry['theirs'])} {_figure(entry['gap'])}"
                       f"   vs {entry['ours_metric']}")
            for rule in entry["rules"]:
                regrouped_alike = rule["rule"] == RULES[RULE_PER_ROW_MEAN][0] and rule["change"] == 0.0  # rows of one denominator
                if not rule["rows"] or regrouped_alike:
                    continue
                if rule["change"] == 0.0 and not all_rules:
                    still += 1
                    continue
                first = f"; first: {_rows_text(rule['first'])}" if rule["first"] else ""
                out.append(f"      {rule['rule']}: {counted(rule['rows'], 'row')}, {fixed(rule['change'], 6, '+')}{first}")
        if "total" in convention:
            total = convention["total"]
            out.append(f"  {'total':<14} {'weighted':<8} {_figure(total['ours'])} {_figure(total['theirs'])} {_figure(total['gap'])}")
        if "stops" in convention:
            out.append(_stops_text(convention["stops"]))
        if convention["note"]:
            out.append(f"  note: {convention['note']}")
    out += [f"note: {note}" for note in explanation.notes]
    if still:
        which = "rule touches" if still == 1 else "rules touch"
        out.append(f"note: {still:,} more {which} rows without moving a figure (--all lists {'it' if still == 1 else 'them'})")
    rules = explanation.rules()
    if rules:
        out += ["", "rules:", *(f"  {name}: {what}" for name, what in rules.items())]
    return "\n".join(out)


def rows_table(rows: list[dict], columns: tuple[str, ...]):
    """The rows (dicts) as a pyarrow Table of these columns."""
    import pyarrow as pa

    return pa.table({name: [row.get(name) for row in rows] for name in columns})


def explanation_html(result: Result, detail: str, table, notes: list) -> str:
    """An explanation's display: the file and its score, the conventions' table, the notes, the file's problems."""
    from scorer.engine import display

    if result.unread is not None:
        return display.block(display.heading("explain: could not read the file", result.unread))
    score = f"score (ours) {fixed(result.score)}" if result.score is not None else "no score (ours)"
    rows = [list(row.values()) for row in table.to_pylist()]
    return display.block(display.heading(f"explain: {result.submission}", f"{score}; {detail}"),
                         display.table(table.column_names, rows), *(display.paragraph(f"note: {note}") for note in notes),
                         display.problems(result.report))
