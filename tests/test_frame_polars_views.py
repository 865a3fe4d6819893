"""A polars frame reaches the frame pass with its own string views (no copy up front; a batch's ids are cast
as the pass reaches it), and scores as the same frame converted the old way."""

import json

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import scorer
from scorer.frames import as_arrow


@pytest.mark.skipif(not hasattr(pl, "CompatLevel"), reason="this polars has no compat levels: to_arrow copies")
def test_polars_strings_stay_views_and_score_as_large_strings(tmp_path):
    rng = np.random.default_rng(3)
    truth = tmp_path / "t.jsonl"
    truth.write_text("".join(json.dumps({"session": s, "labels": {"clicks": int(rng.integers(0, 30)), "orders": [1, 2]}}) + "\n"
                             for s in range(200)))
    ids = [f"{s}_{t}" for s in range(210) for t in ("clicks", "carts", "orders")]
    ids[5] = "5_click"  # a bad id: its problem quotes the value read from the view
    frame = pl.DataFrame({"session_type": ids, "labels": [rng.integers(0, 30, 20).tolist() for _ in ids]})
    table = as_arrow(frame)
    assert table.schema.field("session_type").type == pa.string_view()
    loaded = scorer.load_truth(truth, competition="otto")
    from_views = scorer.score(frame, loaded)
    from_copies = scorer.score(frame.to_arrow(), loaded)
    assert from_views.score == from_copies.score
    assert [p.to_dict() for p in from_views.problems] == [p.to_dict() for p in from_copies.problems]
    assert any("'click'" in p.message and p.row == 5 for p in from_views.problems)
