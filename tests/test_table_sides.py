"""What issue 47 left for the table reader's list rows: Spotify's artist credit (r_precision(credit=artist), the artist
table read from the MPD's own files), verify_submission.py's two checks as located problems (the track URI's form, S041;
no seed track of a playlist in its list, S042, the seeds from challenge_set.json), and trivago's keys compared as pandas
reads them (timestamp and step integers: 0100 is 100). Each against a reference written from the published definition
(tests/reference_competitions.py)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_competitions as ref
import scorer
from scorer.cli.main import main
from scorer.errors import ConfigError, TruthError, UsageError
from scorer.spec.competition import competition_from_dict, load_competition
from scorer.spec.metrics import parse_metric
from test_competitions import TRIVAGO_HEADER, write

TEAM = "team_info,main,t,e@x.org\n"


def track(n: int) -> str:
    return f"spotify:track:{n:022d}"


def artist(n: int) -> str:
    return f"spotify:artist:{n:022d}"


def playlists(rows: dict, artist_of: dict | None = None) -> str:
    """The MPD's JSON of playlists: pid -> its tracks (each with its artist where artist_of gives one)."""
    def entry(uri):
        return {"track_uri": uri, **({"artist_uri": artist_of[uri]} if artist_of and uri in artist_of else {})}
    return json.dumps({"playlists": [{"pid": pid, "tracks": [entry(uri) for uri in tracks]} for pid, tracks in rows.items()]})


def submission(rows: dict) -> str:
    return TEAM + "".join(f"{pid}, {', '.join(tracks)}\n" for pid, tracks in rows.items())


def with_artist_credit(name: str = "spotify-mpd"):
    competition = load_competition(name)
    return replace(competition, diagnostics=(*competition.diagnostics, parse_metric("r_precision(credit=artist)")))


# -- Spotify's artist credit -----------------------------------------------------------------------------------------
@st.composite
def artist_cases(draw):
    # the hidden tracks (0-19) each with its artist, as the MPD's files give them; some tracks only predicted have none
    artist_of = {track(n): artist(draw(st.integers(0, 6))) for n in range(40) if n < 20 or draw(st.integers(0, 3))}
    targets, predictions = {}, {}
    for pid in range(1000, 1000 + draw(st.integers(1, 5))):
        targets[pid] = [track(n) for n in draw(st.lists(st.integers(0, 19), min_size=1, max_size=8))]
        if draw(st.integers(0, 3)):
            predictions[pid] = [track(n) for n in draw(st.lists(st.integers(0, 39), min_size=1, max_size=20))]
    return targets, predictions, artist_of


@settings(max_examples=120, deadline=None)
@given(case=artist_cases())
def test_the_artist_credit_is_the_challenge_rules_r_precision(case, tmp_path_factory):
    targets, predictions, artist_of = case
    folder = tmp_path_factory.mktemp("artists")
    truth_artists = {uri: artist_of[uri] for tracks in targets.values() for uri in tracks if uri in artist_of}
    truth = write(folder / "truth.json", playlists(targets, truth_artists))
    others = {uri: name for uri, name in artist_of.items() if uri not in truth_artists}  # the rest in an MPD slice
    (folder / "data").mkdir()
    write(folder / "data" / "mpd.slice.0-999.json", json.dumps({"playlists": [{"pid": 0, "tracks": [
        {"track_uri": uri, "artist_uri": name} for uri, name in others.items()]}]}))
    sub = write(folder / "sub.csv", submission(predictions))
    result = scorer.score(sub, truth, with_artist_credit(), artists=[truth, folder / "data"])
    metrics = result.metrics["all"]
    assert metrics["r_precision(credit=artist)"] == pytest.approx(ref.spotify_artist_r_precision(targets, predictions, artist_of), abs=1e-12)
    assert metrics["r_precision"] == pytest.approx(ref.spotify(targets, predictions)[0], abs=1e-12)  # the default stays track-only


