"""Competition configs: a TOML file in configs/ becomes a checked, frozen Competition."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from scorer.errors import ConfigError
from scorer.file_formats import not_a_regular_file
from scorer.kernels.kinds import ROW_RPREC_ARTIST
from scorer.spec.metrics import Metric, parse_metric

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser as the package tomli (a dependency there)
    import tomli as tomllib


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 4_000_000_000
    max_decompressed_bytes: int = 8_000_000_000
    max_line_bytes: int = 65_536
    max_seconds: float = 600.0


LIMIT_MOST = {"max_file_bytes": 1 << 62, "max_decompressed_bytes": 1 << 62, "max_line_bytes": 1 << 30}  # the largest each limit may be


RULES: dict[str, dict[str, str]] = {  # [rules]: how the evaluator of a competition treats the edges, each named
    "missing": {"zero": "a row of the truth that the file does not give scores 0 in every metric (and still counts)",
                "skip": "a row of the truth that the file does not give is left out of the mean (trivago's inner join; "
                        "the value shape's rmse and mae: only rows in both files)",
                "fill": "impression shape: an impression the file ends before is scored as if every candidate had rank 1 "
                        "(MIND's evaluate.py)"},
    "ties": {"numpy": "impression shape: equal ranks in the order of np.argsort(1 / rank)[::-1], numpy's own introsort "
                      "(the later candidate first within lists of up to 16)",
             "later_first": "impression shape: equal ranks, the later candidate first at every list length (a stable sort)"},
    "repeated_key": {"last": "a key the file gives twice: its last row counts (a repeat is reported)",
                     "first": "a key the file gives twice: its first row counts (a repeat is reported)",
                     "all": "a key the file gives twice: every row counts, each in the mean (trivago's join counts it twice)"},
    "repeated_item": {"first": "an item a row lists twice counts once, at its first rank, and its repeat keeps a slot",
                      "zero": "a row that lists a truth item twice scores as a row without a hit (trivago's: the clicked item "
                              "listed twice scores 0)",
                      "collapse": "repeats are dropped after the cut: the items after one move up a rank (Spotify's NDCG: cut, "
                                  "then de-duplicated)"},
    "truth": {"set": "an item the truth repeats for a row counts once: |T| is the number of distinct items",
              "multiset": "an item the truth repeats for a row counts each time in |T| (Kaggle's apk: len(actual) with the repeats)"},
}
_STRING_RULES = {"missing": ("zero", "skip"), "repeated_key": ("last", "first", "all"), "repeated_item": ("first", "zero", "collapse"),
                 "truth": ("set", "multiset")}
SHAPE_RULES: dict[str, dict[str, tuple[str, ...]]] = {"impression": {"missing": ("fill", "zero"), "ties": ("numpy", "later_first")},  # allowed values, default first
               "list": _STRING_RULES, "long": _STRING_RULES,
               "value": {"missing": ("skip",), "repeated_key": ("last", "first")}}
OTHER_SHAPES_RULES: dict[str, tuple[str, ...]] = {"missing": ("zero",)}


@dataclass(frozen=True)
class Rules:
    """The competition's rules at the edges (RULES names each value)."""

    missing: str = "zero"
    ties: str = "numpy"
    repeated_key: str = "last"
    repeated_item: str = "first"
    truth: str = "set"

    def turned(self, **changes) -> "Rules":
        """These rules with some turned (scorer explain scores a file under each)."""
        from dataclasses import replace

        return replace(self, **changes)

    def plain(self, shape: str) -> bool:
        """The rules at the edges of the string shapes' two-column reader: a missing row scores 0 (the value shape's is
        left out), the last of a repeated key counts, a repeated item counts at its first rank."""
        return (self.missing == ("skip" if shape == "value" else "zero") and self.repeated_key == "last"
                and self.repeated_item == "first")


ROW_INDEX = "__index__"  # a key part that is the row's position (a frame's pandas index), not a column of the file


