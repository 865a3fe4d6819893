"""The side figures of a row for the beyond-accuracy metrics, from per-item words looked up by item id.

parse_block calls side_row (inlined) for each row of the truth only when such a metric is
configured: `side` then holds the kinds and cut-offs, the items' packed words
(scorer.items.ItemSide.packed: one random load per item serves every metric), popularity and
embeddings (loaded only by arp and diversity by embedding), this thread's exposure counts and
the rows' output. Column 0 of a row is its item count; column j + 1 holds metric j's figure
(SIDE_* in kinds.py). Ids beyond the table take `unknown_word`: unknown self-information, no
category, popularity 0, long tail, no embedding.
"""

from numba import njit

from scorer.kernels.kinds import (SIDE_DIVERSITY_CATEGORY, SIDE_DIVERSITY_EMBEDDING, SIDE_EXPOSURE, SIDE_LONG_TAIL,
                                  SIDE_NOVELTY, SIDE_PAIRS, SIDE_POPULARITY, SIDE_SERENDIPITY)

SELF_INFO_UNIT = 2.0**-26  # scorer.items.SELF_INFO_SCALE


@njit(cache=True, nogil=True, inline="always")
def side_row(side, items, n_items, hit_ranks, type_index, row):
    """Write row `row` of the side figures: the items are items[:n_items], hit_ranks the row's hit-rank mask."""
    kinds, ks, packed, popularity, embedding, unknown_word, exposure, out, words, total_vector = side
    n_table = packed.shape[0]
    longest = 0
    for j in range(kinds.shape[0]):
        longest = max(longest, ks[j])
    longest = min(longest, n_items)
    for r in range(longest):  # one load per item, whatever the metrics
        item = items[r]
        words[r] = packed[item] if 0 <= item < n_table else unknown_word
    out[row, 0] = n_items
    g = 0
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        k = min(ks[j], n_items)
        figure = 0.0
        if kind == SIDE_NOVELTY:
            fixed = 0
            for r in range(k):
                fixed += words[r] & 0xFFFFFFFF
            figure = fixed * SELF_INFO_UNIT
        elif kind == SIDE_LONG_TAIL:
            for r in range(k):
                figure += (words[r] >> 62) & 1
        elif kind == SIDE_SERENDIPITY:
            for r in range(k):
                if (hit_ranks >> r) & 1 and ((words[r] >> 56) & 63) >= ks[j]:
                    figure += 1.0
        elif kind == SIDE_PAIRS:
            hits = 0
            for r in range(k):
                if (hit_ranks >> r) & 1:
                    hits += 1
                else:
                    figure += hits
        elif kind == SIDE_DIVERSITY_CATEGORY:
            for r in range(k):  # the codes sorted (insertion), then equal runs give the same-category pairs
                code = (words[r] >> 32) & 0xFFFFFF
                if code == 0:
                    code = -1 - r  # an unknown category equals no other
                q = r
                while q > 0 and total_vector[q - 1] > code:
                    total_vector[q] = total_vector[q - 1]
                    q -= 1
                total_vector[q] = code
            same = 0.0
            run = 1
            for r in range(1, k):
                if total_vector[r] == total_vector[r - 1]:
                    run += 1
                else:
                    same += run * (run - 1) / 2.0
                    run = 1
            same += run * (run - 1) / 2.0
            pairs = k * (k - 1) / 2.0
            figure = 1.0 - same / pairs if pairs > 0 else 0.0
        elif kind == SIDE_POPULARITY:
            for r in range(k):
                item = items[r]
                if 0 <= item < n_table:
                    figure += popularity[item]
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