def test_a_hand_worked_artist_credit(tmp_path):
    # pid 1 hides tracks 1 (artist A) and 2 (artist B): its first 2 predictions are 5 (artist B, from the slice) and 1 (a
    # hit): (1 + 0.25·|{A, B}|) / 2 = 0.75. pid 2 hides 3 (artist A): its first prediction 2 (artist B) is no credit: 0.
    a, b = artist(1), artist(2)
    truth = write(tmp_path / "truth.json", playlists({1: [track(1), track(2)], 2: [track(3)]}, {track(1): a, track(2): b, track(3): a}))
    mpd = write(tmp_path / "mpd.json", playlists({0: [track(5)]}, {track(5): b}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(5), track(1), track(9)], 2: [track(2)]}))
    result = scorer.score(sub, truth, with_artist_credit(), artists=[truth, mpd])
    assert result.metrics["all"]["r_precision(credit=artist)"] == pytest.approx((0.75 + 0.0) / 2)
    assert result.metrics["all"]["r_precision"] == pytest.approx((0.5 + 0.0) / 2)


def test_the_artist_credit_from_the_command_line(tmp_path, capsys):
    truth = write(tmp_path / "truth.json", playlists({1: [track(1)]}, {track(1): artist(1)}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(2)]}))
    mpd = write(tmp_path / "mpd.json", playlists({0: [track(2)]}, {track(2): artist(1)}))
    assert main(["score", sub, "--truth", truth, "--competition", "spotify-mpd", "--metrics", "r_precision(credit=artist)",
                 "--artists", truth, mpd, "--format", "json"]) == 1  # 1 track, not 500 (S040); scored all the same
    assert json.loads(capsys.readouterr().out)["metrics"]["all"]["r_precision(credit=artist)"] == 0.25


def test_the_artist_credit_needs_its_table_and_its_config_section(tmp_path):
    truth = write(tmp_path / "truth.json", playlists({1: [track(1)]}, {track(1): artist(1)}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(1)]}))
    with pytest.raises(UsageError, match="needs the table of each item's artist"):
        scorer.score(sub, truth, with_artist_credit())
    with pytest.raises(UsageError, match="r_precision\\(credit=artist\\), which this run does not compute"):
        scorer.score(sub, truth, "spotify-mpd", artists=[truth])
    with pytest.raises(ConfigError, match="needs shape 'list' and an \\[artists\\] section"):
        competition_from_dict({"name": "x", "submission": {"shape": "list", "header": ["id", "items"]},
                               "scoring": {"k": 5, "metric": "r_precision(credit=artist)"}})
    hm = replace(load_competition("hm"), diagnostics=(parse_metric("r_precision(credit=artist)"),))
    with pytest.raises(ConfigError, match="an \\[artists\\] section"):
        scorer.score(write(tmp_path / "h.csv", "customer_id,prediction\nc,1\n"), write(tmp_path / "t.csv", "customer_id,prediction\nc,1\n"), hm)


def test_the_artist_credit_without_its_table_is_refused_before_the_truth_is_read(tmp_path):
    sub = write(tmp_path / "sub.csv", submission({1: [track(1)]}))
    with pytest.raises(UsageError, match="needs the table of each item's artist"):
        scorer.score(sub, tmp_path / "no-such-truth.json", with_artist_credit())


