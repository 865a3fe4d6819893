"""The wording of what the scorer prints: text a terminal shows as it is, counts with their noun in the right number."""

from __future__ import annotations


def printable(text: str) -> str:
    """The text with every character a terminal would not show as itself (control bytes such as ESC, DEL, C1 controls,
    bidirectional overrides) escaped as Python writes it ('\\x1b'): a message never carries raw bytes of a file."""
    if text.isprintable():
        return text
    return "\n".join("".join(c if c.isprintable() else repr(c)[1:-1] for c in line) for line in text.split("\n"))


def inline(text) -> str:
    """printable(text) with its newlines escaped too ('\\n'): a name that others chose (a team, a file, an id), shown
    within one line of a board, can never make a line of its own."""
    return printable(str(text).replace("\n", "\\n"))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 row', '2 rows', '1,234 sessions': the count and its noun, singular for one ('worker', 'workers')."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def listed(words: list[str], shown: int | None = None) -> str:
    """'a', 'a and b', 'a, b and c'; with shown, the first `shown` words and how many more ('a, b, c and 2 more')."""
    if shown is not None and len(words) > shown:
        words = [*words[:shown], f"{len(words) - shown:,} more"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def fixed(value: float | None, places: int = 6, sign: str = "") -> str:
    """A figure with `places` decimals, as scores are printed ('0.340000'), but never a figure that is not zero as zero:
    one below half the last place gets 3 significant figures ('4.15e-07'); '-' for None or NaN. sign: '+' to sign it."""
    if value is None or value != value:
        return "-"
    if value != 0 and abs(value) < 0.5 * 10.0**-places:
        return format(value, sign + ".3g")
    return format(value, f"{sign}.{places}f")


def percent(share: float | None) -> str:
    """A share as a percentage with one decimal ('40.2%'); '-' for None."""
    return "-" if share is None else f"{100 * share:.1f}%"


def significant(value: float | None, digits: int = 3, sign: str = "") -> str:
    """A figure with `digits` significant figures ('4.15e-06', '0.0123', '12.3'), for figures whose size varies (a
    minimum detectable effect, a difference); '-' for None or NaN."""
    if value is None or value != value:
        return "-"
    return format(value, f"{sign}.{digits}g")
