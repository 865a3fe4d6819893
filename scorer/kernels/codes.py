"""Numbers of the problems a kernel can find in a line (the catalogue lives in scorer/engine/problems.py).

The number is the problem code's digits: 3 is "S003".
"""

WRONG_FIELD_COUNT = 3
MALFORMED_ID = 4
UNKNOWN_TYPE = 5
SESSION_NOT_INTEGER = 6
SESSION_OUT_OF_RANGE = 7
ITEM_NOT_INTEGER = 8
ITEM_OUT_OF_RANGE = 9
TOO_MANY_ITEMS = 13
DUPLICATE_ITEMS = 14
BLANK_LINE = 15
INVALID_UTF8 = 16
NUL_BYTE = 17
CRLF = 19
QUOTED_FIELD = 20
BAD_SEPARATOR = 21
LINE_TOO_LONG = 22
BAD_QUOTES = 30
VALUE_NOT_NUMBER = 31  # value shape: the rating is not a decimal number
EMPTY_FIELD = 32  # long shape: a row without its prediction
IMPRESSION_ID_MISMATCH = 33  # impression shape: the line's id is not the id of the truth's impression at that line
RANK_COUNT = 34  # impression shape: not one rank per candidate
BAD_RANK = 35  # impression shape: a rank below 1 (1 / rank outside [0, 1]), 0, or a number not read exactly
BAD_RANK_LIST = 36  # impression shape: the ranks are not a JSON list of numbers
EXTRA_LINES = 37  # impression shape: a line past the truth's last impression (ignored)

LIST_LENGTH = 40  # table reader: a list row does not hold the config's list_length items (verify_submission.py's 500)
ITEM_FORM = 41  # table reader: an item is not of the config's form (item_prefix, item_id_bytes: verify_submission.py's track URI)
SEED_ITEM = 42  # table reader: a row lists an item it was seeded with (the seeds file: verify_submission.py's seed tracks)

ROWS_WITH_ERRORS = 47  # not a problem: the kernel counts here the rows of the truth read with an error (they score 0)

N_CODES = 48  # size of the per-code counters; codes are below this
