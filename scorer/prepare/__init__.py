"""`scorer prepare`: raw session logs to a test split with labels (readers, the time-based holdout, writers).

Imports scorer.kernels and the base modules.
"""
