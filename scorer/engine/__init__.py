"""Scoring passes: the submission reader, the kernels' Python side (file, string-id and frame passes), problems,
results, score receipts, checklists and the ahead-of-time kernel module.

Imports scorer.truth, scorer.spec, scorer.kernels and the base modules.
"""