def test_an_artist_table_of_a_csv_and_a_track_without_an_artist(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('name = "c"\n[submission]\nshape = "list"\nheader = ["id", "items"]\n[scoring]\nk = 5\nmetric = '
                      '"r_precision(credit=artist)"\n[artists]\nformat = "table"\nitem = "track"\nartist = "artist"\n')
    truth = write(tmp_path / "t.csv", "id,items\nu,1 2\n")
    table = write(tmp_path / "tracks.csv", "artist,track,year\nA,1,2001\nB,2,2002\nA,3,2003\n")
    sub = write(tmp_path / "s.csv", "id,items\nu,3 9\n")
    assert scorer.score(sub, truth, config=config, artists=[table]).score == pytest.approx(0.25 * 1 / 2)  # 3 is by A; 9 by none
    bad = write(tmp_path / "bad.json", playlists({1: [track(1)]}))  # no artist_uri
    with pytest.raises(TruthError, match=f"artists file {bad}, playlist 0: a track without a text 'track_uri' and 'artist_uri'"):
        scorer.score(write(tmp_path / "m.csv", submission({1: [track(1)]})), write(tmp_path / "m.json", playlists({1: [track(1)]})),
                     with_artist_credit(), artists=[bad])


# -- verify_submission.py's checks: the track URI's form (S041), no seed track (S042) --------------------------------------
@settings(max_examples=200, deadline=None)
@given(item=st.one_of(st.text(st.sampled_from("spotify:track:aZ09é_ -"), max_size=40),
                      st.text(st.sampled_from("aZ09:é"), min_size=20, max_size=24).map(lambda rest: "spotify:track:" + rest)))
def test_the_track_uri_is_verify_submissions_form(item, tmp_path_factory):
    item = item.strip(" ")  # verify_submission.py strips each field, as the reader reads past the spaces around it
    if not item or "," in item or "#" == item[:1]:
        return
    folder = tmp_path_factory.mktemp("uri")
    sub = write(folder / "sub.csv", TEAM + f"1, {track(1)}, {item}\n")
    problems = [(p.code, p.line, p.column) for p in scorer.validate(sub, competition="spotify-mpd").problems if p.code == "S041"]
    column = len(f"1, {track(1)}, ") + 1
    assert problems == ([] if ref.is_track_uri(item.encode()) else [("S041", 2, column)]), item


def test_a_seed_track_in_a_playlists_list_is_located(tmp_path):
    seeds = write(tmp_path / "challenge_set.json", playlists({1: [track(7), track(8)], 2: [], 3: [track(9)]}))
    truth = write(tmp_path / "truth.json", playlists({1: [track(1)], 2: [track(2)], 3: [track(3)]}))
    rows = {1: [track(1), track(8), track(7)], 2: [track(7)], 3: [track(3)]}  # 1 lists its seeds 8 and 7; 2 lists 1's seed
    sub = write(tmp_path / "sub.csv", submission(rows))
    result = scorer.validate(sub, truth, "spotify-mpd", seeds=seeds)
    found = [(p.code, p.line, p.column) for p in result.problems if p.code == "S042"]
    assert found == [("S042", 2, len(f"1, {track(1)}, ") + 1)] and track(8) in result.problems[-1].message
    assert scorer.score(sub, truth, "spotify-mpd", seeds=seeds).score == scorer.score(sub, truth, "spotify-mpd").score  # scored as read


def test_validate_with_the_challenge_set_alone_makes_verify_submissions_checks(tmp_path, capsys):
    seeds = write(tmp_path / "challenge_set.json", playlists({1: [track(7)], 2: [track(8)]}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(7)], 5: [track(1)]}))
    assert main(["validate", sub, "--competition", "spotify-mpd", "--seeds", seeds, "--format", "json"]) == 1
    codes = {(p["code"], p["line"]) for p in json.loads(capsys.readouterr().out)["problems"]}
    # pid 2 missing (wrong number of playlists), pid 5 not in the challenge set (bad pid), a seed listed, 1 track not 500
    assert codes == {("S011", None), ("S012", 3), ("S042", 2), ("S040", 2), ("S040", 3)}


def test_validate_with_the_challenge_set_alone_reads_it_once(tmp_path, monkeypatch):
    from scorer.truth import sides

    seeds = write(tmp_path / "challenge_set.json", playlists({1: [track(7)], 2: [track(8)]}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(7)], 2: [track(1)]}))
    reads, seed_rows = [], sides._seed_rows
    monkeypatch.setattr(sides, "_seed_rows", lambda path, competition: (reads.append(path), seed_rows(path, competition))[1])
    found = [(p.code, p.line) for p in scorer.validate(sub, None, "spotify-mpd", seeds=seeds).problems if p.code == "S042"]
    assert found == [("S042", 2)] and len(reads) == 1


