"""Resampling kernels: a seeded hash split of sessions, grouping of identical rows, and the
per-group counts of the bootstrap and of the sign-flip (paired randomization) test.

Every statistic of the scorer is a ratio of sums over sessions, Σ_s num_s / Σ_s den_s, so a
resample only needs the column sums of the resampled rows. Sessions with identical rows are
grouped first (at OTTO size a few hundred to a few ten thousand groups), and a resample draws a
count per group instead of one per session; the resampled sums are then (draws @ values).

Random streams are seeded per resample (splitmix64, and numba's generator for large Poisson
counts), so the result does not depend on how the resamples are split over threads.
"""

import numpy as np
from numba import njit

from scorer.kernels.hashing import GOLDEN, mix64

UNIT = 1.0 / 9007199254740992.0  # 2^-53


@njit(cache=True, nogil=True)
def hash_units(sessions, seed):
    """u_s = top 53 bits of mix64(mix64(seed + φ) ^ session) / 2^53, uniform in [0, 1) and fixed by (seed, session)."""
    key = mix64(np.uint64(seed) + GOLDEN)
    out = np.empty(sessions.shape[0], np.float64)
    for i in range(sessions.shape[0]):
        out[i] = np.float64(mix64(key ^ np.uint64(sessions[i])) >> np.uint64(11)) * UNIT
    return out


@njit(cache=True, nogil=True)
def stream_seeds(seed, n):
    """n 32-bit seeds, one per resample: seed_r = mix64(mix64(seed) + (r + 1)·φ) >> 32."""
    base = mix64(np.uint64(seed))
    out = np.empty(n, np.int64)
    for r in range(n):
        out[r] = np.int64(mix64(base + np.uint64(r + 1) * GOLDEN) >> np.uint64(32))
    return out


@njit(cache=True, nogil=True)
def group_rows(left, right):
    """Group identical rows of two int64 arrays side by side, (n, a) and (n, b):
    (group id per row, index of each group's first row).

    Open addressing on a hash of the row's words; ids are numbered in order of first appearance.
    """
    n = left.shape[0]
    size = 16
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)  # group id
    first = np.empty(n, np.int64)
    group = np.empty(n, np.int64)
    n_groups = 0
    for i in range(n):
        h = np.uint64(left.shape[1] + right.shape[1])
        for j in range(left.shape[1]):
            h = mix64(h ^ np.uint64(left[i, j]))
        for j in range(right.shape[1]):
            h = mix64(h ^ np.uint64(right[i, j]))
        pos = h & mask
        while True:
            g = table[pos]
            if g < 0:
                table[pos] = n_groups
                first[n_groups] = i
                group[i] = n_groups
                n_groups += 1
                break
            f = first[g]
            same = True
            for j in range(left.shape[1]):
                if left[f, j] != left[i, j]:
                    same = False
                    break
            if same:
                for j in range(right.shape[1]):
                    if right[f, j] != right[i, j]:
                        same = False
                        break
            if same:
                group[i] = g
                break
            pos = (pos + np.uint64(1)) & mask
    return group, first[:n_groups].copy()


SMALL_MEAN = 16  # below it a Poisson count is drawn by inversion from one uniform
BIG_FLIP = 4096  # above it Bin(m, 1/2) comes from numba's sampler rather than m random bits


@njit(cache=True, nogil=True)
def _next(state):
    """splitmix64: (new state, 64 random bits)."""
    state = state + GOLDEN
    return state, mix64(state)


@njit(cache=True, nogil=True)
def poisson_draws(counts, seeds, out):
    """out[r, j] = c_rj ~ Poisson(m_j) independently (m_j = counts[j]), one row per seed.

    The Poisson bootstrap: every session is drawn Poisson(1) times, so a group of m identical
    sessions Poisson(m) times; the resampled column sums are out @ values. For a ratio of sums
    it matches the multinomial bootstrap as n grows. c_rj for m_j < 16 by inversion of one
    splitmix64 uniform, larger m_j with numba's PTRS sampler seeded with the same seed.
    """
    n_groups = counts.shape[0]
    big = False
    cdf = np.ones((SMALL_MEAN, 64), np.float64)  # cdf[m, c] = P(Poisson(m) <= c), for m < SMALL_MEAN
    for m in range(1, SMALL_MEAN):
        p = np.exp(-np.float64(m))
        total = p
        for c in range(63):
            cdf[m, c] = total
            p *= m / (c + 1.0)
            total += p
    for j in range(n_groups):
        big = big or counts[j] >= SMALL_MEAN
    for r in range(seeds.shape[0]):
        state = mix64(np.uint64(seeds[r]))
        if big:
            np.random.seed(seeds[r])
        for j in range(n_groups):
            m = counts[j]
            if m >= SMALL_MEAN:
                draw = np.random.poisson(np.float64(m))
            else:
                state, bits = _next(state)
                u = np.float64(bits >> np.uint64(11)) * UNIT
                draw = 0
                while draw < 63 and u >= cdf[m, draw]:
                    draw += 1
            out[r, j] = draw


