"""After a score: leaderboard splits, bootstrap intervals, paired comparison, breakdowns, their text and plots.

Imports scorer.api and the layers below it.
"""