@dataclass(frozen=True)
class TruthSpec:
    """[truth]: how the competition's published truth file is read (scorer.truth.published)."""

    format: str = "table"  # "table": CSV (plain or .gz) or Parquet; "playlists": the MPD's JSON of playlists and their tracks
    first_line: str = "header"  # "header": line 1 names the columns; "row": no header (columns gives the names)
    columns: tuple[str, ...] = ()  # first_line "row": the columns in order
    field_separator: str = ","
    key: tuple[str, ...] = ()  # the columns that name a row (ROW_INDEX: its position), as the submission's key
    item: str = ""  # list and long shapes: the column of the truth's item (or items, split by item_separator)
    item_separator: str = ""  # "": one item per field
    value: str = ""  # value shape: the column of the true value
    grade: tuple[tuple[str, float], ...] = ()  # graded truth: a row's grade is the largest weight whose column holds 1
    where: tuple[tuple[str, str], ...] = ()  # only the rows whose columns hold these values

    def describe(self) -> list[Any]:
        """What the cache key of a truth read by this spec names (another spec reads the same file into another truth)."""
        return [self.format, self.first_line, list(self.columns), self.field_separator, list(self.key), self.item, self.item_separator,
                self.value, [list(pair) for pair in self.grade], [list(pair) for pair in self.where]]


@dataclass(frozen=True)
class ArtistSpec:
    """[artists]: how the artist table's files are read (scorer.truth.sides): each item with its artist, the fields of a
    track in the MPD's JSON of playlists, or two columns of a table. R-precision's artist credit reads it."""

    format: str = "playlists"  # "playlists": the MPD's JSON (its slices, challenge_set.json); "table": CSV (plain or .gz) or Parquet
    item: str = ""  # the field (column) of the item
    artist: str = ""  # the field (column) of its artist
    first_line: str = "header"  # table: "header", or "row" with columns naming them
    columns: tuple[str, ...] = ()
    field_separator: str = ","


@dataclass(frozen=True)
class Competition:
    name: str
    title: str
    header: tuple[str, ...]
    id_pattern: str
    item_separator: str
    types: tuple[str, ...]
    weights: tuple[float, ...]
    k: int
    metric: Metric
    diagnostics: tuple[Metric, ...]
    limits: Limits
    source: str = ""
    shape: str = "id_type"  # see SHAPES
    empty_token: str = ""  # list shape: the token that stands for "nothing" (Instacart's None), an item of its own
    first_line: str = "header"  # "header": the file's first line names the columns; "row": files have no header line;
    # "metadata": the first line is the file's metadata (Spotify's team_info), kept, not a row
    values: str = "rank"  # impression shape: the lists hold ranks (1 = first; score 1/rank) or scores (higher first)
    rules: Rules = Rules()
    key: tuple[str, ...] = ()  # the columns that name a row (default: the header's first); ROW_INDEX: the row's position
    prediction: str = ""  # the column of the items (list), the item (long) or the value (value); default: the header's last
    rank: str = ""  # long shape: the column of each row's rank ("": the rows' order)
    field_separator: str = ","
    metadata: str = ""  # first_line "metadata": the text that line starts with
    comment: str = ""  # a line that starts with this is skipped (Spotify's verify_submission.py skips '#' lines)
    list_length: int = 0  # list shape: the number of items every row must hold (verify_submission.py's 500), 0 for any
    item_type: str = "text"  # "integer": items are whole numbers compared as int() reads them (trivago's), else S008
    key_types: tuple[str, ...] = ()  # per key column, "text" (as written) or "integer" (as int() reads it: pandas' 0100 is 100)
    item_prefix: str = ""  # list shape: every item is this text, then item_id_bytes bytes (verify_submission.py's track URI), else S041
    item_id_bytes: int = 0
    truth_spec: TruthSpec | None = None  # [truth]: the published truth's form; None: the shape's own truth files
    seeds_spec: TruthSpec | None = None  # [seeds]: the items each row was given, which it may not list (S042), read as [truth] is
    artists_spec: ArtistSpec | None = None  # [artists]: each item's artist, for r_precision(credit=artist)

    @property
    def integer_keys(self) -> tuple[bool, ...]:
        """Per key column: is it compared as an integer?"""
        return tuple(kind == "integer" for kind in self.key_types) or (False,) * len(self.key)

    @property
    def table_reader(self) -> bool:
        """Do files of this competition need the table reader (scorer.kernels.table_rows: several key columns, other
        separators, more columns, a rank column, a first line that is not the header, the rules at the edges beyond the
        house's, or a metric only it computes), rather than the two-column reader of the string shapes?"""
        if self.shape not in ("list", "long", "value"):
            return False
        return not self.two_columns or not self.rules.plain(self.shape) or any(metric.kind.table_only for metric in self.metrics)

    @property
    def two_columns(self) -> bool:
        """Are this competition's files the string shapes' plain layout: a header, then an id and its items (or value) in
        two comma-separated columns, items separated by spaces, nothing else to check?"""
        return (len(self.header) == 2 and self.key == self.header[:1] and self.prediction == self.header[1] and not self.rank
                and self.field_separator == "," and self.item_separator == " " and self.first_line == "header" and not self.comment
                and not self.list_length and self.item_type == "text" and not any(self.integer_keys) and not self.item_prefix
                and self.seeds_spec is None)

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """The scored metric first, then the diagnostics."""
        return (self.metric, *self.diagnostics)

    def row_kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per metric, as the kernels take them: the row figure's kind (ROW_*) and the cut-off (K when it has none)."""
        return (np.array([m.row_kind for m in self.metrics], np.int64), np.array([m.k or self.k for m in self.metrics], np.int64))

    @property
    def session_first(self) -> bool:
        return self.id_pattern.index("{session}") < self.id_pattern.find("{type}") or "{type}" not in self.id_pattern

    def id_literals(self) -> tuple[str, str, str]:
        return id_literals(self.id_pattern)


