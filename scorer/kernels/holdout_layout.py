"""The numbers `scorer prepare`'s kernels (scorer.kernels.holdout) and their callers share, apart from the kernels: the
event types' codes, parse_jsonl's error codes, the sessions' roles and the bytes a formatted event or line can take.
The callers read them without loading numba (the ahead-of-time kernels serve)."""

CLICKS, CARTS, ORDERS = 0, 1, 2

# --- error codes returned by parse_jsonl (the Python wrapper turns them into sentences) -------------
OK = 0
ERR_TRUNCATED = 1  # input ends inside a line's JSON value
ERR_SYNTAX = 2  # unexpected byte
ERR_MISSING_SESSION = 3
ERR_MISSING_EVENTS = 4
ERR_MISSING_AID = 5
ERR_MISSING_TS = 6
ERR_MISSING_TYPE = 7
ERR_NOT_INTEGER = 8  # a number with a fraction/exponent, a string or another value where an integer id belongs
ERR_NEGATIVE = 9
ERR_TOO_LARGE = 10
ERR_UNKNOWN_TYPE = 11
ERR_BLANK_LINE = 12
ERR_TRAILING = 13  # something after the closing brace of a line
ERR_DUPLICATE_KEY = 14

# --- the split -------------------------------------------------------------------------------------
ROLE_DROP = 0
ROLE_TRAIN = 1
ROLE_TEST = 2

# Upper bounds of the bytes one event / one line header can take (ids < 2**63: 19 digits, sign never).
EVENT_BYTES = len(b'{"aid": , "ts": , "type": "orders"}, ') + 2 * 20
SESSION_BYTES = len(b'{"session": , "events": []}\n') + 20
LABEL_BYTES = 20 + 2
LABELS_LINE_BYTES = len(b'{"session": , "labels": {"clicks": , "carts": [], "orders": []}}\n') + 40
