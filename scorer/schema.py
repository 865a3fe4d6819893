"""A small schema language for the JSON documents users hand back to us (receipts, grade records, a bundle's scores):
each field's type, range and known keys, checked before any code reads a field. A field that fails raises SchemaError,
which names the field, what it holds and what was expected ("field 'bootstrap.resamples' is 'many', expected a whole
number from 1 to 100,000")."""

from __future__ import annotations

import math
from typing import Any


class SchemaError(ValueError):
    """A field that does not hold what the schema expects."""

    def __init__(self, where: str, value: Any, expected: str, unknown: bool = False):
        self.where, self.value, self.expected = where, value, expected
        field = f"field {where!r}" if where else "the document"
        super().__init__(f"{field} is unknown ({expected})" if unknown else f"{field} is {shown(value)}, expected {expected}")


MISSING = object()  # a required field that is not there


def shown(value: Any, limit: int = 40) -> str:
    """A value as a message shows it: JSON's spelling of constants, short texts, the kind of a container."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, (int, float)):
        return f"{value:,}" if isinstance(value, int) and abs(value) >= 10_000 else repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit] + "…")
    return "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__


def _join(where: str, key) -> str:
    return f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key)


class Spec:
    """What a field may hold; check() raises SchemaError naming `where` (the field's path) when it does not."""

    expected = "a value"

    def check(self, value: Any, where: str = "") -> None:
        if not self.accepts(value):
            raise SchemaError(where, value, self.expected)

    def accepts(self, value: Any) -> bool:
        return True


class Whole(Spec):
    """An integer (not a boolean) from low to high."""

    def __init__(self, low: int | None = None, high: int | None = None):
        self.low, self.high = low, high
        self.expected = ("a whole number" + (f" from {low:,} to {high:,}" if low is not None and high is not None
                                             else f" of at least {low:,}" if low is not None else ""))

    def accepts(self, value) -> bool:
        return (isinstance(value, int) and not isinstance(value, bool) and (self.low is None or value >= self.low)
                and (self.high is None or value <= self.high))


class Number(Spec):
    """A finite number (integer or float, not a boolean) from low to high; open: the bounds themselves excluded;
    infinite: Infinity and -Infinity too (never NaN)."""

    def __init__(self, low: float | None = None, high: float | None = None, open: bool = False, infinite: bool = False):
        self.low, self.high, self.open, self.infinite = low, high, open, infinite
        between = "strictly between" if open else "from"
        self.expected = (("a number" if infinite else "a finite number")
                         + (f" {between} {low:,g} {'and' if open else 'to'} {high:,g}" if low is not None and high is not None
                            else f" above {low:,g}" if low is not None and open
                            else f" of at least {low:,g}" if low is not None else ""))

    def accepts(self, value) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value) and not self.infinite):
            return False
        if self.open:
            return (self.low is None or value > self.low) and (self.high is None or value < self.high)
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


class Text(Spec):
    """A string (of at most `longest` characters), or one of `choices`."""

    def __init__(self, choices: tuple[str, ...] = (), longest: int = 1 << 16):
        self.choices, self.longest = choices, longest
        self.expected = " or ".join(map(repr, choices)) if choices else "a text"

    def accepts(self, value) -> bool:
        return isinstance(value, str) and len(value) <= self.longest and (not self.choices or value in self.choices)


class Flag(Spec):
    expected = "true or false"

    def accepts(self, value) -> bool:
        return isinstance(value, bool)


class Maybe(Spec):
    """null, or what `spec` accepts."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.expected = f"{spec.expected} or null"

    def check(self, value, where: str = "") -> None:
        if value is not None:
            try:
                self.spec.check(value, where)
            except SchemaError as error:
                if error.where == where:  # the value itself is wrong, not a field inside it
                    raise SchemaError(where, value, self.expected) from None
                raise


class ListOf(Spec):
    """A list of at most `longest` items, each what `item` accepts."""

    def __init__(self, item: Spec, longest: int = 1 << 16):
        self.item, self.longest = item, longest
        self.expected = f"a list of at most {longest:,} items"

    def check(self, value, where: str = "") -> None:
        if not isinstance(value, list) or len(value) > self.longest:
            raise SchemaError(where, value, self.expected)
        for index, item in enumerate(value):
            self.item.check(item, _join(where, index))


class MapOf(Spec):
    """An object of at most `longest` keys (any names), each value what `value` accepts."""

    def __init__(self, value: Spec, longest: int = 1 << 16):
        self.value, self.longest = value, longest
        self.expected = "an object"

    def check(self, value, where: str = "") -> None:
        if not isinstance(value, dict) or len(value) > self.longest:
            raise SchemaError(where, value, self.expected)
        for key, item in value.items():
            self.value.check(item, _join(where, key))


class Record(Spec):
    """An object with known keys: `required` must be there, `optional` may be; another key is refused unless
    `others` (a record other tools may add fields to)."""

    def __init__(self, required: dict[str, Spec], optional: dict[str, Spec] | None = None, others: bool = False):
        self.required, self.optional, self.others = required, optional or {}, others
        self.expected = "an object"

    def check(self, value, where: str = "") -> None:
        if not isinstance(value, dict):
            raise SchemaError(where, value, self.expected)
        for key, spec in self.required.items():
            if key not in value:
                raise SchemaError(_join(where, key), MISSING, spec.expected)
        if not self.others:
            unknown = [key for key in value if key not in self.required and key not in self.optional]
            if unknown:
                known = ", ".join(map(repr, [*self.required, *self.optional]))
                raise SchemaError(_join(where, unknown[0]), value[unknown[0]], f"the known fields are {known}", unknown=True)
        for key, item in value.items():
            field_spec = self.required.get(key) or self.optional.get(key)
            if field_spec is not None:
                field_spec.check(item, _join(where, key))


class OneOf(Spec):
    """What one of `specs` accepts (the first that does); the message says `expected`."""

    def __init__(self, expected: str, *specs: Spec):
        self.specs, self.expected = specs, expected

    def check(self, value, where: str = "") -> None:
        deeper = None
        for spec in self.specs:
            try:
                spec.check(value, where)
                return
            except SchemaError as error:
                deeper = deeper or (error if error.where != where else None)  # its kind fits; a field inside it does not
        raise deeper or SchemaError(where, value, self.expected)


ANY = Spec()
