"""The side figures of a row for the beyond-accuracy metrics, from dense item arrays looked up by item id.

parse_block calls side_row (inlined) for each row of the truth only when such a metric is
configured: `side` then holds the kinds and cut-offs, the item arrays (scorer.items.ItemSide),
the exposure counts of this thread and the rows' output. Column 0 of a row is its item count;
column j + 1 holds metric j's figure (see SIDE_* in kinds.py). Ids beyond the tables are
unknown items: self-information `unknown_info`, popularity 0, long tail, no category, no embedding.
"""

from numba import njit

from scorer.kernels.kinds import (SIDE_DIVERSITY_CATEGORY, SIDE_DIVERSITY_EMBEDDING, SIDE_EXPOSURE, SIDE_LONG_TAIL,
                                  SIDE_NOVELTY, SIDE_POPULARITY, SIDE_SERENDIPITY)


@njit(cache=True, nogil=True, inline="always")
def side_row(side, items, n_items, hit_ranks, type_index, row):
    """Write row `row` of the side figures: the items are items[:n_items], hit_ranks the row's hit-rank mask."""
    kinds, ks, popularity, self_info, long_tail, rank, category, embedding, unknown_info, exposure, out, codes, total_vector = side
    n_table = popularity.shape[0]
    out[row, 0] = n_items
    g = 0
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        k = min(ks[j], n_items)
        figure = 0.0
        if kind == SIDE_NOVELTY:
            for r in range(k):
                item = items[r]
                figure += self_info[item] if 0 <= item < n_table else unknown_info
        elif kind == SIDE_POPULARITY:
            for r in range(k):
                item = items[r]
                if 0 <= item < n_table:
                    figure += popularity[item]
        elif kind == SIDE_LONG_TAIL:
            for r in range(k):
                item = items[r]
                figure += long_tail[item] if 0 <= item < n_table else 1.0
        elif kind == SIDE_SERENDIPITY:
            for r in range(k):
                if (hit_ranks >> r) & 1:
                    item = items[r]
                    if not (0 <= item < n_table and rank[item] < ks[j]):
                        figure += 1.0
        elif kind == SIDE_DIVERSITY_CATEGORY:
            for r in range(k):  # the codes sorted (insertion), then equal runs give the same-category pairs
                item = items[r]
                code = category[item] if 0 <= item < n_table else -1
                if code < 0:
                    code = -1 - r  # an unknown category equals no other
                q = r
                while q > 0 and codes[q - 1] > code:
                    codes[q] = codes[q - 1]
                    q -= 1
                codes[q] = code
            same = 0.0
            run = 1
            for r in range(1, k):
                if codes[r] == codes[r - 1]:
                    run += 1
                else:
                    same += run * (run - 1) / 2.0
                    run = 1
            same += run * (run - 1) / 2.0
            pairs = k * (k - 1) / 2.0
            figure = 1.0 - same / pairs if pairs > 0 else 0.0
        elif kind == SIDE_DIVERSITY_EMBEDDING:
            dims = embedding.shape[1]
            for c in range(dims):
                total_vector[c] = 0.0
            squares = 0.0
            for r in range(k):
                item = items[r]
                if 0 <= item < n_table:
                    for c in range(dims):
                        value = embedding[item, c]
                        total_vector[c] += value
                        squares += value * value
            length = 0.0
            for c in range(dims):
                length += total_vector[c] * total_vector[c]
            pairs = k * (k - 1) / 2.0  # Σ_{pairs} cos = (|Σ u|² − Σ |u|²) / 2 for unit rows u
            figure = 1.0 - (length - squares) / 2.0 / pairs if pairs > 0 else 0.0
        elif kind == SIDE_EXPOSURE:
            for r in range(k):
                item = items[r]
                if 0 <= item < n_table:
                    exposure[g, type_index, item] += 1
            g += 1
        out[row, j + 1] = figure

