"""After a score: leaderboard splits, bootstrap intervals, paired comparison, breakdowns, their text and plots;
`scorer audit`'s checks (audit.py) and `scorer verify` (verify.py).

Imports scorer.api and the layers below it.
"""
