"""The commands' work as Python functions that return an object: compare, leaderboard, explain, similar, ladder.

Each object's to_dict() is the command's --format json output and to_text() its text (the command prints them), to_arrow(),
to_pandas() and to_polars() its table, _repr_html_() a notebook's display. `scorer.compare` and the others re-export
them (imported on first use). Rank 8: above the analytics (6) and the adapters and Dask (7), which it runs; below the CLI.
"""
