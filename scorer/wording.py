"""The wording of what the scorer prints: text a terminal shows as it is, counts with their noun in the right number."""

from __future__ import annotations


def printable(text: str) -> str:
    """The text with every character a terminal would not show as itself (control bytes such as ESC, DEL, C1 controls,
    bidirectional overrides) escaped as Python writes it ('\\x1b'): a message never carries raw bytes of a file."""
    if text.isprintable():
        return text
    return "\n".join("".join(c if c.isprintable() else repr(c)[1:-1] for c in line) for line in text.split("\n"))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 row', '2 rows', '1,234 sessions': the count and its noun, singular for one ('worker', 'workers')."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