SHAPES = {
    "id_type": "one row per id and type, the type inside the id (OTTO: 123_clicks,4 5 6); integer ids and items",
    "list": "one row per id, space-separated items (H&M: customer_id,prediction); ids and items are strings kept as written",
    "long": "one row per prediction, ranked by the order of the rows of an id (Airbnb: id,country)",
    "value": "one value per id, for rating prediction (id,rating)",
    "impression": "one line per impression in the truth's order: its id and a JSON list of its candidates' ranks "
                  "(MIND: 1 [3,1,2]); the truth is aligned by position, not by id",
}
FIRST_LINES = ("header", "row", "metadata")
SEPARATORS = ",;|\t "  # field and item separators a config may name
VALUES = ("rank", "score")


def id_literals(pattern: str) -> tuple[str, str, str]:
    """The literal text around the placeholders of an id pattern: (prefix, middle, suffix)."""
    parts = re.split(r"\{session\}|\{type\}", pattern)
    if len(parts) == 2:  # single-type competitions: "{session}" alone
        return parts[0], "", parts[1]
    return parts[0], parts[1], parts[2]


def bundled_names() -> list[str]:
    folder = resources.files("scorer.spec") / "configs"
    return sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".toml"))


def other_competition_hint(columns, competition: Competition) -> str:
    """When another bundled competition's submissions have these columns (a header, or a frame's columns), a hint that
    names it: " (this looks like a `--competition hm` submission)"; else ""."""
    others = [name for name in bundled_names()
              if name != competition.name and set(load_competition(name).header) <= set(columns)]
    return f" (this looks like a {' or '.join(f'`--competition {name}`' for name in others)} submission)" if others else ""


def load_competition(name: str | None = None, path: str | Path | None = None) -> Competition:
    """Load a bundled competition by name ("otto") or any TOML file by path."""
    if path is not None:
        path = Path(path)
        text = _config_text(path)
        source = str(path)
    else:
        name = name or "otto"
        entry = resources.files("scorer.spec") / "configs" / f"{name}.toml"
        if name not in bundled_names():  # a name from a receipt is untrusted: never a path out of configs/
            import difflib  # only for this message

            names = bundled_names()
            guess = "".join(f"; did you mean {close!r}?" for close in difflib.get_close_matches(name.lower(), names, n=1))
            raise ConfigError(f"unknown competition {name!r}{guess} (bundled: {', '.join(names)}; or pass --config PATH)")
        text = entry.read_text(encoding="utf-8")
        source = f"{name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    return competition_from_dict(data, source)


MAX_CONFIG_BYTES = 1 << 20  # a competition config is a few hundred bytes; /dev/zero or a data file given by mistake is not


def _config_text(path: Path) -> str:
    """The text of a config file: a regular file (a FIFO would block), at most MAX_CONFIG_BYTES, UTF-8."""
    kind = not_a_regular_file(path)
    if kind is not None:
        raise ConfigError(f"cannot read config {path}: {kind}; give a TOML file")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"config {path} is over {MAX_CONFIG_BYTES:,} bytes: not a competition config (a TOML file of a few lines)")
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"cannot read config {path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror or error}") from None


def _refuse_unknown(table: dict[str, Any], known, source: str, section: str = "") -> None:
    """A key the config format does not have is an error (a misspelt one would silently take its default)."""
    import difflib  # only for this message

    for key in table:
        if key not in known:
            where = f"{section}.{key}" if section else key
            guess = "".join(f"; did you mean {close!r}?" for close in difflib.get_close_matches(key, list(known), n=1))
            place = f"under [{section}]" if section else "at the top level"
            raise ConfigError(f"{source}: unknown key {where!r}{guess} (known {place}: {', '.join(known)})")


