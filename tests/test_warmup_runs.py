"""The warm-up's runs over every bundled competition, as `scorer warmup` with no --competition makes them."""

from scorer import api
from scorer.cli import warmup_runs
from scorer.spec.competition import bundled_names, load_competition


def test_the_score_runs_take_every_bundled_competition(tmp_path):
    # a competition whose truth is published in its own form ([truth]) is the table reader's (run_tables): the shape's
    # example truth is not its form (dressipi22's truth has a date column, not a grade)
    names = bundled_names()
    found = warmup_runs.run_score(names, tmp_path, ("id_type", "list", "long", "value"))
    own_truth = [name for name in names if load_competition(name).shape != "impression" and load_competition(name).truth_spec is None]
    assert len(found) == len(own_truth) and all(found)


def test_the_long_shape_counts_its_rows_read(tmp_path):
    truth, submission = tmp_path / "truth.csv", tmp_path / "sub.csv"
    truth.write_text("id,country\nA,US\nB,FR\n")
    submission.write_text("id,country\nA,US\nA,FR\nB,US\nZ,US\n\nA,DE\n")
    counts = api.score(submission, truth, "airbnb").counts
    assert counts["rows_read"] == 5 and counts["rows_unknown_session"] == 1
    purchases = tmp_path / "purchases.csv"
    purchases.write_text("session_id,item_id,date\n1,10,d\n2,20,d\n")
    ranked = tmp_path / "ranked.csv"
    ranked.write_text("session_id,item_id,rank\n1,11,2\n1,10,1\n2,20,1\n")
    assert api.score(ranked, purchases, "dressipi22").counts["rows_read"] == 3
