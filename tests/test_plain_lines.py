"""parse_block's fast path (plain_rows: plain lines, eight bytes at a time) reads a line exactly as its careful reader does.

A line ending in CRLF always goes to the careful reader and gives the same row (CRLF is a note, not an error), so a
file and the same file with CRLF line ends must give the same rows, hits, counts and problems (CRLF aside): for
sessions and items of every length from 1 to 20 digits (leading zeros, values past int64), type names of 1 to 12
bytes (the fast path compares names of up to 7 bytes as one word, longer ones byte by byte), repeated items, more
items than k, empty labels, and the last line with or without its newline.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorer
from scorer.engine.problems import Code

CONFIG = """
name = "plain"
[submission]
header = ["session_type", "labels"]
id_pattern = "{{session}}_{{type}}"
item_separator = " "
[scoring]
types = {types}
weights = {weights}
k = 5
metric = "recall@5"
diagnostics = ["map@5"]
"""
TYPE_SETS = [["clicks", "carts", "orders"], ["a", "bb"], ["sevenab", "eightabc", "twelve-bytes"], ["order", "orders"]]
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])


def digits(draw, low: int = 1, high: int = 20) -> str:
    """A decimal of low to high digits, leading zeros possible."""
    return draw(st.text("0123456789", min_size=low, max_size=high))


@st.composite
def cases(draw):
    types = draw(st.sampled_from(TYPE_SETS))
    sessions = [digits(draw, 1, 19) for _ in range(draw(st.integers(1, 4)))]
    rows = []
    for _ in range(draw(st.integers(1, 12))):
        items = [digits(draw, 1, draw(st.sampled_from([7, 9, 18, 20]))) for _ in range(draw(st.integers(0, 7)))]
        if items and draw(st.booleans()):
            items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from(items)))  # a repeated item
        rows.append((draw(st.sampled_from(sessions)), draw(st.sampled_from(types)), items))
    truth = {}
    for session in {int(session) for session in sessions if int(session) < 2**63}:
        labels = {}
        for kind in types:
            read = sorted({int(item) for s, t, items in rows for item in items if int(s) == session and t == kind and int(item) < 2**63})
            if read or draw(st.booleans()):  # some of the row's items, an item of no row, or no truth
                chosen = draw(st.lists(st.sampled_from(read), max_size=3)) if read else []
                labels[kind] = sorted(set(chosen + draw(st.lists(st.integers(0, 99), max_size=1)))) or [0]
        truth[session] = labels
    return types, rows, truth, draw(st.booleans())


def write(path, rows, ending: str, last_newline: bool) -> None:
    lines = ["session_type,labels"] + [f"{session}_{kind}," + " ".join(items) for session, kind, items in rows]
    path.write_bytes((ending.join(lines) + (ending if last_newline else "")).encode())


@SETTINGS
@given(case=cases())
def test_a_plain_line_reads_as_the_careful_reader_reads_it(tmp_path, case):
    import json

    types, rows, truth, last_newline = case
    (tmp_path / "plain.toml").write_text(CONFIG.format(types=json.dumps(types), weights=json.dumps([1.0] + [0.0] * (len(types) - 1))))
    competition = scorer.load_competition(path=tmp_path / "plain.toml")
    records = [json.dumps({"session": session, "labels": labels}) for session, labels in truth.items()]
    (tmp_path / "truth.jsonl").write_text("\n".join(records) + "\n" if records else json.dumps({"session": 1, "labels": {}}) + "\n")
    write(tmp_path / "lf.csv", rows, "\n", last_newline)
    write(tmp_path / "crlf.csv", rows, "\r\n", last_newline)
    fast = scorer.score(tmp_path / "lf.csv", tmp_path / "truth.jsonl", competition, max_per_code=1000)
    careful = scorer.score(tmp_path / "crlf.csv", tmp_path / "truth.jsonl", competition, max_per_code=1000)
    assert np.array_equal(fast.slot_hits, careful.slot_hits)
    assert np.array_equal(fast.slot_line, careful.slot_line)
    assert fast.counts == careful.counts
    assert fast.metrics == careful.metrics and fast.score == careful.score
    crlf = Code.CRLF.code
    assert careful.report.counts.get(crlf, 0) > 0
    assert {code: n for code, n in careful.report.counts.items() if code != crlf} == fast.report.counts


def test_the_fast_path_reads_long_items_and_long_type_names(tmp_path):
    """Items of 8 to 18 digits (word after word) and a type name of 12 bytes, read by the fast path: no problem at all."""
    (tmp_path / "plain.toml").write_text(CONFIG.format(types='["twelve-bytes", "a"]', weights="[1.0, 0.0]"))
    competition = scorer.load_competition(path=tmp_path / "plain.toml")
    (tmp_path / "truth.jsonl").write_text('{"session": 123456789012345678, "labels": {"twelve-bytes": [123456789012345678, 7]}}\n')
    (tmp_path / "s.csv").write_text("session_type,labels\n123456789012345678_twelve-bytes,12345678 123456789012345678 7\n"
                                    "123456789012345678_a,\n")
    result = scorer.score(tmp_path / "s.csv", tmp_path / "truth.jsonl", competition)
    assert result.report.counts == {} and result.metrics["twelve-bytes"]["recall@5"] == 1.0
    assert result.slot_hits.tolist() == [0b110, 0]


def test_an_items_key_is_its_digits_below_ten_million_and_its_value_above():
    """item_key (the truth's side of the fast path's comparison) writes an item's digits as the fast path reads them,
    for every item below 10**7, and key_value reads the item back; larger items are their own key."""
    from numba import njit

    from scorer.kernels.parse import TAG, item_key, key_value

    @njit
    def first_wrong(limit):
        for value in range(limit):
            word, rest = np.uint64(0), value
            while True:  # the digits, the first one in the lowest byte
                word = (word << np.uint64(8)) | np.uint64(48 + rest % 10)
                rest //= 10
                if rest == 0:
                    break
            if item_key(np.int64(value)) != np.int64(word | TAG) or key_value(item_key(np.int64(value))) != value:
                return value
        return -1

    assert first_wrong(10**7) == -1
    for value in (10**7, 123456789012, 2**62):
        assert item_key(np.int64(value)) == value and key_value(np.int64(value)) == value


def test_runs_of_lines_that_are_not_plain_between_plain_ones_read_as_an_all_plain_file(tmp_path):
    """parse_block hands plain_rows a run of plain lines and reads the line it stops at, and after a call that read none
    the next 16 lines, itself: lines ending in CRLF (never plain) in runs of 1, 2, 16, 17 and 40 between plain ones, and
    rows with a repeated item (plain_rows hands those back too), read as the same rows with every line plain."""
    import json
    import random

    draw = random.Random(7)
    types = ["clicks", "carts", "orders"]
    rows = []
    for session in range(1, 161):
        for kind in types:
            items = [str(draw.randrange(1, 60)) for _ in range(draw.randrange(0, 6))]
            if items and draw.random() < 0.1:
                items.append(items[0])  # a repeated item
            rows.append((str(session), kind, items))
    truth = {session: {kind: sorted({draw.randrange(1, 60) for _ in range(3)}) for kind in types} for session in range(1, 161, 2)}
    (tmp_path / "plain.toml").write_text(CONFIG.format(types=json.dumps(types), weights="[0.1, 0.3, 0.6]"))
    competition = scorer.load_competition(path=tmp_path / "plain.toml")
    (tmp_path / "truth.jsonl").write_text("".join(json.dumps({"session": s, "labels": labels}) + "\n" for s, labels in truth.items()))
    write(tmp_path / "lf.csv", rows, "\n", True)
    runs, crlf_lines, line = [1, 2, 16, 17, 40, 1, 2], set(), 1
    for run in runs:  # a run of CRLF lines, then as many plain ones
        crlf_lines.update(range(line, line + run))
        line += 2 * run
    lines = ["session_type,labels"] + [f"{session}_{kind}," + " ".join(items) for session, kind, items in rows]
    (tmp_path / "mixed.csv").write_bytes("".join(text + ("\r\n" if number in crlf_lines else "\n")
                                                 for number, text in enumerate(lines)).encode())
    plain = scorer.score(tmp_path / "lf.csv", tmp_path / "truth.jsonl", competition, max_per_code=1000)
    mixed = scorer.score(tmp_path / "mixed.csv", tmp_path / "truth.jsonl", competition, max_per_code=1000)
    assert np.array_equal(plain.slot_hits, mixed.slot_hits) and np.array_equal(plain.slot_line, mixed.slot_line)
    assert plain.counts == mixed.counts and plain.metrics == mixed.metrics and plain.score == mixed.score
    assert plain.counts["rows_with_duplicate_items"] > 0 and plain.slot_hits.any()
    crlf = Code.CRLF.code
    assert mixed.report.counts.get(crlf, 0) > 0
    assert {code: n for code, n in mixed.report.counts.items() if code != crlf} == plain.report.counts


def test_a_tab_or_a_run_of_spaces_between_items_is_read_and_named_by_the_careful_reader(tmp_path):
    """The fast path takes the byte after an item from the word the item came in: only a single space goes on to the
    next item there, so an item followed by a tab or by two spaces sends its line to the careful reader, which reads
    the items anyway and names the separator (S021), once a line. The rows score as their single-spaced twins."""
    (tmp_path / "plain.toml").write_text(CONFIG.format(types='["clicks", "carts", "orders"]', weights="[0.1, 0.3, 0.6]"))
    competition = scorer.load_competition(path=tmp_path / "plain.toml")
    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"clicks": [6], "carts": [1234567], "orders": [7, 9]}}\n')
    lines = {"clicks": ("5\t6", "5 6"), "carts": ("12  1234567", "12 1234567"), "orders": ("7 \t9 3", "7 9 3")}
    for name, column in (("odd", 0), ("single", 1)):
        (tmp_path / f"{name}.csv").write_text("session_type,labels\n" + "".join(f"1_{kind},{pair[column]}\n" for kind, pair in lines.items()))
    odd = scorer.score(tmp_path / "odd.csv", tmp_path / "truth.jsonl", competition)
    single = scorer.score(tmp_path / "single.csv", tmp_path / "truth.jsonl", competition)
    assert single.report.counts == {} and single.score == 1.0
    assert odd.report.counts == {Code.BAD_SEPARATOR.code: 3}
    assert np.array_equal(odd.slot_hits, single.slot_hits) and odd.score == single.score
