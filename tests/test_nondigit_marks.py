"""The digit test of 64 bytes: the vector compare (load.nondigit_mask64) and the eight words (parse.chunk_marks) give
the same bits, and parse.nondigit_marks takes the words only where the 64 bytes pass the data's end; explain's
line_end (load.newline_mask64, then words) finds the first newline."""

import numpy as np
from numba import njit

from scorer.kernels.explain_rows import line_end
from scorer.kernels.load import load8, nondigit_mask64
from scorer.kernels.parse import chunk_marks, nondigit_marks

ALPHABET = np.frombuffer(b"0123456789 \n,_/:\x00\x7f\x80\xff" + bytes([47, 58]), np.uint8)  # '/' and ':' border the digits


@njit
def _both(buf, p):
    words = (load8(buf, p), load8(buf, p + 8), load8(buf, p + 16), load8(buf, p + 24),
             load8(buf, p + 32), load8(buf, p + 40), load8(buf, p + 48), load8(buf, p + 56))
    return nondigit_mask64(buf, p), chunk_marks(words)


@njit
def _marks(buf, p, n):
    return nondigit_marks(buf, p, n)


def _literal(data: bytes) -> int:
    return sum(1 << i for i, byte in enumerate(data) if not 48 <= byte <= 57)


def test_the_vector_compare_and_the_words_agree_with_the_definition():
    rng = np.random.default_rng(7)
    for _ in range(500):
        buf = rng.choice(ALPHABET, 160).astype(np.uint8)
        p = int(rng.integers(0, 80))
        vector, words = _both(buf, p)
        assert vector == words == _literal(buf[p : p + 64].tobytes()), p


def test_marks_near_the_end_read_no_further_than_the_slack():
    buf = np.frombuffer(b"12345 678\n" * 10 + bytes(8), np.uint8).copy()  # 100 bytes of data, then SLACK zeros
    n = 100
    for p in range(0, n):
        marks = _marks(buf, p, n)
        real = min(64, n - p + 1)  # the bits up to the byte at n are the data's (and the zero at n)
        assert marks & ((1 << real) - 1) == _literal(buf[p : p + real].tobytes()), p


@njit
def _line_end(buf, p, n):
    return line_end(buf, p, n)


def test_a_line_end_is_the_first_newline_at_or_after_p_or_the_data_end():
    """explain's skip of a row without truth: 64 bytes at a time while they end by n, then eight."""
    rng = np.random.default_rng(11)
    for _ in range(400):
        size = int(rng.integers(1, 300))
        newline = float(rng.choice([0.003, 0.02, 0.1]))  # lines longer than 64 bytes, and shorter
        data = rng.choice(np.frombuffer(b"0123456789 ,\n", np.uint8), size, p=[0.08] * 10 + [0.1, 0.1 - newline, newline]).astype(np.uint8)
        buf = np.concatenate([data, np.zeros(8, np.uint8)])  # SLACK zeros
        p = int(rng.integers(0, size))
        found = data[p:].tobytes().find(b"\n")
        assert _line_end(buf, p, size) == (p + found if found >= 0 else size), (p, size)
