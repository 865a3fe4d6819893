"""What a job returns: its report as the command's JSON document, with the command's text, a table and a display."""

from __future__ import annotations

from scorer.frames import Tabular


class Board(Tabular):
    """A command's report. data: the dict its --format json prints; to_text(): what it prints without; to_arrow()
    (and to_pandas(), to_polars()): its table, a row per what it reports on; _repr_html_(): a notebook's display."""

    columns: tuple[str, ...] = ()  # the table's columns, in order (each row a dict of them)

    def __init__(self, data: dict):
        self.data = data

    def to_dict(self) -> dict:
        return self.data

    def to_text(self) -> str:
        raise NotImplementedError

    def rows(self) -> list[dict]:
        """The table's rows (dicts of the columns)."""
        raise NotImplementedError

    def to_arrow(self):
        import pyarrow as pa

        rows = self.rows()
        return pa.table({name: [row.get(name) for row in rows] for name in self.columns}) if rows else pa.table(
            {name: pa.array([], pa.null()) for name in self.columns})

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.rows()):,} rows; to_text(), to_dict(), to_pandas()>"
