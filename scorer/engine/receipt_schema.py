"""What a score receipt (scorer.engine.receipt) may hold: its schema, checked before `scorer verify` reads a field
(a receipt comes back from a user), and the bounds it shares with the command line. Light: the CLI's parser imports it."""

from __future__ import annotations

from scorer.schema import ANY, Flag, ListOf, MapOf, Maybe, Number, Record, Text, Whole

RECEIPT_VERSION = 1
MAX_RESAMPLES = 100_000  # --bootstrap's and a receipt's most: 10^5 resamples of OTTO's sessions take minutes already
MAX_SEED = 2**63 - 1

_NAME = Text(longest=256)
_FIGURE = Maybe(Number())
RECEIPT = Record({
    "receipt": Whole(1, RECEIPT_VERSION),
    "scorer": Record({"version": _NAME}, {"kernels": Maybe(Text())}),
    "competition": Record({"name": _NAME, "config": _NAME, "metrics": ListOf(_NAME, 1024)}),
    "truth": Maybe(_NAME),
    "submission": Maybe(_NAME),
    "mode": Text(("strict", "lenient")),
    "split": Maybe(Record({}, {"usage": Flag(), "public": Number(0, 1, open=True), "seed": Whole(0, MAX_SEED)})),
    "bootstrap": Maybe(Record({"resamples": Whole(1, MAX_RESAMPLES)},
                              {"seed": Whole(0, MAX_SEED), "level": Number(0, 1, open=True)})),
    "figures": Record({"score": _FIGURE, "metrics": MapOf(MapOf(_FIGURE))}, {"split": MapOf(ANY), "bootstrap": MapOf(ANY)}),
})
