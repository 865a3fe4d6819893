"""Ground truth: ids.py (the Truth of integer ids, its JSONL and table readers), strings.py (string ids), frames.py
(truth from data frames), items.py (the item table), checks.py (the checks every loaded array passes), and the
compiled form: npz.py (its file format), compiled.py (reading and checking it), cache.py (the private cache of
compiled copies) and load.py (load_truth: a truth file through that cache).

Imports scorer.spec, scorer.prepare (the training log's reader), scorer.kernels and the base modules.
"""
