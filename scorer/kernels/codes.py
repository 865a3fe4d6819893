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

ROWS_WITH_ERRORS = 39  # not a problem: the kernel counts here the rows of the truth read with an error (they score 0)

N_CODES = 40  # size of the per-code counters; codes are below this
