"""Item-side inputs of the beyond-accuracy metrics: popularity, category and embedding per item id.

Read from an item table (``--items FILE``: Parquet or CSV with an item id column, optional
``popularity``, ``category`` and ``emb*`` columns) or counted from a training log (``--train``:
the train_sessions file of ``scorer prepare``). Item ids are the integer ids of the id_type
shape; the arrays are dense, indexed by id. Bad input raises UsageError (exit 2) naming the
file, column and row.

Conventions (see docs/metrics.md, "Beyond-accuracy metrics and AUC"):
- popularity pop(i): interactions with i in the training log (or the table's column); an id
  beyond the table or absent from it has pop 0;
- p(i) = max(pop(i), 1) / Σ_j pop(j): an item never seen counts as seen once (novelty stays finite);
- short head: the 20% most popular items of the table (ties by id); every other item,
  and every id beyond the table, is long tail;
- the catalogue (AUC's item count) is the number of items the table lists (or the log holds).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.file_formats import is_parquet, unreadable

ID_COLUMNS = ("item", "aid", "item_id", "article_id")
HEAD_SHARE = 0.2  # the short head: this share of the table's items, the most popular ones
MAX_ITEM_ID = 2**31 - 1
MAX_TABLE_BYTES = 4_000_000_000  # the dense arrays of a table (embeddings included) may not take more


@dataclass
class ItemSide:
    """Dense per-item arrays (index = item id) the side kernel looks up."""

    popularity: np.ndarray  # float64: pop(i)
    self_info: np.ndarray  # float64: −log2 p(i)
    long_tail: np.ndarray  # float64: 1.0 for a long-tail item
    popularity_rank: np.ndarray  # int64: 0 for the most popular item (ties by id)
    category: np.ndarray  # int64: category code, −1 when unknown
    embedding: np.ndarray  # float64 (n, d), rows of unit length (zero rows for items without one); d = 0: none
    catalogue: int  # items listed: AUC's N
    unknown_self_info: float  # −log2 p of an id beyond the table (pop counted as 1)
    source: str = ""

    @property
    def packed(self) -> np.ndarray:
        """One uint32 word per item (a single random load in the kernel, 4 bytes: the table stays in cache more):
        self-information in fixed point (SELF_INFO_SCALE) in bits 0-15, category + 1 in bits 16-24 (0: none), min(popularity
        rank, 63) in bits 25-30, long tail in bit 31. Shape (n, 1); (n, 2) when a category code exceeds the word's 9 bits:
        column 1 then holds category + 1 (in the same cache line as the word) and the word's category bits are 0."""
        if self._packed is None:
            self._packed = pack(self.self_info, self.category, self.popularity_rank, self.long_tail)
        return self._packed

    @property
    def unknown_word(self) -> int:
        """The packed word of an id beyond the table: unknown self-information, no category, rank 63, long tail."""
        return int(pack(np.array([self.unknown_self_info]), np.array([-1]), np.array([63]), np.array([1.0]))[0, 0])

    _packed: np.ndarray | None = None

    @property
    def has_category(self) -> bool:
        return bool((self.category >= 0).any())

    @property
    def has_embedding(self) -> bool:
        return self.embedding.shape[1] > 0


SELF_INFO_SCALE = 2.0**10  # self-information in 16 bits, to 2^-10 bits: an item's is within 2^-11 of −log2 p (below 53 < 64)
MAX_CATEGORIES = 2**24 - 1
WORD_CATEGORIES = 2**9 - 2  # codes 0 .. 510 fit the word; beyond, the table gets its second column


def pack(self_info: np.ndarray, category: np.ndarray, rank: np.ndarray, long_tail: np.ndarray) -> np.ndarray:
    """The kernel's per-item words (see ItemSide.packed)."""
    fixed = np.rint(self_info * SELF_INFO_SCALE).astype(np.uint32)
    code = (category + 1).astype(np.uint32)
    wide = len(code) > 0 and int(code.max()) > WORD_CATEGORIES + 1
    word = (fixed | (np.uint32(0) if wide else code << np.uint32(16)) | (np.minimum(rank, 63).astype(np.uint32) << np.uint32(25))
            | (long_tail.astype(np.uint32) << np.uint32(31)))
    return np.ascontiguousarray(np.stack([word, code], axis=1) if wide else word[:, None])


def from_popularity(ids: np.ndarray, popularity: np.ndarray, category: np.ndarray | None = None,
                    embedding: np.ndarray | None = None, source: str = "") -> ItemSide:
    """The item side of listed ids with their popularity counts (and optional category codes and embeddings)."""
    n = int(ids.max()) + 1 if len(ids) else 0
    pop = np.zeros(n, np.float64)
    pop[ids] = popularity
    total = max(float(pop.sum()), 1.0)
    self_info = -np.log2(np.maximum(pop, 1.0) / total)
    order = np.argsort(-pop, kind="stable")  # most popular first, ties by id
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    listed = np.zeros(n, bool)
    listed[ids] = True
    rank[~listed] = n  # an unlisted id in the range is ranked after every listed one
    order = order[listed[order]]
    head = np.zeros(n, bool)
    head[order[: int(round(HEAD_SHARE * len(ids)))]] = True
    cat = np.full(n, -1, np.int64)
    if category is not None:
        cat[ids] = category
    dims = 0 if embedding is None else embedding.shape[1]
    emb = np.zeros((n, dims), np.float64)
    if embedding is not None and dims:
        norms = np.linalg.norm(embedding, axis=1, keepdims=True)
        emb[ids] = np.divide(embedding, norms, out=np.zeros_like(embedding, dtype=np.float64), where=norms > 0)
    return ItemSide(pop, self_info, (~head).astype(np.float64), rank, cat, emb, int(len(ids)), float(-np.log2(1.0 / total)), source)


