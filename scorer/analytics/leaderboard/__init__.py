"""`scorer leaderboard`: the board (board.py) from one joint, paired session bootstrap (joint_bootstrap.py, or streamed:
streamed_bootstrap.py), its standings and tiers (standings.py, multiple_testing.py), the split planner (mde.py), the Borda
count (borda.py) and the report (plot.py)."""
