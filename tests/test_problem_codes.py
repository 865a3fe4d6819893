"""The problem codes: one Code member per catalogue entry, the kernels' plain numbers equal to the members of the
same name, and the report strings ("S010") made from them."""

import pytest

from scorer.engine.problems import CATALOGUE, Code, Report, kind, report_repeated_rows
from scorer.kernels import codes

NOT_PROBLEMS = {"ROWS_WITH_ERRORS", "N_CODES"}  # a counter slot and the counters' size, not codes


def kernel_constants() -> dict[str, int]:
    return {name: value for name, value in vars(codes).items() if name.isupper() and name not in NOT_PROBLEMS}


def test_every_kernel_constant_has_the_member_of_its_name_and_number():
    constants = kernel_constants()
    assert constants
    for name, value in constants.items():
        assert Code[name] == value, name


def test_members_named_as_a_kernel_constant_equal_it():
    for member in Code:
        if hasattr(codes, member.name):
            assert getattr(codes, member.name) == member


def test_the_kernels_counters_hold_every_code():
    assert max(Code) < codes.ROWS_WITH_ERRORS < codes.N_CODES
    assert codes.ROWS_WITH_ERRORS not in set(Code)


def test_the_catalogue_has_one_entry_per_member():
    assert set(CATALOGUE) == set(Code)
    for member in Code:
        assert CATALOGUE[member].number is member
        assert kind(member.code) is kind(int(member)) is CATALOGUE[member]


@pytest.mark.parametrize("member, text", [(Code.EMPTY_FILE, "S001"), (Code.DUPLICATE_ROW, "S010"), (Code.BAD_QUOTES, "S030")])
def test_report_strings(member, text):
    assert member.code == text == CATALOGUE[member].code


def test_a_report_files_problems_under_the_report_string():
    report = Report(strict=True)
    report.add(Code.LINE_TOO_LONG, "9,999", line=3, max_line_bytes=100)
    report.add(22, "9,999", line=4, max_line_bytes=100)  # a kernel's plain number is the same code
    assert report.counts == {"S022": 2}
    assert [problem.code for problem in report.problems] == ["S022", "S022"]


@pytest.mark.parametrize("strict, keep", [(False, "the last one counts"), (True, "each row may appear once")])
def test_repeated_rows_shown_and_counted(strict, keep):
    report = Report(strict=strict, max_per_code=2)
    report_repeated_rows(report, [("1_clicks", 5, "line 2"), ("2_carts", 9, "line 3")], 7, prefix="part-1: ")
    assert report.counts == {"S010": 7}
    assert [(p.line, p.column, p.message) for p in report.kept["S010"]] == [
        (5, 1, f"part-1: row '1_clicks' repeats line 2 ({keep})"), (9, 1, f"part-1: row '2_carts' repeats line 3 ({keep})")]