def _check_id_fields(id_pattern: str, source: str) -> None:
    """An id pattern names only {session} and {type}; any other {field} (or a stray brace) is an error."""
    import difflib  # only for this message

    rest = id_pattern.replace("{session}", "").replace("{type}", "")
    if "{" in rest or "}" in rest:
        fields = [field for field in re.findall(r"\{([^{}]*)\}", id_pattern) if field not in ("session", "type")]
        named = f"unknown field {{{fields[0]}}}" if fields else "a stray brace"
        guess = "".join(f"; did you mean {{{close}}}?" for close in difflib.get_close_matches(fields[0], ["session", "type"], n=1)) if fields else ""
        raise ConfigError(f"{source}: key 'submission.id_pattern' has {named}{guess} (it takes {{session}} and {{type}}), got {id_pattern!r}")


def _get(table: dict[str, Any], key: str, kind, source: str, default=None, section: str = ""):
    where = f"{section}.{key}" if section else key
    if key not in table:
        if default is None:
            raise ConfigError(f"{source}: missing key {where!r}")
        return default
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"{source}: key {where!r} must be {'a number' if kind is float else kind.__name__}, got {value!r}")
    return value


def _string_list(table: dict[str, Any], key: str, source: str, section: str, default=None) -> tuple[str, ...]:
    value = _get(table, key, list, source, default, section)
    if not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{source}: key '{section}.{key}' must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def competition_from_dict(data: dict[str, Any], source: str = "<config>") -> Competition:
    """Check every key of a parsed config; a bad one raises ConfigError naming key and value."""
    _refuse_unknown(data, ("name", "title", "submission", "scoring", "limits", "rules", "truth", "seeds", "artists"), source)
    name = _get(data, "name", str, source)
    title = _get(data, "title", str, source, default=name)
    submission = _get(data, "submission", dict, source)
    scoring = _get(data, "scoring", dict, source)
    limits_table = _get(data, "limits", dict, source, default={})
    rules_table = _get(data, "rules", dict, source, default={})
    truth_table = _get(data, "truth", dict, source, default={})
    seeds_table = _get(data, "seeds", dict, source, default={})
    artists_table = _get(data, "artists", dict, source, default={})

    _refuse_unknown(submission, SUBMISSION_KEYS, source, "submission")
    _refuse_unknown(scoring, ("types", "weights", "k", "metric", "diagnostics"), source, "scoring")
    _refuse_unknown(limits_table, tuple(Limits.__dataclass_fields__), source, "limits")
    shape = _get(submission, "shape", str, source, default="id_type", section="submission")
    if shape not in SHAPES:
        raise ConfigError(f"{source}: key 'submission.shape' must be one of {', '.join(SHAPES)}, got {shape!r}")
    header = _string_list(submission, "header", source, "submission")
    if len(header) != 2 and shape in ("id_type", "impression") or len(header) < 2:
        raise ConfigError(f"{source}: key 'submission.header' must name 2 columns (id, items){'' if shape in ('id_type', 'impression') else ' or more'}, "
                          f"got {list(header)!r}")
    if len(set(header)) != len(header):
        raise ConfigError(f"{source}: key 'submission.header' names a column twice: {list(header)!r}")
    id_pattern = _get(submission, "id_pattern", str, source, default="{session}" if shape != "id_type" else None, section="submission")
    if shape != "id_type" and id_pattern != "{session}":
        raise ConfigError(f"{source}: key 'submission.id_pattern' is for shape 'id_type'; shape {shape!r} reads the id field as written")
    empty_token = _get(submission, "empty_token", str, source, default="", section="submission")
    if empty_token and (shape != "list" or " " in empty_token or "," in empty_token):
        raise ConfigError(f"{source}: key 'submission.empty_token' needs shape 'list' and a token without spaces or commas, got {empty_token!r}")
    if id_pattern.count("{session}") != 1 or id_pattern.count("{type}") > 1:
        raise ConfigError(f"{source}: key 'submission.id_pattern' must hold {{session}} once and {{type}} at most once, got {id_pattern!r}")
    _check_id_fields(id_pattern, source)
    first_line = _get(submission, "first_line", str, source, default="row" if shape == "impression" else "header", section="submission")
    allowed_first = {"impression": ("row",), "id_type": ("header",)}.get(shape, FIRST_LINES)
    if first_line not in allowed_first:
        raise ConfigError(f"{source}: key 'submission.first_line' must be 'row' for shape 'impression' (its files have no header "
                          f"line), 'header', 'row' or 'metadata' for the string shapes and 'header' for 'id_type', got {first_line!r}")
    values = _get(submission, "values", str, source, default="rank", section="submission")
    if values not in VALUES or (values != "rank" and shape != "impression"):
        raise ConfigError(f"{source}: key 'submission.values' must be one of {', '.join(VALUES)}, and is for shape 'impression', got {values!r}")
    rules = _rules(rules_table, shape, source)
    layout = _layout(submission, header, shape, first_line, source)

    types = _string_list(scoring, "types", source, "scoring", default=["all"] if shape != "id_type" else None)
    if len(set(types)) != len(types):
        raise ConfigError(f"{source}: key 'scoring.types' has a repeated type: {list(types)!r}")
    if "{type}" not in id_pattern and len(types) != 1:
        raise ConfigError(f"{source}: key 'submission.id_pattern' {id_pattern!r} has no {{type}}, so 'scoring.types' must hold one type, got {list(types)!r}")
    middle = id_literals(id_pattern)[1]
    if "{type}" in id_pattern and not middle:
        raise ConfigError(f"{source}: key 'submission.id_pattern' needs literal text between {{session}} and {{type}}, got {id_pattern!r}")
    for type_name in types:
        if "," in type_name or '"' in type_name or (middle and middle in type_name):
            raise ConfigError(f"{source}: type {type_name!r} in 'scoring.types' contains a separator character")
    weights = _get(scoring, "weights", list, source, default=[1.0] * len(types), section="scoring")
    if len(weights) != len(types) or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w >= 0 for w in weights):
        raise ConfigError(f"{source}: key 'scoring.weights' must be {len(types)} finite non-negative numbers (one per type), got {weights!r}")
    if not 0 < sum(weights) < math.inf:  # all zero: every submission scores 0; near 1e308: the total overflows
        raise ConfigError(f"{source}: key 'scoring.weights' must add up to a finite positive total, got {weights!r}")
    k = _get(scoring, "k", int, source, section="scoring")
    if not 1 <= k <= 1000:
        raise ConfigError(f"{source}: key 'scoring.k' must be between 1 and 1000, got {k!r}")

    def metric(text: str, key: str) -> Metric:
        try:
            parsed = parse_metric(text)
        except ValueError as error:
            raise ConfigError(f"{source}: key 'scoring.{key}': {error}") from None
        if parsed.k is not None and parsed.k > k:
            raise ConfigError(f"{source}: key 'scoring.{key}' asks for {text!r}, but 'scoring.k' is {k}: only the first {k} items are read")
        return parsed

    scored = metric(_get(scoring, "metric", str, source, section="scoring"), "metric")
    diagnostics = tuple(metric(text, "diagnostics") for text in _string_list(scoring, "diagnostics", source, "scoring", default=[]))
    for parsed in (scored, *diagnostics):
        if (parsed.family == "value") != (shape == "value"):
            raise ConfigError(f"{source}: metric {str(parsed)!r} does not go with shape {shape!r}: rmse, mae, roc_auc, pr_auc, "
                              "average_precision, log_loss and rce need shape 'value', and shape 'value' takes only those")
        if parsed.kind.table_only and parsed.family != "impression" and shape not in ("list", "long", "value"):
            raise ConfigError(f"{source}: metric {str(parsed)!r} needs a string shape (list, long or value), not {shape!r}")
        if parsed.family == "beyond" and (shape != "id_type" or parsed.cutoff > 63):
            raise ConfigError(f"{source}: metric {str(parsed)!r} needs shape 'id_type' (integer item ids) and K at most 63")
        if parsed.row_kind == ROW_RPREC_ARTIST and (shape != "list" or not artists_table):
            raise ConfigError(f"{source}: metric {str(parsed)!r} needs shape 'list' and an [artists] section (how the table of "
                              "each item's artist is read)")
        if parsed.family == "catalog" and shape not in ("list", "long"):
            raise ConfigError(f"{source}: metric {str(parsed)!r} needs an item catalogue: shape 'list' or 'long'")
        impression_metric = parsed.family == "impression" or parsed.name in ("ndcg", "mrr")
        list_mrr = parsed.name == "mrr" and parsed.k is None and shape in ("list", "long")  # the whole row's first hit
        if (shape == "impression" and not impression_metric) or (shape != "impression" and parsed.family == "impression" and not list_mrr):
            raise ConfigError(f"{source}: metric {str(parsed)!r} does not go with shape {shape!r}: shape 'impression' takes auc, "
                              "mrr, mrr@K (the first click alone) and ndcg@K; auc without a cut-off is the impression shape's, and "
                              "mrr without one the impression, list and long shapes'")

    limit_values = {}
    for field_name, default in Limits.__dataclass_fields__.items():
        kind = float if field_name == "max_seconds" else int
        value = _get(limits_table, field_name, kind, source, default=getattr(Limits, field_name), section="limits")
        if not math.isfinite(value) or value <= 0:  # nan compares false with everything: it would turn the limit off
            raise ConfigError(f"{source}: key 'limits.{field_name}' must be a finite positive number, got {value!r}")
        if value > LIMIT_MOST.get(field_name, math.inf):  # a kernel takes it as an int64; a line is held whole
            raise ConfigError(f"{source}: key 'limits.{field_name}' must be at most {LIMIT_MOST[field_name]:,}, got {value:,}")
        limit_values[field_name] = value

    return Competition(
        name=name, title=title, header=header, id_pattern=id_pattern,
        types=types, weights=tuple(float(w) for w in weights), k=k, metric=scored,
        diagnostics=diagnostics, limits=Limits(**limit_values), source=source, shape=shape, empty_token=empty_token,
        first_line=first_line, values=values, rules=rules, **layout,
        truth_spec=_truth_spec(truth_table, shape, layout["key"], source) if truth_table else None,
        seeds_spec=_seeds_spec(seeds_table, shape, layout["key"], source) if seeds_table else None,
        artists_spec=_artists_spec(artists_table, source) if artists_table else None,
    )


