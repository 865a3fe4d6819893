"""The release (tools/release.sh, tools/check_wheel.py, tools/cleanroom.py): the version said once and released in the
changelog, and the checks that a wheel's compiled modules are still the ones their build recorded."""

from __future__ import annotations

import re
from pathlib import Path

import scorer

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_the_changelogs_latest_release():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert headings[0] == ("Unreleased", ""), headings[:2]  # where the next changes go
    assert headings[1][0] == scorer.__version__ and headings[1][1], (headings[1], scorer.__version__)
