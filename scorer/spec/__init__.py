"""What a competition is: its config (types, weights, K, id pattern, metrics, limits) and the metric registry (with how each metric forms its total: totals.py).

Imports only scorer.kernels and the base modules (errors).
"""

MAX_SECONDS = 7 * 24 * 3600  # the longest time limit an option or a bundle may set: a week (platforms' are minutes to hours;
# a larger one overflows a timer). Here, not in competition.py: the CLI's parser reads it without loading the metrics.
MAX_CANDIDATE_K = 1_000_000  # the largest cut-off `scorer candidates` judges lists at (lists are a few hundred long; the
# kernels count ranks in int32, and a cut-off beyond any list says nothing more)