SUBMISSION_KEYS = ("header", "shape", "id_pattern", "item_separator", "empty_token", "first_line", "values", "key", "prediction", "rank",
                   "field_separator", "metadata", "comment", "list_length", "item_type", "key_types", "item_prefix", "item_id_bytes")
TABLE_KEYS = ("key", "prediction", "rank", "field_separator", "metadata", "comment", "list_length", "item_type", "key_types",
              "item_prefix", "item_id_bytes")  # the table reader's
MAX_ITEM_ID_BYTES = 1000


def _separator(table: dict[str, Any], key: str, default: str, source: str, section: str) -> str:
    """A separator the section names, one of SEPARATORS ("" too where that is the default: none)."""
    value = _get(table, key, str, source, default=default, section=section)
    if (value or default) and (len(value) != 1 or value not in SEPARATORS):
        raise ConfigError(f"{source}: key '{section}.{key}' must be one of {', '.join(map(repr, SEPARATORS))}, got {value!r}")
    return value


def _layout(submission: dict[str, Any], header: tuple[str, ...], shape: str, first_line: str, source: str) -> dict[str, Any]:
    """The columns and separators of the [submission] section: which columns name a row, which holds the prediction and
    the rank, how fields and items are separated, and what the first line is (Competition's fields of those names)."""
    strings = shape in ("list", "long", "value")
    for table_key in TABLE_KEYS:
        if table_key in submission and not strings:
            raise ConfigError(f"{source}: key 'submission.{table_key}' is for the string shapes (list, long, value), not {shape!r}")
    key = _string_list(submission, "key", source, "submission", default=list(header[:1]))
    if not key:
        raise ConfigError(f"{source}: key 'submission.key' names no column: a row needs a key (a column of the header, or "
                          f"{ROW_INDEX})")
    prediction = _get(submission, "prediction", str, source, default=header[-1], section="submission")
    rank = _get(submission, "rank", str, source, default="", section="submission")
    named = set(header) | {ROW_INDEX}
    for what, columns in (("key", key), ("prediction", (prediction,)), ("rank", (rank,) if rank else ())):
        unknown = [column for column in columns if column not in named or (column == ROW_INDEX and what != "key")]
        if unknown:
            raise ConfigError(f"{source}: key 'submission.{what}' names {unknown[0]!r}, which is not a column of 'submission.header' "
                              f"({', '.join(header)}){' (' + ROW_INDEX + ': a row position, for keys)' if what == 'key' else ''}")
    if len(set(key)) != len(key) or prediction in key or rank in key or rank == prediction:
        raise ConfigError(f"{source}: keys 'submission.key', 'prediction' and 'rank' must name different columns, got "
                          f"{list(key)!r}, {prediction!r}, {rank!r}")
    if rank and shape != "long":
        raise ConfigError(f"{source}: key 'submission.rank' is for shape 'long' (a row per prediction), not {shape!r}")
    if shape in ("id_type", "impression"):
        separator = _get(submission, "item_separator", str, source, default=" ", section="submission")
        if separator != " ":
            raise ConfigError(f"{source}: key 'submission.item_separator' is ' ' for shape {shape!r}, got {separator!r}")
        return {"key": tuple(key), "prediction": prediction, "item_separator": separator}
    field_separator = _separator(submission, "field_separator", ",", source, "submission")
    item_separator = _separator(submission, "item_separator", " ", source, "submission")
    if item_separator == field_separator and header[-1] != prediction:
        raise ConfigError(f"{source}: key 'submission.item_separator' is the field separator {field_separator!r}: the items are "
                          f"then the rest of the line, so 'submission.prediction' must be the header's last column, got {prediction!r}")
    metadata = _get(submission, "metadata", str, source, default="", section="submission")
    if (first_line == "metadata") != bool(metadata):
        raise ConfigError(f"{source}: key 'submission.metadata' (the text the metadata line starts with, such as 'team_info') "
                          f"goes with first_line = 'metadata', and only with it")
    comment = _get(submission, "comment", str, source, default="", section="submission")
    if len(comment) > 1 or comment in (field_separator, item_separator, '"'):
        raise ConfigError(f"{source}: key 'submission.comment' must be one character other than the separators and '\"', got {comment!r}")
    list_length = _get(submission, "list_length", int, source, default=0, section="submission")
    if list_length and (shape != "list" or not 1 <= list_length <= 1000):
        raise ConfigError(f"{source}: key 'submission.list_length' is for shape 'list': a number of items from 1 to 1000, got {list_length!r}")
    item_type = _get(submission, "item_type", str, source, default="text", section="submission")
    if item_type not in ("text", "integer") or (item_type == "integer" and shape == "value"):
        raise ConfigError(f"{source}: key 'submission.item_type' must be 'text' or 'integer' (list and long shapes), got {item_type!r}")
    key_types = _string_list(submission, "key_types", source, "submission", default=["text"] * len(key))
    if len(key_types) != len(key) or not set(key_types) <= {"text", "integer"}:
        raise ConfigError(f"{source}: key 'submission.key_types' must give 'text' or 'integer' for each column of 'submission.key' "
                          f"({len(key)}), got {list(key_types)!r}")
    item_prefix = _get(submission, "item_prefix", str, source, default="", section="submission")
    item_id_bytes = _get(submission, "item_id_bytes", int, source, default=0, section="submission")
    if (bool(item_prefix) != bool(item_id_bytes) or shape != "list" or not 1 <= item_id_bytes <= MAX_ITEM_ID_BYTES
            or not item_prefix.isprintable() or len(item_prefix.encode()) > MAX_ITEM_ID_BYTES) and (item_prefix or item_id_bytes):
        raise ConfigError(f"{source}: keys 'submission.item_prefix' and 'item_id_bytes' go together, for shape 'list': the text every "
                          f"item starts with and the number of bytes after it (1 to {MAX_ITEM_ID_BYTES}), got {item_prefix!r} and "
                          f"{item_id_bytes!r}")
    return {"key": tuple(key), "prediction": prediction, "rank": rank, "field_separator": field_separator,
            "item_separator": item_separator, "metadata": metadata, "comment": comment, "list_length": list_length,
            "item_type": item_type, "key_types": tuple(key_types), "item_prefix": item_prefix, "item_id_bytes": item_id_bytes}