@njit(cache=True, nogil=True)
def session_poisson_weights(seeds, rows, thresholds, out):
    """out[r, j] = w_rj ~ Poisson(1): the weight of session s = rows[j] in resample r, a function of (seeds[r], s) alone.

    w_rj = #{c : u >= thresholds[c]} (inversion; thresholds from scorer.analytics.leaderboard.joint_bootstrap.poisson_one_thresholds), u = one 32-bit half
    (s mod 2) of mix64(mix64(seeds[r]) + (s div 2 + 1)·φ): splitmix64's output at position s div 2 of resample r's
    stream. Any block of sessions, drawn in any order or thread, gets the same weights, so the joint bootstrap of
    many submissions draws them once per block and applies them to every submission's columns. The first seven
    comparisons are made without a branch (P(w >= 7) = 8e-5).
    """
    t0, t1, t2, t3 = thresholds[0], thresholds[1], thresholds[2], thresholds[3]
    t4, t5, t6 = thresholds[4], thresholds[5], thresholds[6]
    last = thresholds.shape[0] - 1
    for r in range(seeds.shape[0]):
        key = mix64(np.uint64(seeds[r]))
        for j in range(rows.shape[0]):
            s = np.uint64(rows[j])
            bits = mix64(key + (s // np.uint64(2) + np.uint64(1)) * GOLDEN)
            u = (bits >> np.uint64(32)) if s & np.uint64(1) else (bits & np.uint64(0xFFFFFFFF))
            draw = _first_seven(u, t0, t1, t2, t3, t4, t5, t6)
            if draw == 7:
                draw = _beyond_seven(u, thresholds, last)
            out[r, j] = draw


@njit(cache=True, nogil=True)
def _first_seven(u, t0, t1, t2, t3, t4, t5, t6):
    """min(w, 7) for the 32-bit uniform u, w = #{c : u >= thresholds[c]}, without a branch."""
    return (np.int64(u >= t0) + np.int64(u >= t1) + np.int64(u >= t2) + np.int64(u >= t3) + np.int64(u >= t4)
            + np.int64(u >= t5) + np.int64(u >= t6))


@njit(cache=True, nogil=True, inline="always")
def _beyond_seven(u, thresholds, last):
    """w for a u whose first seven comparisons all held."""
    draw = 7
    while draw < last and u >= thresholds[draw]:
        draw += 1
    return draw


@njit(cache=True, nogil=True)
def resampled_block_sums(seeds, rows, values, thresholds, out):
    """out[r, c] += Σ_j w_r(rows[j]) · values[rows[j], c], summed in float32 in the order of rows, one sum per (r, c).

    w_r(s) is session_poisson_weights' weight of session s in resample r (the same draw), so this is one block of the joint
    bootstrap's product (weights @ columns) without the weights' matrix: a column's float32 sum does not depend on the other
    columns, so one submission reduced alone, or a batch of them, gets the sums it would get among all of them. Sessions
    whose values are all 0 are skipped (they add exactly 0, and draw nothing), and a block's weights are drawn for all its
    columns at once.
    """
    n_columns = values.shape[1]
    keep = np.empty(rows.shape[0], np.int64)
    m = 0
    for j in range(rows.shape[0]):
        for c in range(n_columns):
            if values[rows[j], c] != 0:
                keep[m] = rows[j]
                m += 1
                break
    steps, halves = np.empty(m, np.uint64), np.empty(m, np.uint64)
    x = np.empty((m, n_columns), np.float32)
    for i in range(m):
        s = np.uint64(keep[i])
        steps[i] = (s // np.uint64(2) + np.uint64(1)) * GOLDEN
        halves[i] = np.uint64(32) * (s & np.uint64(1))  # an odd session takes the high half of its pair's 64 bits
        x[i] = values[keep[i]]
    t0, t1, t2, t3 = thresholds[0], thresholds[1], thresholds[2], thresholds[3]
    t4, t5, t6 = thresholds[4], thresholds[5], thresholds[6]
    last = thresholds.shape[0] - 1
    w = np.empty(m, np.float32)
    sums = np.empty(n_columns, np.float32)
    for r in range(seeds.shape[0]):
        key = mix64(np.uint64(seeds[r]))
        for i in range(m):  # no branch: vectorized
            w[i] = _first_seven((mix64(key + steps[i]) >> halves[i]) & np.uint64(0xFFFFFFFF), t0, t1, t2, t3, t4, t5, t6)
        for i in range(m):
            if w[i] == 7:
                w[i] = _beyond_seven((mix64(key + steps[i]) >> halves[i]) & np.uint64(0xFFFFFFFF), thresholds, last)
        sums[:] = 0
        for i in range(m):
            for c in range(n_columns):
                sums[c] += w[i] * x[i, c]
        for c in range(n_columns):
            out[r, c] += sums[c]


@njit(cache=True, nogil=True)
def _popcount(x):
    """The number of bits set in x."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def sign_flip_draws(counts, seeds, out):
    """out[r, j] = 2·b_rj - m_j with b_rj ~ Bin(m_j, 1/2): the popcount of m_j random bits (numba's
    binomial sampler above BIG_FLIP). Exact.

    Each of the m_j sessions of group j has its paired difference's sign flipped with probability
    1/2 (A and B swapped): the randomization distribution under "A and B are exchangeable";
    the permuted column sums are out @ values.
    """
    big = False
    for j in range(counts.shape[0]):
        big = big or counts[j] > BIG_FLIP
    for r in range(seeds.shape[0]):
        state = mix64(np.uint64(seeds[r]))
        if big:
            np.random.seed(seeds[r])
        for j in range(counts.shape[0]):
            m = counts[j]
            if m > BIG_FLIP:  # numba's exact BTPE sampler: cheaper than m / 64 words
                out[r, j] = 2 * np.random.binomial(m, 0.5) - m
                continue
            ones = 0
            left = m
            while left > 0:
                state, bits = _next(state)
                if left < 64:
                    bits &= (np.uint64(1) << np.uint64(left)) - np.uint64(1)
                ones += _popcount(bits)
                left -= 64
            out[r, j] = 2 * ones - m


@njit(cache=True, nogil=True)
def rank_histogram(slot_hits, sizes, keep, kmax):
    """hist[t, r] = number of kept sessions with truth of type t whose item at 0-based rank r is a hit.

    slot = session · n_types + t; only ranks r < min(kmax, 63) are recorded.
    """
    n_sessions, n_types = sizes.shape
    ranks = min(kmax, 63)
    hist = np.zeros((n_types, kmax), np.int64)
    for s in range(n_sessions):
        if not keep[s]:
            continue
        for t in range(n_types):
            if sizes[s, t] == 0:
                continue
            bits = np.uint64(slot_hits[s * n_types + t])
            r = 0
            while bits != np.uint64(0) and r < ranks:
                if bits & np.uint64(1):
                    hist[t, r] += 1
                bits >>= np.uint64(1)
                r += 1
    return hist


@njit(cache=True, nogil=True)
def hit_counts(slot_hits, ranks):
    """Hits among the first `ranks` (≤ 63) items per slot: the popcount of the slot's hit mask below bit `ranks`."""
    out = np.empty(slot_hits.shape[0], np.int64)
    keep = (np.uint64(1) << np.uint64(min(ranks, 63))) - np.uint64(1)
    for i in range(slot_hits.shape[0]):
        out[i] = _popcount(np.uint64(slot_hits[i]) & keep)
    return out


@njit(cache=True, nogil=True)
def hash_strings(keys, starts, ends):
    """A 64-bit key per string keys[starts[i]:ends[i]] (FNV-1a over the bytes, then mix64), for splitting string ids."""
    out = np.empty(starts.shape[0], np.int64)
    for i in range(starts.shape[0]):
        h = np.uint64(0xCBF29CE484222325)
        for j in range(starts[i], ends[i]):
            h = (h ^ np.uint64(keys[j])) * np.uint64(0x100000001B3)
        out[i] = np.int64(mix64(h))
    return out
