"""The table reader's numbers as its kernels take them (scorer.kernels.table_rows): plain Python, so the engine and the
config read them without loading numba."""

KEEP_LAST, KEEP_FIRST, KEEP_ALL = 0, 1, 2  # rules.repeated_key: which rows of a key given twice count
REPEAT_FIRST, REPEAT_ZERO, REPEAT_COLLAPSE = 0, 1, 2  # rules.repeated_item: how a row's repeated items count

ARTIST_CREDIT = 0.25  # R-precision's credit for a matched artist (the RecSys Challenge 2018 rules: r_precision, credit=artist)
BAD_INTEGER_KEY = 1 << 20  # table_rows.join_key's return, past a key column's: the column holds no whole number

KEEP = {"last": KEEP_LAST, "first": KEEP_FIRST, "all": KEEP_ALL}
REPEAT = {"first": REPEAT_FIRST, "zero": REPEAT_ZERO, "collapse": REPEAT_COLLAPSE}
