"""The side figures of a row for the beyond-accuracy metrics, from per-item words looked up by item id.

parse_block and its plain_rows call side_row (inlined) for each row of the truth only when such a metric is
configured: `side` then holds the kinds and cut-offs, the items' packed words
(scorer.truth.items.ItemSide.packed: one random 4-byte load per item serves every metric), popularity and
embeddings (loaded only by arp and diversity by embedding), this thread's exposure counts and
the rows' output. Column 0 of a row is its item count; column j + 1 holds metric j's figure
(SIDE_* in kinds.py). Ids beyond the table take `unknown_word`: unknown self-information, no
category, popularity 0, long tail, no embedding.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from scorer.kernels.kinds import (
    SIDE_DIVERSITY_CATEGORY,
    SIDE_DIVERSITY_EMBEDDING,
    SIDE_EXPOSURE,
    SIDE_LONG_TAIL,
    SIDE_NOVELTY,
    SIDE_PAIRS,
    SIDE_POPULARITY,
    SIDE_SERENDIPITY,
)

SELF_INFO_UNIT = 2.0**-10  # 1 / scorer.truth.items.SELF_INFO_SCALE


@intrinsic
def prefetch_word(typingctx, packed, item):
    """Start loading packed[item, 0] into the caches (llvm.prefetch: no wait, no fault); plain_rows calls it as it reads an item."""

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        index = [args[1]] + [context.get_constant(types.intp, 0)] * (array_type.ndim - 1)
        pointer = cgutils.get_item_pointer(context, builder, array_type, array, index, wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]),
                                                  "llvm.prefetch.p0i8")
        builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])  # read, keep, data
        return context.get_dummy_value()

    return types.void(packed, item), codegen


@njit(cache=True, nogil=True, inline="always")
def side_row(kinds, ks, packed, popularity, embedding, unknown_word, exposure, out, words, total_vector, table,
             items, n_items, hit_ranks, type_index, row):
    """Write row `row` of the side figures (`side` unpacked): the items are items[:n_items], hit_ranks the row's hit-rank mask."""
    n_table = packed.shape[0]
    wide = packed.shape[1] > 1  # categories beyond the word's 9 bits: column 1, kept in bits 32- of words[r]
    stamps, keys, tally = table[0], table[1], table[2]
    longest = 0
    for j in range(kinds.shape[0]):
        if kinds[j] == SIDE_NOVELTY or kinds[j] == SIDE_LONG_TAIL or kinds[j] == SIDE_DIVERSITY_CATEGORY:
            longest = max(longest, ks[j])
    longest = min(longest, n_items)
    for r in range(longest):  # one load per item for all the metrics that read the words
        item = items[r]
        word = unknown_word
        if 0 <= item < n_table:
            word = np.int64(packed[item, 0])
            if wide:
                word |= np.int64(packed[item, 1]) << 32
        words[r] = word
    out[row, 0] = n_items
    g = 0
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        k = min(ks[j], n_items)
        figure = 0.0
        if kind == SIDE_NOVELTY:
            fixed = 0
            for r in range(k):
                fixed += words[r] & 0xFFFF
            figure = fixed * SELF_INFO_UNIT
        elif kind == SIDE_LONG_TAIL:
            for r in range(k):
                figure += (words[r] >> 31) & 1
        elif kind == SIDE_SERENDIPITY:
            bits = hit_ranks & ((np.int64(1) << k) - 1)
            while bits != 0:  # only the hits' words are read
                r = trailing_zeros(bits)
                bits &= bits - 1
                item = items[r]
                rank = np.int64(packed[item, 0]) >> 25 & 63 if 0 <= item < n_table else 63
                if rank >= ks[j]:
                    figure += 1.0
        elif kind == SIDE_PAIRS:
            bits = hit_ranks & ((np.int64(1) << k) - 1)
            h = 0
            while bits != 0:  # the hit at rank r has (k − 1 − r) ranks after it, of which the later hits are no misses
                r = trailing_zeros(bits)
                bits &= bits - 1
                figure += k - 1 - r
                h += 1
            figure -= h * (h - 1) / 2.0
        elif kind == SIDE_DIVERSITY_CATEGORY:
            same = 0
            if not wide:  # codes below 512 count straight in tally (zero between rows): no branch per item
                for r in range(k):
                    code = (words[r] >> 16) & 511
                    same += tally[code]
                    tally[code] += 1
                unknown = tally[0]  # an unknown category (code 0) equals no other
                same -= unknown * (unknown - 1) // 2
                for r in range(k):
                    tally[(words[r] >> 16) & 511] = 0
            else:  # pairs of equal codes, counted in a 64-slot open-addressing table stamped with the row
                for r in range(k):
                    code = words[r] >> 32
                    if code == 0:
                        continue
                    slot = (code * np.int64(0x9E3779B97F4A7C15)) >> np.int64(58) & 63
                    while stamps[slot] == row and keys[slot] != code:
                        slot = (slot + 1) & 63
                    if stamps[slot] != row:
                        stamps[slot] = row
                        keys[slot] = code
                        tally[slot] = 0
                    same += tally[slot]
                    tally[slot] += 1
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
