"""What a competition is: its config (types, weights, K, id pattern, metrics, limits) and the metric registry (with how each metric forms its total: totals.py).

Imports only scorer.kernels and the base modules (errors).
"""
