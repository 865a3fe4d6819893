"""What a competition is: its config (types, weights, K, id pattern, metrics, limits) and the metric registry.

Imports only scorer.kernels and the base modules (errors).
"""