def test_seeds_are_for_a_config_with_a_seeds_section(tmp_path):
    seeds = write(tmp_path / "s.json", playlists({1: [track(7)]}))
    with pytest.raises(UsageError, match="'hm' has no \\[seeds\\] section"):
        scorer.validate(write(tmp_path / "h.csv", "customer_id,prediction\nc,1\n"), write(tmp_path / "t.csv", "customer_id,prediction\nc,1\n"),
                        replace(load_competition("hm"), diagnostics=(parse_metric("jaccard"),)), seeds=seeds)
    with pytest.raises(ConfigError, match="section \\[seeds\\] is for shape 'list'"):
        competition_from_dict({"name": "x", "submission": {"shape": "long", "header": ["id", "item"]}, "scoring": {"k": 5, "metric": "mrr@5"},
                               "seeds": {"item": "item"}})


# -- trivago: the keys as pandas reads them -------------------------------------------------------------------------
@st.composite
def written_numbers(draw, value: int) -> str:
    """An integer as a file may write it that pandas reads as that integer (or as a float that joins it): leading zeros, a
    '+', spaces around it, '.0' or an exponent after it."""
    text = "0" * draw(st.integers(0, 2)) + str(value) + draw(st.sampled_from(["", "", "", ".0", "e0", ".00E+00"]))
    return " " * draw(st.integers(0, 1)) + ("+" if draw(st.booleans()) and draw(st.booleans()) else "") + text + " " * draw(st.integers(0, 1))


@st.composite
def trivago_keys(draw):
    keys = [(f"U{draw(st.integers(0, 2))}", f"S{row}", draw(st.integers(0, 120)), draw(st.integers(1, 3))) for row in range(draw(st.integers(1, 6)))]
    keys = list(dict.fromkeys(keys))
    truth = {key: str(5000 + draw(st.integers(0, 5))) for key in keys}
    rows = []
    for key in keys:
        for _ in range(draw(st.integers(0, 2))):
            written = (key[0], key[1], draw(written_numbers(key[2])), draw(written_numbers(key[3])))
            rows.append((key, written, [str(5000 + n) for n in draw(st.lists(st.integers(0, 5), max_size=5))]))
    truth_written = {key: (key[0], key[1], draw(written_numbers(key[2])).strip(), str(key[3])) for key in keys}
    return truth, truth_written, rows


@settings(max_examples=120, deadline=None)
@given(case=trivago_keys())
def test_trivago19_joins_the_keys_as_pandas_reads_them(case, tmp_path_factory):
    truth, truth_written, rows = case
    folder = tmp_path_factory.mktemp("trivago_keys")
    gt = write(folder / "gt.csv", TRIVAGO_HEADER + "".join(f"{','.join(truth_written[key])},clickout item,{item},DE,x,mobile,,,\n"
                                                           for key, item in truth.items()))
    sub = write(folder / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\n"
                + "".join(f"{','.join(written)},{' '.join(items)}\n" for _, written, items in rows))
    expected = ref.trivago_mrr(truth, [(key, items) for key, _, items in rows])
    result = scorer.score(sub, gt, "trivago19")
    mrr = result.metrics["all"]["mrr"]
    assert (float("nan") if mrr is None else mrr) == pytest.approx(expected, abs=1e-12, nan_ok=True)
    assert not [p for p in result.problems if p.code == "S004"]


