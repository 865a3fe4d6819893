"""Ground truth: OTTO-shaped id truth, string-id truth, truth from data frames, the item table, the checks every
loaded array passes and the compiled cache.

Imports scorer.spec, scorer.prepare (the training log's reader), scorer.kernels and the base modules.
"""