def empty() -> ItemSide:
    """No item side (the arrays the kernel takes when no beyond-accuracy metric needs items)."""
    return from_popularity(np.empty(0, np.int64), np.empty(0))


def from_train(path: str | Path) -> ItemSide:
    """Popularity counted from a training session log (jsonl or parquet, as `scorer prepare` writes it)."""
    from scorer.prepare.readers import read_events

    events = read_events(Path(path))
    counts = np.bincount(events.aid.astype(np.int64)) if len(events.aid) else np.zeros(0, np.int64)
    ids = np.flatnonzero(counts)
    return from_popularity(ids, counts[ids].astype(np.float64), source=str(path))


def read_items(path: str | Path) -> ItemSide:
    """An item table: Parquet (.parquet/.pq) or CSV; the id column is one of ID_COLUMNS."""
    path = Path(path)
    table = _read_table(path)
    names = [name.lower() for name in table.column_names]
    id_name = next((table.column_names[names.index(name)] for name in ID_COLUMNS if name in names), None)
    if id_name is None:
        raise UsageError(f"{path}: no item id column: expected one of {', '.join(ID_COLUMNS)} (found {', '.join(table.column_names) or 'none'})")
    ids = _integers(path, table, id_name, 0, MAX_ITEM_ID)
    if len(ids) == 0:
        raise UsageError(f"{path}: the item table has no rows")
    unique, first = np.unique(ids, return_index=True)
    if len(unique) != len(ids):
        repeated = np.setdiff1d(np.arange(len(ids)), first)[0]
        raise UsageError(f"{path}: item {int(ids[repeated])} is listed twice (row {int(repeated) + 1})")
    popularity_name, category_name = _column(table, "popularity"), _column(table, "category")
    popularity = _integers(path, table, popularity_name, 0, 2**53).astype(np.float64) if popularity_name else np.zeros(len(ids))
    category = _categories(path, table, category_name) if category_name else None
    if category is not None and category.max(initial=0) >= MAX_CATEGORIES:
        raise UsageError(f"{path}: column 'category' has more than {MAX_CATEGORIES:,} distinct values")
    emb_names = [name for name in table.column_names if name.lower().startswith("emb")]
    n = int(ids.max()) + 1
    if n * (8 * (4 + len(emb_names))) > MAX_TABLE_BYTES:
        raise UsageError(f"{path}: item ids up to {n - 1:,} with {len(emb_names)} embedding columns need more than "
                         f"{MAX_TABLE_BYTES / 1e9:g} GB as dense arrays: renumber the items")
    embedding = np.column_stack([_floats(path, table, name) for name in emb_names]) if emb_names else None
    return from_popularity(ids, popularity, category, embedding, str(path))


def _read_table(path: Path):
    import pyarrow as pa

    why = unreadable(path, "item table")
    if why:
        raise UsageError(why)
    try:
        if is_parquet(path):
            import pyarrow.parquet as pq

            return pq.read_table(path)
        import pyarrow.csv as pv

        return pv.read_csv(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, pa.ArrowException) as error:
        raise UsageError(f"{path}: cannot read the item table: {error}") from None


def _column(table, name: str) -> str | None:
    return next((column for column in table.column_names if column.lower() == name), None)


def _values(path: Path, table, name: str) -> np.ndarray:
    column = table.column(name)
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise UsageError(f"{path}: column {name!r} is empty in row {row + 1}")
    return column.to_numpy(zero_copy_only=False)


def _integers(path: Path, table, name: str, low: int, high: int) -> np.ndarray:
    values = _values(path, table, name)
    if values.dtype.kind not in "iu":
        raise UsageError(f"{path}: column {name!r} must hold whole numbers, found {values.dtype} values such as {values[0]!r}")
    bad = np.flatnonzero((values < low) | (values > high))
    if len(bad):
        raise UsageError(f"{path}: column {name!r} row {int(bad[0]) + 1}: {values[bad[0]]} is outside {low}..{high:,}")
    return values.astype(np.int64)


def _floats(path: Path, table, name: str) -> np.ndarray:
    values = _values(path, table, name)
    if values.dtype.kind not in "iuf":
        raise UsageError(f"{path}: embedding column {name!r} must hold numbers, found {values.dtype}")
    bad = np.flatnonzero(~np.isfinite(values.astype(np.float64)))
    if len(bad):
        raise UsageError(f"{path}: embedding column {name!r} row {int(bad[0]) + 1} is not a finite number")
    return values.astype(np.float64)


def _categories(path: Path, table, name: str) -> np.ndarray:
    """Category codes 0.. (any values: equal values, equal codes)."""
    values = _values(path, table, name)
    return np.unique(values.astype(str) if values.dtype.kind == "O" else values, return_inverse=True)[1].astype(np.int64)