def test_trivago19_locates_a_key_that_is_no_whole_number(tmp_path):
    gt = write(tmp_path / "gt.csv", TRIVAGO_HEADER + "U,S,0100,1,clickout item,7,DE,x,mobile,,,\nV,S,1.0E1,2,clickout item,7,DE,x,mobile,,,\n")
    sub = write(tmp_path / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\nU,S,100,01,7\nU,S,100.5,1,7\n"
                                      "U,S,100,-,7\nU,S,x,1,7\nV,S,10,2.0,3 7\n")
    result = scorer.score(sub, gt, "trivago19")
    assert result.score == pytest.approx((1.0 + 0.5) / 2)  # 100.5 joins no integer; '-' and 'x' are no number
    assert [(p.code, p.line, p.column) for p in result.problems] == [("S004", 3, 5), ("S004", 4, 9), ("S004", 5, 5)]
    assert "'100.5' (column 'timestamp' holds no whole number)" in result.problems[0].message
    bad = write(tmp_path / "bad.csv", TRIVAGO_HEADER + "U,S,1.5,1,clickout item,7,DE,x,mobile,,,\n")
    with pytest.raises(TruthError, match="data row 1, column 'timestamp': '1.5' is not a whole number"):
        scorer.score(sub, bad, "trivago19")


def test_a_truth_cached_with_keys_as_written_is_not_the_one_of_integer_keys(tmp_path):
    gt = write(tmp_path / "gt.csv", TRIVAGO_HEADER + "U,S,0100,1,clickout item,7,DE,x,mobile,,,\n")
    sub = write(tmp_path / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\nU,S,100,1,7\n")
    trivago = load_competition("trivago19")
    assert scorer.score(sub, gt, replace(trivago, key_types=("text",) * 4)).metrics["all"]["mrr"] is None  # '0100' is not '100'
    assert scorer.score(sub, gt, trivago).score == 1.0


def test_key_types_and_the_item_form_are_checked_and_named_in_the_receipt():
    from scorer.engine.receipt import config_hash

    base = {"name": "x", "submission": {"shape": "list", "header": ["a", "b", "items"], "key": ["a", "b"]}, "scoring": {"k": 5, "metric": "mrr"}}
    for submission, words in (({"key_types": ["integer"]}, "for each column of 'submission.key'"),
                              ({"key_types": ["text", "number"]}, "'text' or 'integer'"),
                              ({"item_prefix": "x:"}, "go together"), ({"item_id_bytes": 3}, "go together")):
        with pytest.raises(ConfigError, match=words):
            competition_from_dict({**base, "submission": {**base["submission"], **submission}})
    trivago, spotify = load_competition("trivago19"), load_competition("spotify-mpd")
    assert config_hash(trivago) != config_hash(replace(trivago, key_types=("text",) * 4))
    assert config_hash(spotify) != config_hash(replace(spotify, item_prefix="", item_id_bytes=0))


# -- the hostile-input contract on the side inputs: a sentence and exit 2 -------------------------------------------------
def test_hostile_seeds_and_artist_files_get_a_sentence_and_exit_2(tmp_path, capsys):
    from test_impressions import hostile_files

    folder = tmp_path / "hostile"
    folder.mkdir()
    names = hostile_files(folder)
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "empty_folder").mkdir()
    truth = write(tmp_path / "truth.json", playlists({1: [track(1)]}))
    sub = write(tmp_path / "sub.csv", submission({1: [track(1)]}))
    for name in [*names, "deep.json", "empty_folder", "absent.json"]:
        for option in (["--seeds", str(folder / name)], ["--metrics", "r_precision(credit=artist)", "--artists", str(folder / name)]):
            code = main(["score", sub, "--truth", truth, "--competition", "spotify-mpd", *option])
            err = capsys.readouterr().err
            assert code == 2 and err.startswith("scorer: error:") and "Traceback" not in err, (name, option, err)
            assert ("seeds" if option[0] == "--seeds" else "artists") in err, (name, err)
    assert not os.path.exists(folder / "absent.json")
    assert main(["score", sub, "--truth", str(folder / "deep.json"), "--competition", "spotify-mpd"]) == 2  # the truth's reader too
    assert "nests its JSON too deep" in capsys.readouterr().err