TRUTH_KEYS = ("format", "first_line", "columns", "field_separator", "key", "item", "item_separator", "value", "grade", "where")
SEEDS_KEYS = ("format", "first_line", "columns", "field_separator", "key", "item", "item_separator", "where")
ARTISTS_KEYS = ("format", "first_line", "columns", "field_separator", "item", "artist")


def _truth_spec(table: dict[str, Any], shape: str, key: tuple[str, ...], source: str, section: str = "truth") -> TruthSpec:
    """The [truth] section: how the competition's published truth is read (its columns by name); [seeds] is read alike."""
    _refuse_unknown(table, TRUTH_KEYS if section == "truth" else SEEDS_KEYS, source, section)
    if shape not in ("list", "long", "value"):
        raise ConfigError(f"{source}: section [{section}] is for the string shapes (list, long, value), not {shape!r}")
    form = _get(table, "format", str, source, default="table", section=section)
    if form not in ("table", "playlists"):
        raise ConfigError(f"{source}: key '{section}.format' must be 'table' (CSV or Parquet) or 'playlists' (the MPD's JSON), got {form!r}")
    first_line, columns = _first_line(table, source, section)
    truth_key = _string_list(table, "key", source, section, default=list(key))
    if len(truth_key) != len(key):
        raise ConfigError(f"{source}: key '{section}.key' must name as many columns as 'submission.key' ({len(key)}), got {list(truth_key)!r}")
    item = _get(table, "item", str, source, default="", section=section)
    value = _get(table, "value", str, source, default="", section=section)
    if (shape == "value") != bool(value) or (shape != "value") != bool(item):
        needed = f"'{section}.value' (the column of the true value)" if shape == "value" else f"'{section}.item' (the column of its items)"
        raise ConfigError(f"{source}: shape {shape!r} reads its {section}'s {needed}, and only that")
    item_separator = _separator(table, "item_separator", "", source, section)
    grade = _get(table, "grade", dict, source, default={}, section=section)
    for column, weight in grade.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < math.inf:
            raise ConfigError(f"{source}: key '{section}.grade.{column}' must be a finite positive grade, got {weight!r}")
    where = _get(table, "where", dict, source, default={}, section=section)
    for column, wanted in where.items():
        if not isinstance(wanted, str):
            raise ConfigError(f"{source}: key '{section}.where.{column}' must be the text the column holds, got {wanted!r}")
    return TruthSpec(format=form, first_line=first_line, columns=columns,
                     field_separator=_separator(table, "field_separator", ",", source, section), key=tuple(truth_key), item=item,
                     item_separator=item_separator, value=value, grade=tuple((str(c), float(w)) for c, w in grade.items()),
                     where=tuple(where.items()))


def _first_line(table: dict[str, Any], source: str, section: str) -> tuple[str, tuple[str, ...]]:
    """A published table's first_line and, for "row", its columns' names."""
    first_line = _get(table, "first_line", str, source, default="header", section=section)
    columns = _string_list(table, "columns", source, section, default=[])
    if first_line not in ("header", "row") or (first_line == "row") != bool(columns):
        raise ConfigError(f"{source}: key '{section}.first_line' must be 'header' or 'row', and 'row' needs '{section}.columns' (their "
                          f"names in order), got {first_line!r}")
    return first_line, columns


def _seeds_spec(table: dict[str, Any], shape: str, key: tuple[str, ...], source: str) -> TruthSpec:
    """The [seeds] section: the items each row was given (Spotify's seed tracks), in a file read as a published truth is."""
    if shape != "list":
        raise ConfigError(f"{source}: section [seeds] is for shape 'list' (a row's items), not {shape!r}")
    return _truth_spec(table, shape, key, source, "seeds")


def _artists_spec(table: dict[str, Any], source: str) -> ArtistSpec:
    """The [artists] section: how the files of each item's artist are read."""
    _refuse_unknown(table, ARTISTS_KEYS, source, "artists")
    form = _get(table, "format", str, source, default="playlists", section="artists")
    if form not in ("table", "playlists"):
        raise ConfigError(f"{source}: key 'artists.format' must be 'playlists' (the MPD's JSON) or 'table' (CSV or Parquet), got {form!r}")
    first_line, columns = _first_line(table, source, "artists")
    item, artist = (_get(table, name, str, source, section="artists") for name in ("item", "artist"))
    if not item or not artist or item == artist:
        raise ConfigError(f"{source}: keys 'artists.item' and 'artists.artist' must name two different fields, got {item!r} and {artist!r}")
    return ArtistSpec(format=form, item=item, artist=artist, first_line=first_line, columns=columns,
                      field_separator=_separator(table, "field_separator", ",", source, "artists"))


def _rules(table: dict[str, Any], shape: str, source: str) -> Rules:
    """The [rules] of a config: each rule one of the values its shape has (the first is the default); a rule the shape does
    not have is refused."""
    allowed = SHAPE_RULES.get(shape, OTHER_SHAPES_RULES)
    _refuse_unknown(table, tuple(RULES), source, "rules")
    chosen = {}
    for rule in RULES:
        values = allowed.get(rule, ())
        value = _get(table, rule, str, source, default=values[0] if values else "", section="rules")
        if rule in table and value not in values:
            which = f"one of {', '.join(values)}" if values else "not set"
            raise ConfigError(f"{source}: key 'rules.{rule}' must be {which} for shape {shape!r}, got {value!r}")
        if values:
            chosen[rule] = value
    return Rules(**chosen)
